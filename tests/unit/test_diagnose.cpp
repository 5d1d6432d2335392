// Diagnoses on recorded data: hash-change classification, thrash, CUDA-only signals
// (block_dim duplication, LTO) from records, and the small-share stop rule.
#include <gtest/gtest.h>

#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/mechanisms.hpp"

#include "builders.hpp"
#include "xwarp/analysis/diagnose.hpp"
#include "xwarp/analysis/summarize.hpp"

using namespace xwarp;
using namespace xwarp::testing;

namespace
{
    module_load with_kernels(std::vector<kernel_entry> ks, nlohmann::json options = {{"block_dim", 1}})
    {
        module_load l = load("m", "h", 100);
        l.snapshot->kernels = std::move(ks);
        l.snapshot->options = shared_options(std::move(options));
        return l;
    }

    std::vector<std::string> mechanisms(const report& r)
    {
        std::vector<std::string> m;
        for (const auto& f : r.findings)
        {
            m.push_back(f.mechanism);
        }
        return m;
    }

    const finding* find(const report& r, const std::string& mech)
    {
        for (const auto& f : r.findings)
        {
            if (f.mechanism == mech)
            {
                return &f;
            }
        }
        return nullptr;
    }
}

// Warp names a module="unique" module after its kernel and the first 8 hex digits of its hash.
TEST(Classify, AUniqueModulesNameGivesItsKernel)
{
    EXPECT_EQ(unique_module_kernel("integrate_1a2b3c4d"), "integrate");
    EXPECT_EQ(unique_module_kernel("my_kernel_v2_00ff00ff"), "my_kernel_v2");
    EXPECT_EQ(unique_module_kernel("integrate_1A2B3C4D"), "");  // Warp writes lowercase
    EXPECT_EQ(unique_module_kernel("integrate_1a2b3c4"), "");
    EXPECT_EQ(unique_module_kernel("integrate_1a2b3c4g"), "");  // not hex
    EXPECT_EQ(unique_module_kernel("integrate-1a2b3c4d"), "");
    EXPECT_EQ(unique_module_kernel("_1a2b3c4d"), "");
    EXPECT_EQ(unique_module_kernel("__main__"), "");
}

TEST(Classify, EachKindOfHashChange)
{
    auto a = with_kernels({{"k1", "aa", "", false}});
    EXPECT_EQ(classify_hash_change(a, with_kernels({{"k1", "aa", "", false}, {"k2", "bb", "", false}})).kind,
              change_kind::kernel_set);
    EXPECT_EQ(classify_hash_change(a, with_kernels({{"k1", "aa", "", false}}, {{"block_dim", 1}, {"fast_math", true}})).kind,
              change_kind::option);
    EXPECT_EQ(classify_hash_change(a, with_kernels({{"k1", "a2", "", false}})).kind, change_kind::kernel_content);
    EXPECT_EQ(classify_hash_change(a, with_kernels({{"k1", "aa", "", false}, {"k1", "a3", "", false}})).kind,
              change_kind::kernel_instances_added);
    auto g = with_kernels({{"g", "g1", "a: float32", true}});
    auto g2 = with_kernels({{"g", "g1", "a: float32", true}, {"g", "g2", "a: float64", true}});
    auto change = classify_hash_change(g, g2);
    EXPECT_EQ(change.kind, change_kind::generic_instance);
    EXPECT_EQ(change.detail["signatures"][0], "a: float64");
    auto f1 = a;
    auto f2 = a;
    f1.snapshot->functions = {{"helper", "111"}};
    f2.snapshot->functions = {{"helper", "222"}};
    EXPECT_EQ(classify_hash_change(f1, f2).kind, change_kind::dependency);
    EXPECT_EQ(classify_hash_change(a, a).kind, change_kind::unknown);
    auto nolog = a;
    nolog.snapshot.reset();
    EXPECT_EQ(classify_hash_change(nolog, a).kind, change_kind::unknown);  // stays unknown: never guessed
}

TEST(Diagnose, LateKernelGetsCs1WithLocationAndSavings)
{
    report r;
    auto b1 = load("m", "aaa", 3000, load_status::compiled, 1, {"k1"});
    b1.first_in_thread = true;
    b1.pch_ms = 2500;
    b1.seq = 3;
    auto b2 = load("m", "bbb", 400, load_status::compiled, 1, {"k1", "k2"});
    b2.seq = 6;
    auto cold = pass(4000, {b1, b2});
    for (auto& l : cold.module_loads)
    {
        l.pid = 1;
    }
    cold.processes[0].dirty_events.push_back({"m", "kernel", {{"kernel", "k2"}}, "/app.py", 12, 5, 0});
    r.samples.push_back(make_sample(1, cold, pass(500, {})));
    analyze(r);
    const finding* f = find(r, "CS-1");
    ASSERT_NE(f, nullptr);
    ASSERT_TRUE(f->location);
    EXPECT_EQ(f->location->line, 12);
    // the forced build is the first one, without the header its thread keeps writing once
    EXPECT_DOUBLE_EQ(*f->savings_ms, 500.0);
    EXPECT_EQ(f->cause.value()["changes"][0]["detail"]["added"][0], "k2");
    // the cause's text is put together from its parts: exactly what dumping it whole writes
    EXPECT_EQ(f->cause.text(), f->cause.value().dump());
    EXPECT_EQ(f->cause.value()["changes"][0]["trigger"], "kernel");
    EXPECT_EQ(f->cause.value()["sequences"]["1"], f->cause.value()["sequence"]);
}

// A module churning at several block_dims: its cause lists each block_dim's sequence under the
// block_dim's name, and those names are written in the order a tree's dump writes them (as
// text: "1024" < "128" < "64"), not in block_dim order.
TEST(Diagnose, ChurnAtSeveralBlockDimsIsOneCauseWrittenAsItsTreeWouldBe)
{
    report r;
    std::vector<module_load> loads;
    for (int bd : {64, 128, 1024})
    {
        loads.push_back(load("m", "a" + std::to_string(bd), 900, load_status::compiled, bd, {"k1"}));
        loads.push_back(load("m", "b" + std::to_string(bd), 300, load_status::compiled, bd, {"k1", "k2"}));
    }
    for (std::size_t i = 0; i < loads.size(); ++i)
    {
        loads[i].seq = static_cast<std::int64_t>(i);
    }
    r.samples.push_back(make_sample(1, pass(4000, loads), pass(500, {})));
    analyze(r);
    const finding* f = find(r, "CS-1");
    ASSERT_NE(f, nullptr);
    const nlohmann::json cause = f->cause.value();
    EXPECT_EQ(f->cause.text(), cause.dump());
    EXPECT_EQ(cause["block_dims"], nlohmann::json({64, 128, 1024}));
    EXPECT_EQ(cause["sequences"]["1024"], nlohmann::json({"a1024", "b1024"}));
    EXPECT_EQ(cause["sequence"], cause["sequences"]["64"]);
    EXPECT_EQ(cause["changes"].size(), 3u);
}

// A pass's loads are put in each process's order of loading before hash moves are read: here
// two processes' loads are recorded interleaved, and process 1's out of order.
TEST(Diagnose, HashMovesFollowEachProcesssLoadOrderNotTheRecordsOrder)
{
    report r;
    auto a = load("m", "A", 900, load_status::compiled, 1, {"k1"});
    auto b = load("m", "B", 300, load_status::compiled, 1, {"k1", "k2"});
    auto c = load("m", "C", 900, load_status::compiled, 1, {"k1"});
    auto d = load("m", "D", 300, load_status::compiled, 1, {"k1", "k3"});
    a.seq = 1;
    b.seq = 2;
    c.pid = 2;
    c.seq = 1;
    d.pid = 2;
    d.seq = 2;
    r.samples.push_back(make_sample(1, pass(4000, {b, c, a, d}), pass(500, {})));
    analyze(r);
    std::vector<std::string> added;
    for (const auto& f : r.findings)
    {
        if (f.mechanism == "CS-1")
        {
            const nlohmann::json cause = f.cause.value();
            for (const auto& change : cause["changes"])
            {
                added.push_back(change["detail"]["added"][0].get<std::string>());
            }
        }
    }
    std::sort(added.begin(), added.end());
    // A -> B added k2 and C -> D added k3; read in the records' order, B -> A would add none
    EXPECT_EQ(added, (std::vector<std::string>{"k2", "k3"}));
}

TEST(Diagnose, HashReturningToAnEarlierValueIsThrash)
{
    report r;
    std::vector<module_load> loads = {load("m", "A", 1000, load_status::compiled, 1, {"k1"}),
                                      load("m", "B", 300, load_status::compiled, 1, {"k1", "k2"}),
                                      load("m", "A", 5, load_status::cached, 1, {"k1"})};
    for (std::size_t i = 0; i < loads.size(); ++i)
    {
        loads[i].seq = static_cast<std::int64_t>(i);
    }
    r.samples.push_back(make_sample(1, pass(2000, loads), pass(500, {})));
    analyze(r);
    const finding* t = find(r, "hash-thrash");
    ASSERT_NE(t, nullptr);
    EXPECT_NE(t->evidence.find("A -> B -> A"), std::string::npos) << t->evidence;
}

TEST(Diagnose, BlockDimSpreadWithEqualKernelSetsIsCs5FromLaunchCoverage)
{
    report r;
    auto v128 = load("solver", "s128", 1000, load_status::compiled, 128, {"a", "b"});
    auto v256 = load("solver", "s256", 1000, load_status::compiled, 256, {"a", "b"});
    v128.device = v256.device = "cuda:0";
    auto cold = pass(3000, {v128, v256}, 0);
    for (const auto& [k, bd] : std::vector<std::pair<std::string, int>>{{"a", 128}, {"b", 256}})
    {
        launch_record lr;
        lr.kernel = k;
        lr.module = "solver";
        lr.device = "cuda:0";
        lr.block_dim = bd;
        lr.dim = json_text(100);
        cold.launches.push_back(lr);
        cold.launch_total++;
    }
    r.samples.push_back(make_sample(1, cold, pass(500, {})));
    analyze(r);
    const finding* f = find(r, "CS-5");
    ASSERT_NE(f, nullptr);
    // each variant compiled one kernel its launches never used: half of each build
    EXPECT_DOUBLE_EQ(*f->savings_ms, 1000.0);
}

TEST(Diagnose, LtoArtifactsGiveAnAdvisoryNeverAnInstruction)
{
    report r;
    auto l = load("tiles", "t1", 5000);
    l.device = "cuda:0";
    l.lto = {{"abc", true, 1200.0}, {"def", false, 3.0}};
    r.samples.push_back(make_sample(1, pass(6000, {l}), pass(500, {})));
    analyze(r);
    const finding* f = find(r, "CS-7");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->kind, finding_kind::advisory);
    // a trade-off between build time and kernel speed: the time is named, no saving claimed
    EXPECT_FALSE(f->savings_ms);
    EXPECT_EQ(f->cause.value()["lto_ms"], 1200.0);
    EXPECT_EQ(f->cause.value()["lto_artifacts_built"], 1);
    EXPECT_NE(f->recommendation.find("never turn it off blindly"), std::string::npos);
}

TEST(Diagnose, SmallCompileShareStopsEverythingElse)
{
    report r;
    r.samples.push_back(make_sample(1,
                                    pass(60000, {load("m", "a", 1000), load("m", "b", 900, load_status::compiled, 1, {"k", "k2"})}),
                                    pass(59000, {})));
    analyze(r);
    EXPECT_EQ(mechanisms(r), std::vector<std::string>{"compile-small-share"});
}

TEST(Diagnose, FindingsAreSortedByMsAtStake)
{
    report r;
    auto a1 = load("a", "a1", 3000, load_status::compiled, 1, {"k"});
    auto a2 = load("a", "a2", 200, load_status::compiled, 1, {"k", "k2"});
    auto b1 = load("b", "b1", 900, load_status::compiled, 1, {"j"});
    auto b2 = load("b", "b2", 900, load_status::compiled, 1, {"j", "j2"});
    int seq = 0;
    for (auto* l : {&a1, &a2, &b1, &b2})
    {
        l->seq = seq++;
    }
    r.samples.push_back(make_sample(1, pass(6000, {a1, a2, b1, b2}), pass(500, {})));
    analyze(r);
    ASSERT_GE(r.findings.size(), 2u);
    EXPECT_EQ(r.findings[0].module, "a");  // 3000 ms at stake before 900
    EXPECT_EQ(r.findings[1].module, "b");
}

// Findings are put in order in place, cycle by cycle: here detection order a, b, c, d becomes
// b, d, c, a (a cycle of three and one left where it was), equal stakes in detection order.
TEST(Diagnose, FindingsOfEqualStakeKeepTheirDetectionOrder)
{
    report r;
    std::vector<module_load> loads;
    int seq = 0;
    for (const auto& [module, ms] : std::vector<std::pair<std::string, double>>{{"a", 100}, {"b", 900}, {"c", 500}, {"d", 900}})
    {
        loads.push_back(load(module, module + "1", ms, load_status::compiled, 1, {"k"}));
        loads.push_back(load(module, module + "2", 50, load_status::compiled, 1, {"k", "k2"}));
        loads[loads.size() - 2].seq = seq++;
        loads.back().seq = seq++;
    }
    r.samples.push_back(make_sample(1, pass(60000, loads), pass(500, {})));
    analyze(r);
    std::vector<std::string> churned;
    for (const auto& f : r.findings)
    {
        if (f.mechanism == "CS-1")
        {
            churned.push_back(f.module);
        }
    }
    EXPECT_EQ(churned, (std::vector<std::string>{"b", "d", "c", "a"}));
    for (std::size_t i = 1; i < r.findings.size(); ++i)
    {
        EXPECT_GE(r.findings[i - 1].savings_ms.value_or(-1.0), r.findings[i].savings_ms.value_or(-1.0)) << i;
    }
}

// Shaped on the H200 run of tests/gpu/programs/ptx_module.py (Warp 1.19.0 built with CUDA 13.4,
// driver 13.0): cold build 2976 ms, cached PTX load 1156 ms in the warm pass, as CUBIN 1.4 ms.
TEST(Diagnose, CachedPtxLoadThatStillCompilesIsNamedWithWhoCompiles)
{
    auto make = [](double warm_ms, const char* suffix)
    {
        report r;
        auto cold = load("__main__", "p1", 2976);
        cold.device = "cuda:0";
        cold.output_suffix = suffix;
        auto warm = load("__main__", "p1", warm_ms, load_status::cached);
        warm.device = "cuda:0";
        run_result w = pass(3470, {warm});
        w.processes[0].runtime = {{"toolkit_version", {13, 4}}, {"driver_version", {13, 0}}};
        config_set_event set;
        set.key = "cuda_output";
        set.new_value = "ptx";
        set.file = "/p/app.py";
        set.line = 7;
        w.processes[0].config_sets.push_back(set);
        r.samples.push_back(make_sample(1, pass(5630, {cold}), w));
        analyze(r);
        return r;
    };
    report ptx = make(1156, ".ptx");
    const finding* f = find(ptx, "ptx-load-compile");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->cause.value()["compiled_by"], "warp");
    EXPECT_DOUBLE_EQ(*f->savings_ms, 1156);
    ASSERT_TRUE(f->location.has_value());
    EXPECT_EQ(f->location->line, 7);
    EXPECT_NE(f->evidence.find("CUDA 13.0"), std::string::npos) << f->evidence;
    EXPECT_NE(f->evidence.find("(13.4)"), std::string::npos) << f->evidence;
    // the slow warm load shrinks compile elapsed but is not a parallel build
    EXPECT_LT(*ptx.result.overlap_factor.median, 1.15);

    EXPECT_EQ(find(make(1.4, ".ptx"), "ptx-load-compile"), nullptr);   // the compute cache did its job
    EXPECT_EQ(find(make(1156, ".cubin"), "ptx-load-compile"), nullptr); // not PTX: not this mechanism
}

// The statement that asked for PTX can be a module option; the call's args come from a report
// file, so a malformed one is skipped rather than trusted.
TEST(Diagnose, PtxLoadCompilePointsAtTheModuleOptionThatAskedForPtx)
{
    auto make = [](nlohmann::json args)
    {
        report r;
        auto cold = load("__main__", "p1", 2976);
        cold.device = "cuda:0";
        cold.output_suffix = ".ptx";
        auto warm = load("__main__", "p1", 1156, load_status::cached);
        warm.device = "cuda:0";
        run_result w = pass(3470, {warm});
        api_call_event malformed;
        malformed.function = "set_module_options";
        malformed.args = "not an object";
        malformed.file = "/p/app.py";
        malformed.line = 3;
        api_call_event call;
        call.function = "set_module_options";
        call.args = std::move(args);
        call.file = "/p/app.py";
        call.line = 9;
        w.processes[0].calls = {malformed, call};
        r.samples.push_back(make_sample(1, pass(5630, {cold}), w));
        analyze(r);
        return r;
    };
    report asked = make({{"module", "__main__"}, {"options", {{"cuda_output", "ptx"}}}});
    const finding* f = find(asked, "ptx-load-compile");
    ASSERT_NE(f, nullptr);
    ASSERT_TRUE(f->location.has_value());
    EXPECT_EQ(f->location->line, 9);

    // another option in the same call is not the cause
    report other = make({{"module", "__main__"}, {"options", {{"fast_math", true}}}});
    f = find(other, "ptx-load-compile");
    ASSERT_NE(f, nullptr);
    EXPECT_FALSE(f->location.has_value());
}

// Merging four one-kernel builds saves three per-build fixed costs, taken from each sample's
// own smallest build: a machine slow in one sample is slow for all of that sample's builds,
// and the minimum over every sample would drift down as samples are added.
TEST(Diagnose, GranularityEstimateTakesEachSamplesSmallestBuild)
{
    report r;
    int index = 0;
    for (double ms : {100.0, 200.0, 300.0})
    {
        std::vector<module_load> loads;
        for (const char* k : {"blur", "sharpen", "clamp", "invert"})
        {
            loads.push_back(load(std::string(k) + "_0123abcd", "h", ms + (k[0] == 'b' ? 0.0 : 10.0),
                                 load_status::compiled, 1, {k}));
        }
        r.samples.push_back(make_sample(++index, pass(2000, loads), pass(500, {})));
    }
    analyze(r);
    const finding* f = find(r, "CS-9");
    ASSERT_NE(f, nullptr);
    // 3 x 0.75 x (100, 200, 300) -> median 450; the minimum over all samples would give 225
    EXPECT_DOUBLE_EQ(*f->savings_ms, 450.0);
    EXPECT_DOUBLE_EQ(f->cause.value()["estimate"]["upper_bound_ms"].get<double>(), 600.0);
}

// CS-11 is a note: a module with a large generated source is listed as considered and declined,
// with the measured reason, and never becomes a finding.
TEST(Diagnose, LargeGeneratedSourceIsANoteNeverARecommendation)
{
    report r;
    auto big = load("big", "b1", 3000);
    big.source_bytes = 300 * 1024;
    auto small = load("small", "s1", 500);
    small.source_bytes = 40 * 1024;
    r.samples.push_back(make_sample(1, pass(4000, {big, small}), pass(400, {})));
    analyze(r);
    for (const auto& f : r.findings)
    {
        EXPECT_NE(f.mechanism, "CS-11");
    }
    int notes = 0;
    for (const auto& d : r.declined)
    {
        if (d.mechanism == "CS-11")
        {
            ++notes;
            EXPECT_EQ(d.module, "big");
            EXPECT_NE(d.reason.find("measured not to shorten the build"), std::string::npos) << d.reason;
            EXPECT_TRUE(d.recommendation.empty());
        }
    }
    EXPECT_EQ(notes, 1);
    ASSERT_NE(find_mechanism("CS-11"), nullptr);
    EXPECT_EQ(find_mechanism("CS-11")->kind, finding_kind::note);
}
