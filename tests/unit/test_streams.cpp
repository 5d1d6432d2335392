// Every detector of the mechanism registry on real shim streams: runs recorded on real Warp by
// tests/fixtures/record_streams.py (CPU here; the CUDA ones on the lent H200), read back by the
// runner's own pass assembly and analysed. Program sources: tests/python/targets/ and
// tests/gpu/programs/.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/mechanisms.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/render/html.hpp"
#include "xwarp/render/text.hpp"
#include "xwarp/engine/runner/runner.hpp"

using namespace xwarp;

namespace
{
    constexpr const char* warp_version = "1.19.0";

    report stream(const std::string& name)
    {
        const std::string dir = std::string(XWARP_FIXTURES_DIR) + "/streams/" + name + "-warp" + warp_version;
        report r = load_recorded_run(dir);
        analyze(r);
        return r;
    }

    std::vector<const finding*> all(const report& r, const std::string& mechanism)
    {
        std::vector<const finding*> out;
        for (const auto& f : r.findings)
        {
            if (f.mechanism == mechanism)
            {
                out.push_back(&f);
            }
        }
        return out;
    }

    const finding& one(const report& r, const std::string& mechanism)
    {
        auto v = all(r, mechanism);
        if (v.size() != 1)
        {
            std::string got;
            for (const auto& f : r.findings)
            {
                got += f.mechanism + " ";
            }
            throw std::runtime_error("expected one " + mechanism + " finding, got: " + got);
        }
        return *v[0];
    }

    const declined_lever* declined(const report& r, const std::string& mechanism)
    {
        for (const auto& d : r.declined)
        {
            if (d.mechanism == mechanism)
            {
                return &d;
            }
        }
        return nullptr;
    }

    bool ends_with(const std::string& s, const std::string& tail)
    {
        return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
    }

    // The location whose description contains `what`, or nullptr.
    const cause_location* located(const finding& f, const std::string& what)
    {
        for (const auto& l : f.locations)
        {
            if (l.what.find(what) != std::string::npos)
            {
                return &l;
            }
        }
        return nullptr;
    }

    const std::set<std::string> churn = {"CS-1", "CS-2", "CS-3", "CS-5", "CS-6", "CS-9", "dependency-change",
                                         "unexplained-rebuild", "hash-thrash", "same-hash-rebuilt", "preload-block-dim"};
}

TEST(Streams, RecordedRunReadsBackWithItsSamplesAndEnvironment)
{
    report r = stream("cs1_late");
    EXPECT_EQ(r.samples.size(), 2u);
    EXPECT_EQ(r.env.warp_version, warp_version);
    ASSERT_TRUE(r.result.valid);
    EXPECT_EQ(r.result.identities.size(), 2u);
    EXPECT_EQ(r.result.load_source, figure_source::hook);
}

TEST(Streams, Cs1KernelDefinedAfterLoad)
{
    report r = stream("cs1_late");
    const finding& f = one(r, "CS-1");
    EXPECT_EQ(f.module, "__main__");
    const auto change = f.cause.value()["changes"][0];
    EXPECT_EQ(change["kind"], "kernel-set-change");
    EXPECT_EQ(change["detail"]["added"], nlohmann::json::array({"stage_b"}));
    ASSERT_TRUE(f.location);
    EXPECT_TRUE(ends_with(f.location->file, "cs1_late.py"));
    EXPECT_GT(*f.savings_ms, 0.0);
    EXPECT_EQ(f.lever, "");  // not replayable: said in the registry
}

TEST(Streams, Cs1FactoryPointsAtTheFactoryAndItsCaller)
{
    report r = stream("cs1_factory");
    const finding& f = one(r, "CS-1");
    const nlohmann::json f_cause = f.cause.value();
    for (const auto& c : f_cause["changes"])
    {
        EXPECT_EQ(c["kind"], "kernel-instances-added");
    }
    ASSERT_NE(located(f, "the factory called here"), nullptr);
    EXPECT_TRUE(ends_with(located(f, "the factory called here")->file, "cs1_factory.py"));
}

TEST(Streams, Cs3OptionChangedAfterLoad)
{
    report r = stream("cs3_option");
    const finding& f = one(r, "CS-3");
    EXPECT_EQ(f.cause.value()["changes"][0]["detail"]["options"]["fast_math"]["new"], true);
    EXPECT_EQ(f.lever, "options-at-creation");
    EXPECT_NE(f.recommendation.find("fast_math"), std::string::npos);
}

TEST(Streams, Cs6GenericInstanceAfterLoad)
{
    report r = stream("cs6_generic");
    const finding& f = one(r, "CS-6");
    EXPECT_EQ(f.cause.value()["changes"][0]["kind"], "generic-instance");
    EXPECT_EQ(f.cause.value()["changes"][0]["detail"]["kernel"], "relax");
    EXPECT_TRUE(all(r, "CS-1").empty());
}

TEST(Streams, Cs9UniqueModules)
{
    report r = stream("cs9_unique");
    const finding& f = one(r, "CS-9");
    EXPECT_EQ(f.cause.value()["modules"].size(), 4u);
    EXPECT_GT(*f.savings_ms, 0.0);
    EXPECT_FALSE(f.locations.empty());  // each wp.kernel(module="unique") is located
}

TEST(Streams, Cs9ThroughAFactoryDefaultPointsAtTheDefaultAndTheCallers)
{
    report r = stream("unique_factory");
    const finding& f = one(r, "CS-9");
    EXPECT_EQ(f.cause.value()["modules"].size(), 4u);
    const cause_location* def = located(f, "is the default of make_filter");
    ASSERT_NE(def, nullptr);
    EXPECT_TRUE(ends_with(def->file, "unique_factory.py"));
    EXPECT_EQ(def->line, 6);  // def make_filter(weight, module="unique"):
    ASSERT_TRUE(f.location);
    EXPECT_EQ(f.location->line, 6);  // the default is the primary place
    int callers = 0;
    std::set<int> lines;
    for (const auto& l : f.locations)
    {
        if (l.what.find("make_filter called here") != std::string::npos)
        {
            ++callers;
            lines.insert(l.line);
        }
    }
    EXPECT_EQ(lines, (std::set<int>{15, 16}));  // the list comprehension and the append
}

TEST(Streams, Cs4ManySmallModulesAtOneBlockDim)
{
    report r = stream("cs4_granular");
    const finding& f = one(r, "CS-4");
    auto modules = f.cause.value()["modules"].get<std::vector<std::string>>();
    std::sort(modules.begin(), modules.end());
    EXPECT_EQ(modules, (std::vector<std::string>{"mod_blur", "mod_clamp", "mod_invert", "mod_sharpen"}));
    EXPECT_EQ(f.lever, "merge-modules");
}

TEST(Streams, GenericFamilyAcrossBlockDimsIsCs6AndCs5NotCs1OrCs4)
{
    report r = stream("generic_block_dims");
    // the late instances are CS-6, never "kernel added"
    EXPECT_TRUE(all(r, "CS-1").empty());
    const finding& g = one(r, "CS-6");
    std::set<std::string> instantiated;
    const nlohmann::json g_cause = g.cause.value();
    for (const auto& c : g_cause["changes"])
    {
        EXPECT_EQ(c["kind"], "generic-instance");
        for (const auto& i : c["detail"]["instances"])
        {
            instantiated.insert(i["kernel"].get<std::string>());
        }
    }
    EXPECT_EQ(instantiated, (std::set<std::string>{"fill", "scale"}));
    // judged on the definitions the module reaches: CS-5, with scale never launched at 128
    const finding& spread = one(r, "CS-5");
    EXPECT_EQ(spread.cause.value()["block_dims"], nlohmann::json::array({64, 128}));
    EXPECT_EQ(spread.cause.value()["coverage"]["128"]["never_launched_here"], nlohmann::json::array({"scale"}));
    EXPECT_GT(*spread.savings_ms, 0.0);
    // on the CPU each block_dim wrote a precompiled header of its own: named apart, the split keeps it
    EXPECT_NE(spread.evidence.find("more went into precompiled headers, which Warp writes per block_dim"),
              std::string::npos) << spread.evidence;
    EXPECT_NE(spread.recommendation.str().find("measure pch-off (CS-12)"), std::string::npos);
    // the four small modules launch at two block_dims: merging saves nothing, and it says so
    EXPECT_TRUE(all(r, "CS-4").empty());
    const declined_lever* d = declined(r, "CS-4");
    ASSERT_NE(d, nullptr);
    EXPECT_NE(d->reason.find("block_dim"), std::string::npos);
    // no finding names a module twice
    for (const auto& f : r.findings)
    {
        if (f.cause.value().contains("modules") && f.cause.value()["modules"].is_array())
        {
            auto m = f.cause.value()["modules"].get<std::vector<std::string>>();
            EXPECT_EQ(std::set<std::string>(m.begin(), m.end()).size(), m.size()) << f.mechanism;
        }
    }
}

TEST(Streams, Cs2EveryCauseHasItsOwnLocation)
{
    report r = stream("cache_many_causes");
    const finding& f = one(r, "CS-2");
    EXPECT_EQ(f.lever, "keep-cache");
    const cause_location* disable = located(f, "CUDA_CACHE_DISABLE");
    const cause_location* dir = located(f, "kernel_cache_dir");
    const cause_location* off = located(f, "cache_kernels = False");
    const cause_location* clear = located(f, "wp.clear_kernel_cache()");
    ASSERT_NE(disable, nullptr);
    ASSERT_NE(dir, nullptr);
    ASSERT_NE(off, nullptr);
    ASSERT_NE(clear, nullptr);
    EXPECT_EQ(disable->line, 19);
    EXPECT_EQ(dir->line, 22);
    EXPECT_EQ(off->line, 23);
    EXPECT_EQ(clear->line, 25);
    EXPECT_NE(dir->what.find("a new directory each run"), std::string::npos) << dir->what;
    ASSERT_TRUE(f.location);
    EXPECT_EQ(f.location->line, f.locations.front().line);
}

TEST(Streams, OptionSetAfterImportNeverArrives)
{
    report r = stream("option_late");
    const finding& f = one(r, "option-not-arrived");
    EXPECT_EQ(f.module, "lib_heavy");
    EXPECT_EQ(f.cause.value()["option"], "enable_backward");
    EXPECT_FALSE(f.savings_ms);
    ASSERT_NE(located(f, "created here"), nullptr);
    EXPECT_TRUE(ends_with(located(f, "created here")->file, "lib_heavy.py"));
}

TEST(Streams, PreloadAtABlockDimNoLaunchUses)
{
    report r = stream("preload_cpu");
    const finding& f = one(r, "preload-block-dim");
    EXPECT_EQ(f.cause.value()["launched_block_dims"], nlohmann::json::array({64}));
    EXPECT_EQ(f.cause.value()["built_block_dim"], 1);
    EXPECT_TRUE(all(r, "CS-5").empty());  // the preload's variant is not a block_dim spread
}

TEST(Streams, DependencyChangeWhenACalleeIsRedefined)
{
    report r = stream("func_redefined");
    const finding& f = one(r, "dependency-change");
    EXPECT_EQ(f.cause.value()["changes"][0]["detail"]["functions"], nlohmann::json::array({"weight"}));
    EXPECT_TRUE(all(r, "CS-1").empty());
}

TEST(Streams, AFactoryWhoseClosuresReplaceEachOtherIsCs1NotADependencyChange)
{
    report r = stream("factory_reassigned");
    const finding& f = one(r, "CS-1");
    const nlohmann::json f_cause = f.cause.value();
    for (const auto& c : f_cause["changes"])
    {
        EXPECT_EQ(c["kind"], "kernel-content-change");
    }
    EXPECT_TRUE(all(r, "dependency-change").empty());
}

TEST(Streams, OptionSwitchedBackIsThrashAfterCs3)
{
    report r = stream("option_thrash");
    one(r, "CS-3");
    const finding& t = one(r, "hash-thrash");
    const auto seq = t.cause.value()["sequence"].get<std::vector<std::string>>();
    ASSERT_EQ(seq.size(), 3u);
    EXPECT_EQ(seq[0], seq[2]);
}

TEST(Streams, SameIdentityCompiledTwiceAfterAClear)
{
    report r = stream("same_hash_rebuilt");
    const finding& f = one(r, "same-hash-rebuilt");
    EXPECT_EQ(f.cause.value()["builds"], 2);
    ASSERT_NE(located(f, "clear_kernel_cache"), nullptr);
}

TEST(Streams, SmallCompileShareEndsTheDiagnosis)
{
    report r = stream("compile_small_share");
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_EQ(r.findings[0].mechanism, "compile-small-share");
}

TEST(Streams, LogOnlyChurnIsUnexplainedAndHasNoOverlapFactor)
{
    report r = stream("cs1_late_log_only");
    EXPECT_EQ(r.result.load_source, figure_source::log);
    one(r, "unexplained-rebuild");
    EXPECT_FALSE(r.result.overlap_factor.median);
    EXPECT_NE(r.result.overlap_note.find("log"), std::string::npos);
}

TEST(Streams, TwoProcessesOneAfterTheOtherDoNotOverlap)
{
    report r = stream("two_processes");
    ASSERT_GE(r.samples[0].cold.processes.size(), 2u);
    EXPECT_EQ(std::count_if(r.result.flags.begin(), r.result.flags.end(), [](const flag& f) { return f.id == flag_id::builds_overlapped; }), 0);
    if (r.result.overlap_factor.median)
    {
        EXPECT_LT(*r.result.overlap_factor.median, 1.05);
    }
}

TEST(Streams, BackwardAdvisoryOnlyWhereNothingDifferentiates)
{
    report forward = stream("cs1_late");
    const finding& f = one(forward, "CS-10");
    EXPECT_EQ(f.kind, finding_kind::advisory);
    EXPECT_EQ(f.lever, "backward-off");
    report grad = stream("grad");
    EXPECT_TRUE(all(grad, "CS-10").empty());
}

TEST(Streams, HeaderAdvisoryAndSerialBuildsDeclinedOnTwoCpus)
{
    one(stream("cache_many_causes"), "CS-12");  // one build in its thread, after writing the header
    report r = stream("unique_factory");
    EXPECT_TRUE(all(r, "CS-12").empty());     // four builds shared that thread's header
    // four modules built one at a time on a 2-CPU machine: the header each extra worker thread
    // writes costs more than overlapping saves; declined with the numbers, never silent
    EXPECT_TRUE(all(r, "CS-13").empty());
    const declined_lever* d = declined(r, "CS-13");
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->lever, "parallel-preload");
    EXPECT_EQ(d->numbers["cpus"], 2);
    EXPECT_LE(d->numbers["ceiling_ms"].get<double>(), 0.0);
}

TEST(Streams, CleanProgramHasNoChurn)
{
    report r = stream("clean");
    for (const auto& f : r.findings)
    {
        EXPECT_EQ(churn.count(f.mechanism), 0u) << f.mechanism;
    }
}

TEST(Streams, CpuJitRaceFromWarpsOwnMessage)
{
    // Warp 1.16 and older print this after a raced parallel CPU load; 1.19 no longer races, so
    // the real clean stream gets the line its stderr would have carried.
    report r = load_recorded_run(std::string(XWARP_FIXTURES_DIR) + "/streams/clean-warp" + warp_version);
    r.samples[0].warm->stderr_tail += "Warp error: Failed to find module: wp___main___1\n";
    analyze(r);
    one(r, "CS-8");
}

// CUDA streams, recorded on an NVIDIA H200 (driver 13.0, Warp 1.19.0 built with CUDA 13.4).

TEST(Streams, GpuLtoClearedBetweenTwoModulesIsRebuiltAndPointsAtTheClear)
{
    report r = stream("gpu_lto_cleared");
    const finding& f = one(r, "lto-rebuilt");
    EXPECT_EQ(f.cause.value()["artifacts_rebuilt"], 3);
    ASSERT_NE(located(f, "clear_lto_cache"), nullptr);
    EXPECT_TRUE(ends_with(located(f, "clear_lto_cache")->file, "tile_gemm_cleared.py"));
    EXPECT_EQ(located(f, "clear_lto_cache")->line, 28);
    EXPECT_GT(*f.savings_ms, 1000.0);
    // CS-7 counts distinct artifacts, as the summary does, and claims no saving
    const finding& lto = one(r, "CS-7");
    EXPECT_FALSE(lto.savings_ms);
    EXPECT_EQ(lto.cause.value()["lto_artifacts_built"], 3);
    EXPECT_EQ(lto.cause.value()["lto_builds"], 6);
    EXPECT_DOUBLE_EQ(*r.result.lto_artifacts.median, 3.0);
}

// A CUDA build's NVRTC compile is what a kept CUDA cache serves (NVRTC 12.9+ keeps it there): the
// finding says how much of each module's build it was, and that the machine's NVRTC caches.
TEST(Streams, GpuBuildsOnAnEmptyCudaCacheSayWhatNvrtcsCacheWouldServe)
{
    report r = load_recorded_run(std::string(XWARP_FIXTURES_DIR) + "/streams/gpu_serial-warp1.19.0");
    r.env.nvrtc_cache = nvrtc_cache_state::caches;
    analyze(r);
    const finding& f = one(r, "cuda-cache-empty");
    EXPECT_EQ(f.lever, "keep-cuda-cache");
    EXPECT_EQ(f.kind, finding_kind::advisory);
    EXPECT_EQ(f.cause.value()["cuda_builds"], 6);
    const double share = f.cause.value()["nvrtc_share"];
    EXPECT_GT(share, 0.5);  // six small modules: their build is mostly NVRTC's compile
    EXPECT_LE(share, 1.0);
    EXPECT_EQ(f.cause.value()["modules"].size(), 6u);
    EXPECT_NE(f.evidence.find("This NVRTC keeps its compilations in CUDA_CACHE_PATH"), std::string::npos) << f.evidence;
    EXPECT_DOUBLE_EQ(*f.savings_ms, f.cause.value()["nvrtc_ms"].get<double>());
    // where this NVRTC keeps nothing (no driver to cache in, or one before 12.9) there is no finding
    for (const auto state : {nvrtc_cache_state::no_driver, nvrtc_cache_state::not_supported})
    {
        report none = load_recorded_run(std::string(XWARP_FIXTURES_DIR) + "/streams/gpu_serial-warp1.19.0");
        none.env.nvrtc_cache = state;
        analyze(none);
        EXPECT_TRUE(std::none_of(none.findings.begin(), none.findings.end(),
                                 [](const finding& g) { return g.mechanism == "cuda-cache-empty"; }));
    }
    // the same builds in two processes side by side (pytest-xdist workers): the estimate is on the
    // wall the replay judges, at most the process with the most NVRTC time, the sum beside it
    report two = load_recorded_run(std::string(XWARP_FIXTURES_DIR) + "/streams/gpu_serial-warp1.19.0");
    two.env.nvrtc_cache = nvrtc_cache_state::caches;
    auto& loads = two.samples.front().cold.module_loads;
    for (std::size_t i = 0; i < loads.size(); ++i)
    {
        loads[i].pid = i % 2 == 0 ? 101 : 202;
    }
    analyze(two);
    const finding& parallel = one(two, "cuda-cache-empty");
    const double sum = parallel.cause.value()["nvrtc_ms"];
    const double bound = parallel.cause.value()["nvrtc_wall_bound_ms"];
    EXPECT_EQ(parallel.cause.value()["processes"], 2);
    EXPECT_LT(bound, sum);
    EXPECT_GE(bound, sum / 2.0);
    EXPECT_DOUBLE_EQ(*parallel.savings_ms, bound);
    EXPECT_NE(parallel.evidence.find("2 processes compiled side by side: on the wall a kept CUDA cache saves at most"),
              std::string::npos)
        << parallel.evidence;
    EXPECT_DOUBLE_EQ(*f.savings_ms, f.cause.value()["nvrtc_wall_bound_ms"].get<double>());  // one process: the sum
    // a CPU program compiles nothing through NVRTC
    report cpu = stream("cs1_late");
    EXPECT_TRUE(std::none_of(cpu.findings.begin(), cpu.findings.end(), [](const finding& g) { return g.mechanism == "cuda-cache-empty"; }));
}

TEST(Streams, GpuLtoArtifactsOnAnEmptyLtoCacheNameTheLeverThatKeepsIt)
{
    report r = stream("gpu_lto_cleared");
    const finding& f = one(r, "lto-cache-empty");
    EXPECT_EQ(f.lever, "keep-lto-cache");
    EXPECT_GE(f.cause.value()["lto_artifacts_built"].get<int>(), 3);
    EXPECT_GT(*f.savings_ms, 1000.0);
}

TEST(Streams, GpuBlockDimSpreadIsCs5WithLaunchCoverage)
{
    report r = stream("gpu_block_dims");
    const finding& f = one(r, "CS-5");
    EXPECT_EQ(f.device, "cuda:0");
    EXPECT_EQ(f.cause.value()["coverage"]["128"]["never_launched_here"], nlohmann::json::array({"shift"}));
    EXPECT_EQ(f.cause.value()["coverage"]["256"]["never_launched_here"], nlohmann::json::array({"scale"}));
    EXPECT_GT(*f.savings_ms, 0.0);
    EXPECT_EQ(f.evidence.find("precompiled headers"), std::string::npos);  // NVRTC keeps none per block_dim here
}

TEST(Streams, GpuPtxModuleCompilesAtEveryLoad)
{
    report r = stream("gpu_ptx");
    const finding& f = one(r, "ptx-load-compile");
    EXPECT_EQ(f.cause.value()["compiled_by"], "warp");  // the driver (13.0) is older than Warp's toolkit (13.4)
    ASSERT_TRUE(f.location);
    EXPECT_TRUE(ends_with(f.location->file, "ptx_module.py"));
}

TEST(Streams, GpuSerialModulesGetAParallelPreloadCeiling)
{
    report r = stream("gpu_serial");
    const finding& f = one(r, "CS-13");
    EXPECT_EQ(f.cause.value()["modules"].size(), 6u);
    EXPECT_EQ(f.cause.value()["workers"], 4);  // 16 CPUs there
    ASSERT_TRUE(r.result.overlap_factor.median);
    EXPECT_LT(*r.result.overlap_factor.median, 1.1);
    EXPECT_GT(*f.savings_ms, 0.0);
}

TEST(Streams, UnrolledLoopsInflateTheSourceAndGetANoteNotAFinding)
{
    report r = stream("unroll_heavy");
    const declined_lever* d = declined(r, "CS-11");
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->module, "__main__");
    EXPECT_GT(d->numbers["source_bytes"].get<double>(), 256.0 * 1024.0);
    EXPECT_TRUE(all(r, "CS-11").empty());
}

TEST(Streams, ASuiteUnderXdistIsAttributedPerTestAndItsWorkersRepeatIsAFinding)
{
    // pytest -n 2 on tests/python/targets/suite: each worker's session fixture built the shared
    // module at the same moment; two parametrised modules with one hash
    report r = stream("suite_xdist");
    const auto& tests = r.result.tests;
    ASSERT_FALSE(tests.empty());
    int builds = 0;
    for (const auto& t : tests)
    {
        EXPECT_FALSE(t.test.empty()) << "a build outside any test";
        builds += t.builds;
    }
    int compiled = 0;
    for (const auto& l : r.samples[0].cold.module_loads)
    {
        compiled += l.status == load_status::compiled ? 1 : 0;
    }
    EXPECT_EQ(builds, compiled);  // every build counted once, for one test
    EXPECT_EQ(r.result.workers.size(), 2u);
    const auto repeated = all(r, "repeated-across-workers");
    ASSERT_EQ(repeated.size(), 1u);
    EXPECT_EQ(repeated[0]->module.str(), "shared_kernels");
    EXPECT_TRUE(all(r, "same-hash-rebuilt").empty());
    const auto named = all(r, "same-code-other-name");
    ASSERT_EQ(named.size(), 1u);
    EXPECT_NE(named[0]->module.str().find("offset_small"), std::string::npos);
    // every finding names the tests that built its modules: here, the two that paid each copy
    EXPECT_EQ(repeated[0]->tests.size(), 2u);
    EXPECT_EQ(named[0]->tests.size(), 2u);
    // the shared module's two kernels, launched by four tests, built whole at the first launch
    const auto shared = all(r, "many-tests-one-module");
    ASSERT_EQ(shared.size(), 1u);
    EXPECT_EQ(shared[0]->module.str(), "shared_kernels");
    const auto cause = shared[0]->cause.value();
    EXPECT_EQ(cause["kernels"], 2);
    EXPECT_GE(cause["tests"].get<int>(), 3);
    ASSERT_TRUE(shared[0]->savings_ms.has_value());
    EXPECT_LT(*shared[0]->savings_ms, cause["build_ms"].get<double>());  // an upper bound below the build itself
}

TEST(Streams, EveryMechanismOfTheRegistryIsExercisedHere)
{
    // The detectors these tests reach, CPU and CUDA streams together.
    std::set<std::string> reached;
    for (const char* name : {"cs1_late", "cs1_factory", "cs3_option", "cs6_generic", "cs9_unique", "cs4_granular",
                             "generic_block_dims", "cache_many_causes", "unique_factory", "option_late", "preload_cpu",
                             "func_redefined", "option_thrash", "same_hash_rebuilt", "compile_small_share",
                             "cs1_late_log_only", "unroll_heavy", "gpu_block_dims", "gpu_lto_cleared", "gpu_ptx",
                             "gpu_serial", "suite_xdist"})
    {
        report r = stream(name);
        for (const auto& f : r.findings)
        {
            reached.insert(f.mechanism);
        }
        for (const auto& d : r.declined)
        {
            reached.insert(d.mechanism);
        }
    }
    reached.insert("CS-8");  // CpuJitRaceFromWarpsOwnMessage
    std::vector<std::string> missing;
    for (const auto& m : mechanism_registry())
    {
        if (!reached.count(m.id))
        {
            missing.push_back(m.id);
        }
    }
    EXPECT_TRUE(missing.empty()) << [&] {
        std::string s;
        for (const auto& m : missing)
        {
            s += m + " ";
        }
        return "no recorded stream reaches: " + s;
    }();
}

TEST(Streams, TheIdentityMapSaysWhyEachHashFollowedTheLast)
{
    // One cause of each kind the lessons teach: a late kernel, a factory, an option, a generic
    // instance; each churn group carries one move per hash after the first.
    const std::vector<std::pair<std::string, std::string>> cases = {{"cs1_late", "kernel stage_b added"},
                                                                    {"cs1_factory", "another closure of make_stage"},
                                                                    {"cs3_option", "option fast_math: false -> true"},
                                                                    {"cs6_generic", "generic instance of relax for"}};
    for (const auto& [name, words] : cases)
    {
        report r = stream(name);
        const rebuild_group* churned = nullptr;
        for (const auto& g : r.result.rebuilt)
        {
            if (g.kind == rebuild_kind::hash_churn)
            {
                churned = &g;
            }
        }
        ASSERT_NE(churned, nullptr) << name;
        ASSERT_EQ(churned->moves.size(), churned->hashes.size() - 1) << name;
        EXPECT_NE(churned->moves[0].find(words), std::string::npos) << name << ": " << churned->moves[0];
        const std::string page = render_html(r, {});
        const auto map = page.find("data-xwarp=\"identity-map\"");
        ASSERT_NE(map, std::string::npos) << name;
        EXPECT_NE(page.find(html_escape(churned->moves[0]).substr(0, 20), map), std::string::npos) << name;
        EXPECT_NE(render_text(r).find(churned->moves[0]), std::string::npos) << name;
    }
    // a module loaded once is one box, and no arrow
    report clean = stream("clean");
    const std::string page = render_html(clean, {});
    const auto map = page.find("data-xwarp=\"identity-map\"");
    ASSERT_NE(map, std::string::npos);
    EXPECT_EQ(page.find("marker-end", map), std::string::npos);
}
