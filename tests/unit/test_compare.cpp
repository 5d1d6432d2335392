// compare on known data: every verdict, the noise band, the rank test, renames, receipts.
#include <functional>

#include <gtest/gtest.h>

#include "builders.hpp"
#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/compare.hpp"
#include "xwarp/jobs/usecases/exit_codes.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/engine/runner/runner.hpp"

using namespace xwarp;
using namespace xwarp::testing;

namespace
{
    // One report: per sample, cold module work `ms` spread over the given identities.
    report make(const std::vector<double>& module_ms,
                const std::vector<std::string>& hashes,
                const std::string& kernel = "k",
                int dim = 10)
    {
        report r;
        r.command = {"python", "app.py"};
        r.env.warp_version = "1.19.0";
        int i = 0;
        for (double ms : module_ms)
        {
            std::vector<module_load> cold;
            std::vector<module_load> warm;
            for (const auto& h : hashes)
            {
                cold.push_back(load("m", h, ms / static_cast<double>(hashes.size())));
                warm.push_back(load("m", h, 2, load_status::cached));
            }
            auto c = pass(ms + 1000, cold);
            c.launches[0].kernel = kernel;
            c.launches[0].dim = json_text(dim);
            auto w = pass(1000, warm);
            r.samples.push_back(make_sample(++i, c, w));
        }
        return r;
    }

    // A report whose every sample sets wp.config.enable_backward = False (at /p/app.py:4)
    // after module "m" copied it: the option never reaches the module.
    report option_that_never_arrives()
    {
        report r = make({3000, 3000, 3000}, {"a"});
        for (auto& s : r.samples)
        {
            config_set_event ev;
            ev.key = "enable_backward";
            ev.old_value = true;
            ev.new_value = false;
            ev.file = "/p/app.py";
            ev.line = 4;
            s.cold.processes[0].config_sets.push_back(ev);
        }
        return r;
    }
}

TEST(Compare, ImprovedBeyondBandAndSignificant)
{
    auto before = make({3000, 3010, 2990, 3020, 2980}, {"a", "b"});
    auto after = make({2000, 2010, 1990, 2020, 1980}, {"b"});
    auto c = compare_reports(before, after, "before.json", "after.json");
    EXPECT_EQ(c.verdict, xwarp::verdict::improved);
    EXPECT_EQ(exit_code_for(c.verdict), 0);
    EXPECT_EQ(c.workload.status, workload_status::same);
    EXPECT_FALSE(c.same_structure);
    const auto& k = c.clocks[0];
    EXPECT_EQ(k.clock, xwarp::clock::cold_module_work);
    EXPECT_DOUBLE_EQ(*k.delta_ms, -1000.0);
    EXPECT_DOUBLE_EQ(*k.band_ms, 30.0);  // max(1% of 3000 = 30, 2 x MAD 10 = 20)
    ASSERT_TRUE(k.p_value);
    EXPECT_NEAR(*k.p_value, 0.007936507936507936, 1e-12);
    EXPECT_EQ(k.test, "mann-whitney-exact");
    EXPECT_EQ(c.judged_on.by, xwarp::clock::cold_module_work);
    // receipts: module m lost hash a
    ASSERT_EQ(c.receipts.size(), 1u);
    EXPECT_TRUE(c.receipts[0].changed);
    EXPECT_EQ(c.receipts[0].before, (std::vector<shared_text>{"a", "b"}));
    EXPECT_EQ(c.receipts[0].after, (std::vector<shared_text>{"b"}));
}

TEST(Compare, AVerdictOnFewerThanThreeSamplesASideIsIndicative)
{
    // two samples a side that do not overlap are credited (no rank test below 5), and said as
    // indicative; three a side are not
    auto before2 = make({3000, 3010}, {"a", "b"});
    auto after2 = make({2000, 2010}, {"b"});
    const auto two = compare_reports(before2, after2, "before", "after");
    EXPECT_EQ(two.verdict, xwarp::verdict::improved);
    EXPECT_TRUE(two.indicative);
    EXPECT_TRUE(std::any_of(two.reasons.begin(), two.reasons.end(), [](const std::string& r)
                            { return r.rfind("indicative: fewer than 3 samples a side (2 before, 2 after)", 0) == 0; }));
    auto before3 = make({3000, 3010, 2990}, {"a", "b"});
    auto after3 = make({2000, 2010, 1990}, {"b"});
    const auto three = compare_reports(before3, after3, "before", "after");
    EXPECT_EQ(three.verdict, xwarp::verdict::improved);
    EXPECT_FALSE(three.indicative);
}

TEST(Compare, RegressedIsExitOne)
{
    auto before = make({2000, 2010, 1990, 2020, 1980}, {"b"});
    auto after = make({3000, 3010, 2990, 3020, 2980}, {"a", "b"});
    auto c = compare_reports(before, after, "b", "a");
    EXPECT_EQ(c.verdict, xwarp::verdict::regressed);
    EXPECT_EQ(exit_code_for(c.verdict), 1);
}

TEST(Compare, SameStructureInsideTheBandIsInconclusiveOnCompileElapsed)
{
    auto before = make({3000, 3100, 2900}, {"a"});
    auto after = make({3050, 2950, 3000}, {"a"});
    auto c = compare_reports(before, after, "b", "a");
    EXPECT_TRUE(c.same_structure);
    EXPECT_EQ(c.judged_on.by, xwarp::clock::compile_elapsed);
    EXPECT_EQ(c.verdict, xwarp::verdict::inconclusive);
    EXPECT_EQ(exit_code_for(c.verdict), 4);
    EXPECT_EQ(c.clocks[1].outcome, clock_outcome::within_noise);
    EXPECT_EQ(c.clocks[1].test, "none (fewer than 5 samples a side)");
}

TEST(Compare, InsideABandWidenedByOneDisturbedSampleSaysMoreSamplesCanNarrowIt)
{
    auto says = [](const comparison& c, const std::string& text)
    {
        for (const auto& r : c.reasons)
        {
            if (r.find(text) != std::string::npos)
            {
                return true;
            }
        }
        return false;
    };
    // two samples a side, one of them disturbed: the band (2 x MAD = 700 ms) swallows a 600 ms gain
    auto before = make({2000, 2700}, {"a", "b"});
    auto after = make({1750, 1750}, {"b"});
    auto c = compare_reports(before, after, "b", "a");
    ASSERT_EQ(c.verdict, xwarp::verdict::inconclusive);
    EXPECT_DOUBLE_EQ(*c.clocks[0].band_ms, 700.0);
    EXPECT_TRUE(says(c, "twice the spread of only 2 samples a side"));
    EXPECT_FALSE(says(c, "more samples cannot credit"));
    // five a side: the spread is measured well, and more samples cannot move the band
    before = make({2000, 2700, 2000, 2700, 2350}, {"a", "b"});
    after = make({2300, 2000, 2700, 2350, 2300}, {"b"});
    c = compare_reports(before, after, "b", "a");
    ASSERT_EQ(c.verdict, xwarp::verdict::inconclusive);
    EXPECT_TRUE(says(c, "more samples cannot credit"));
    // two a side, but the band is the 1% floor: more samples cannot shrink it either
    before = make({3000, 3002}, {"a"});
    after = make({2990, 2992}, {"a"});
    c = compare_reports(before, after, "b", "a");
    ASSERT_EQ(c.verdict, xwarp::verdict::inconclusive);
    EXPECT_TRUE(says(c, "more samples cannot credit"));
}

TEST(Compare, BeyondBandButNotSignificantSaysHowManySamples)
{
    // before: median 1000, MAD 5 -> band 10; after median 960 but ranks interleave
    auto before = make({1000, 1010, 990, 1005, 995}, {"a", "b"});
    auto after = make({950, 1020, 960, 1015, 955}, {"b"});
    auto c = compare_reports(before, after, "b", "a");
    const auto& k = c.clocks[0];
    EXPECT_EQ(k.outcome, clock_outcome::not_significant);
    ASSERT_TRUE(k.p_value);
    EXPECT_GT(*k.p_value, 0.05);
    ASSERT_TRUE(k.samples_needed);
    EXPECT_GT(*k.samples_needed, 5);
    EXPECT_EQ(c.verdict, xwarp::verdict::inconclusive);
    bool mentions = false;
    for (const auto& r : c.reasons)
    {
        mentions = mentions || r.find("samples a side would settle it") != std::string::npos;
    }
    EXPECT_TRUE(mentions);
}

TEST(Compare, ChangedWorkloadIsInvalidWithFirstDivergence)
{
    auto before = make({3000, 3000, 3000}, {"a"}, "k", 10);
    auto after = make({1000, 1000, 1000}, {"b"}, "k", 30);
    auto c = compare_reports(before, after, "b", "a");
    EXPECT_EQ(c.verdict, xwarp::verdict::invalid);
    EXPECT_EQ(exit_code_for(c.verdict), 2);
    EXPECT_EQ(c.workload.status, workload_status::changed);
    ASSERT_TRUE(c.workload.first_divergence);
    EXPECT_EQ(c.workload.first_divergence->index, 0);
    EXPECT_EQ(c.workload.first_divergence->before->dim.value(), 10);
    EXPECT_EQ(c.workload.first_divergence->after->dim.value(), 30);
}

TEST(Compare, AChangedLaunchSaysWhatChangedInIt)
{
    // the CS-5 exercise's refusal: the edit moved a launch to another block_dim
    auto before = make({3000, 3000, 3000}, {"a"}, "k", 10);
    auto after = make({1000, 1000, 1000}, {"b"}, "k", 30);
    for (auto& s : before.samples)
    {
        s.cold.launches[0].block_dim = 64;
    }
    for (auto& s : after.samples)
    {
        s.cold.launches[0].block_dim = 1;
    }
    auto c = compare_reports(before, after, "b", "a");
    EXPECT_EQ(c.verdict, xwarp::verdict::invalid);
    EXPECT_NE(c.workload.reason.find("the launch sequences part at launch #1"), std::string::npos) << c.workload.reason;
    EXPECT_NE(c.workload.reason.find(": k launched with block_dim 64 -> 1, dim 10 -> 30"), std::string::npos)
        << c.workload.reason;
}

TEST(Compare, MergedLaunchesShowMovedCounts)
{
    auto before = make({3000, 3000, 3000}, {"a"});
    auto after = make({1000, 1000, 1000}, {"b"});
    for (auto& s : after.samples)
    {
        s.cold.launches[0].count = 1;  // three launches became one
        s.cold.launch_total = 1;
    }
    auto c = compare_reports(before, after, "b", "a");
    EXPECT_EQ(c.verdict, xwarp::verdict::invalid);
    ASSERT_EQ(c.workload.moved_counts.size(), 1u);
    EXPECT_EQ(c.workload.moved_counts[0].before, 2);
    EXPECT_EQ(c.workload.moved_counts[0].after, 1);
    EXPECT_EQ(c.workload.first_divergence->index, 1);
}

TEST(Compare, RenamedKernelIsAllowedAndListed)
{
    auto before = make({3000, 3010, 2990}, {"a", "b"}, "main__locals__k");
    auto after = make({2000, 2010, 1990}, {"b"}, "k");
    auto c = compare_reports(before, after, "b", "a");
    EXPECT_EQ(c.workload.status, workload_status::same);
    ASSERT_EQ(c.workload.renames.size(), 1u);
    EXPECT_EQ(c.workload.renames[0].before, "main__locals__k");
    EXPECT_EQ(c.workload.renames[0].after, "k");
    EXPECT_EQ(c.verdict, xwarp::verdict::improved);  // 3 samples: the band alone decides
}

TEST(Compare, NoLaunchesIsUnverifiedNeverChanged)
{
    auto before = make({3000, 3000, 3000}, {"a", "b"});
    auto after = make({1000, 1000, 1000}, {"b"});
    for (auto* r : {&before, &after})
    {
        for (auto& s : r->samples)
        {
            s.cold.launches.clear();
            s.cold.launch_total = 0;
        }
    }
    auto c = compare_reports(before, after, "b", "a");
    EXPECT_EQ(c.workload.status, workload_status::unverified);
    EXPECT_EQ(c.verdict, xwarp::verdict::unverified);
    EXPECT_EQ(exit_code_for(c.verdict), 3);
}

TEST(Compare, OtherWarpVersionIsNotComparable)
{
    auto before = make({3000, 3000, 3000}, {"a"});
    auto after = make({1000, 1000, 1000}, {"b"});
    after.env.warp_version = "1.18.0";
    auto c = compare_reports(before, after, "b", "a");
    EXPECT_EQ(c.verdict, xwarp::verdict::not_comparable);
    EXPECT_EQ(exit_code_for(c.verdict), 5);
}

TEST(Compare, DifferentCommandIsNotComparableButAnEditedScriptPathIsAllowed)
{
    auto before = make({3000, 3000, 3000}, {"a"});
    auto after = make({2000, 2000, 2000}, {"b"});
    after.command = {"python", "other.py", "--fast"};
    EXPECT_EQ(compare_reports(before, after, "b", "a").verdict, xwarp::verdict::not_comparable);
    after.command = {"python", "app_fixed.py"};
    auto c = compare_reports(before, after, "b", "a");
    EXPECT_NE(c.verdict, xwarp::verdict::not_comparable);
    ASSERT_FALSE(c.notes.empty());
    EXPECT_NE(c.notes[0].find("app.py -> app_fixed.py"), std::string::npos);
}

TEST(Compare, FailedSamplesMakeItInvalidAndAFailedRunIsAnInputError)
{
    auto before = make({3000, 3000, 3000}, {"a"});
    auto after = make({1000, 1000, 1000}, {"b"});
    after.samples[1].cold.exit_code = 1;
    after.samples[1].warm.reset();
    auto c = compare_reports(before, after, "b", "a");
    EXPECT_EQ(c.verdict, xwarp::verdict::invalid);
    for (auto& s : after.samples)
    {
        s.cold.exit_code = 1;
        s.warm.reset();
    }
    EXPECT_THROW(compare_reports(before, after, "b", "a.json"), compare_input_error);
}

TEST(Compare, OptionThatNeverArrivedIsCalledOut)
{
    auto before = make({3000, 3000, 3000}, {"a"});
    auto after = option_that_never_arrives();
    auto c = compare_reports(before, after, "b", "a");
    ASSERT_EQ(c.option_checks.size(), 1u);
    EXPECT_EQ(c.option_checks[0].option, "enable_backward");
    EXPECT_EQ(c.option_checks[0].module, "m");
    EXPECT_EQ(c.option_checks[0].set_at->line, 4);
    EXPECT_FALSE(c.receipts[0].changed);
}

TEST(Compare, ACacheThrownAwayIsJudgedOnTheWarmPass)
{
    auto before = make({3000, 3000, 3000}, {"a"});
    auto after = make({3000, 3000, 3000}, {"a"});
    for (auto& s : before.samples)
    {
        s.warm->module_loads = {load("m", "a", 2900)};  // the warm pass rebuilt
        s.warm->wall_ms = s.cold.wall_ms;
    }
    auto c = compare_reports(before, after, "b", "a");
    ASSERT_EQ(c.clocks.size(), 3u);
    EXPECT_EQ(c.clocks[2].clock, xwarp::clock::warm_module_work);
    EXPECT_EQ(c.judged_on.by, xwarp::clock::warm_module_work);
    EXPECT_EQ(c.verdict, xwarp::verdict::improved);
    // compile elapsed alone would have called the fix a regression: the warm pass got faster
    EXPECT_EQ(c.clocks[1].outcome, clock_outcome::regressed);
}

TEST(Compare, UntilSettledStopsOnlyWhereMoreSamplesCannotChangeTheVerdict)
{
    // Beyond the band with 2 samples a side: credited, but no rank test yet: not settled.
    auto b2 = make({3000, 3010}, {"a", "b"});
    auto a2 = make({2000, 2010}, {"b"});
    const auto two = compare_reports(b2, a2, "b", "a");
    ASSERT_EQ(two.verdict, xwarp::verdict::improved);
    EXPECT_EQ(settled_because(two, 10), "");

    // Five a side and significant: the rank test decided.
    auto b5 = make({3000, 3010, 2990, 3020, 2980}, {"a", "b"});
    auto a5 = make({2000, 2010, 1990, 2020, 1980}, {"b"});
    const auto five = compare_reports(b5, a5, "b", "a");
    EXPECT_EQ(settled_because(five, 10).rfind("the rank test decided (p = ", 0), 0u) << settled_because(five, 10);

    // The same program twice: inside the band, and the band does not shrink, once 5 a side.
    auto same_b = make({3000, 3010, 2990}, {"a"});
    auto same_a = make({3005, 2995, 3000}, {"a"});
    EXPECT_EQ(settled_because(compare_reports(same_b, same_a, "b", "a"), 10), "");
    auto same_b5 = make({3000, 3010, 2990, 3020, 2980}, {"a"});
    auto same_a5 = make({3005, 2995, 3000, 3015, 2985}, {"a"});
    EXPECT_NE(settled_because(compare_reports(same_b5, same_a5, "b", "a"), 10).find("inside the noise band"),
              std::string::npos);

    // Beyond the band but not significant: settles within the maximum, or says it cannot.
    comparison c;
    c.verdict = xwarp::verdict::inconclusive;
    c.judged_on.by = xwarp::clock::cold_module_work;
    clock_judgement k;
    k.clock = xwarp::clock::cold_module_work;
    k.outcome = clock_outcome::not_significant;
    k.n_before = k.n_after = 5;
    k.samples_needed = 8;
    c.clocks.push_back(k);
    EXPECT_EQ(settled_because(c, 10), "");
    c.clocks[0].samples_needed = 40;
    EXPECT_EQ(settled_because(c, 10), "about 40 samples a side would settle it, more than 10");

    // A changed workload: more samples cannot help.
    c.verdict = xwarp::verdict::invalid;
    EXPECT_EQ(settled_because(c, 10), "the verdict is invalid: more samples cannot change it");
}

// Each part of a launch's signature counts, compared as its JSON text: the dims (a float
// dim of 2.0 is not the integer 2), the device, the dtypes, the block_dim, the adjoint flag.
TEST(Compare, EveryPartOfALaunchSignatureCounts)
{
    const auto with = [](const std::function<void(launch_record&)>& edit) {
        auto r = make({1000, 1000, 1000}, {"b"});
        for (auto& s : r.samples)
        {
            s.cold.launches[0].dim = json_text(nlohmann::json::array({2, 3}));
            edit(s.cold.launches[0]);
        }
        return r;
    };
    const auto status = [&](const std::function<void(launch_record&)>& edit) {
        auto before = with([](launch_record&) {});
        auto after = with(edit);
        return compare_reports(before, after, "b", "a").workload.status;
    };
    EXPECT_EQ(status([](launch_record&) {}), workload_status::same);
    EXPECT_EQ(status([](launch_record& l) { l.dim = json_text(nlohmann::json::array({2, 3})); }), workload_status::same);
    EXPECT_EQ(status([](launch_record& l) { l.dim = json_text(nlohmann::json::array({2.0, 3})); }), workload_status::changed);
    EXPECT_EQ(status([](launch_record& l) { l.dim = json_text(nlohmann::json::array({3, 2})); }), workload_status::changed);
    EXPECT_EQ(status([](launch_record& l) { l.device = "cuda:1"; }), workload_status::changed);
    EXPECT_EQ(status([](launch_record& l)
                     {
                         std::vector<shared_text> types = l.dtypes.items();
                         types.push_back("float64");
                         l.dtypes = shared_text_list(std::move(types));
                     }),
              workload_status::changed);
    EXPECT_EQ(status([](launch_record& l) { l.block_dim += 1; }), workload_status::changed);
    EXPECT_EQ(status([](launch_record& l) { l.adjoint = !l.adjoint; }), workload_status::changed);
}

// compare keeps the first side of a comparison only as far as a comparison reads it while it
// reads the second (keep_what_compare_reads), and with the history off it makes only the
// figures (summarize_figures' figures scope: no findings, no timeline, no tables by identity): the verdict, receipts, option checks
// and every other part are the same as from the whole analysed reports, on recorded runs of
// several mechanisms and on an option that never arrived.
TEST(Compare, ASideKeptOnlyAsFarAsCompareReadsGivesTheSameComparison)
{
    const auto text = [](const comparison& c)
    {
        nlohmann::json j = comparison_to_json(c);
        j.erase("created_utc");
        return j.dump();
    };
    std::vector<std::tuple<std::string, report, report>> pairs;  // as read, not analysed
    for (const auto& [b, a] : std::vector<std::pair<std::string, std::string>>{
             {"cs1_late", "clean"}, {"cs3_option", "option_late"}, {"clean", "cs4_granular"}, {"cs6_generic", "cs6_generic"}})
    {
        const auto recorded = [](const std::string& name)
        { return load_recorded_run(std::string(XWARP_FIXTURES_DIR) + "/streams/" + name + "-warp1.19.0"); };
        pairs.emplace_back(b + " vs " + a, recorded(b), recorded(a));
    }
    // and an option set in the after run that never reached its module
    pairs.emplace_back("an option that never arrived", make({3000, 3000, 3000}, {"a"}), option_that_never_arrives());
    for (const auto& [name, read_before, read_after] : pairs)
    {
        report before = read_before;
        report after = read_after;
        analyze(before);
        analyze(after);
        const std::string whole = text(compare_analyzed(before, after, "b", "a"));
        report kept_before = before;
        report kept_after = after;
        keep_what_compare_reads(kept_before);
        keep_what_compare_reads(kept_after);
        // given back, not only emptied (`v = {}` keeps a vector's buffer)
        EXPECT_EQ(kept_before.findings.capacity(), 0u) << name;
        EXPECT_EQ(kept_before.result.identities.capacity(), 0u) << name;
        EXPECT_EQ(kept_before.result.rebuilt.capacity(), 0u) << name;
        EXPECT_EQ(kept_before.result.timeline.spans.capacity(), 0u) << name;
        for (const auto& smp : kept_before.samples)
        {
            EXPECT_TRUE(!smp.warm || smp.warm->module_loads.capacity() + smp.warm->launches.capacity() == 0) << name;
            for (const auto& l : smp.cold.module_loads)
            {
                EXPECT_EQ(l.phases.capacity() + (l.snapshot ? l.snapshot->kernels.capacity() : 0), 0u) << name;
            }
        }
        EXPECT_EQ(kept_before.result.cold_module_ms.median, before.result.cold_module_ms.median);
        EXPECT_EQ(text(compare_analyzed(kept_before, kept_after, "b", "a")), whole) << name;
        report figures_before = read_before;
        report figures_after = read_after;
        summarize_figures(figures_before, summary_scope::figures);
        summarize_figures(figures_after, summary_scope::figures);
        EXPECT_TRUE(figures_before.result.identities.empty() && figures_before.result.rebuilt.empty()) << name;
        keep_what_compare_reads(figures_before);
        EXPECT_EQ(text(compare_analyzed(figures_before, figures_after, "b", "a")), whole) << name;
        if (name == "an option that never arrived")
        {
            EXPECT_EQ(compare_analyzed(before, after, "b", "a").option_checks.size(), 1u);
        }
        else if (name == "cs1_late vs clean")
        {
            EXPECT_FALSE(before.findings.empty());
        }
    }
}

namespace
{
    // Every load of a report recorded its thread's CPU time: the build took `cpu_of(ms)` of CPU
    // whatever its wall was.
    void with_cpu(report& r, const std::function<double(double)>& cpu_of)
    {
        for (auto& s : r.samples)
        {
            for (auto* pass : {&s.cold, &*s.warm})
            {
                for (auto& l : pass->module_loads)
                {
                    l.cpu_ms = cpu_of(l.work_ms());
                }
            }
        }
    }

    // Each pass ran beside other processes that took `others_ms` of CPU on a 2-CPU machine.
    void with_load(report& r, double others_ms)
    {
        for (auto& s : r.samples)
        {
            s.cold.load = machine_load{2, others_ms, 1000.0};
            s.warm->load = machine_load{2, 0.0, 500.0};
        }
    }
}

TEST(Compare, BuildWorkIsJudgedOnCpuTimeWhereBothSidesRecordedItAndTheWallBesideIt)
{
    // Warp's timers say the fix regressed (a busy machine stretched its builds); the loading
    // threads' CPU time says it built less: the verdict is the CPU clock's.
    auto before = make({3000, 3010, 2990}, {"a", "b"});
    auto after = make({6000, 6010, 5990}, {"b"});
    with_cpu(before, [](double ms) { return ms; });
    with_cpu(after, [](double ms) { return ms / 3.0; });  // 2000 of CPU, the rest waiting for a CPU
    auto c = compare_reports(before, after, "b", "a");
    EXPECT_EQ(c.judged_on.by, xwarp::clock::cold_module_cpu);
    EXPECT_EQ(c.verdict, xwarp::verdict::improved);
    ASSERT_GE(c.clocks.size(), 2u);
    EXPECT_EQ(c.clocks[0].clock, xwarp::clock::cold_module_cpu);
    EXPECT_EQ(c.clocks[1].clock, xwarp::clock::cold_module_work);
    EXPECT_EQ(c.clocks[1].outcome, clock_outcome::regressed);
    EXPECT_NE(c.judged_on.sentence().find("CPU time"), std::string::npos) << c.judged_on.sentence();
    // one side without CPU times: Warp's timers decide, as before
    auto plain = make({3000, 3010, 2990}, {"a", "b"});
    auto c2 = compare_reports(plain, after, "b", "a");
    EXPECT_EQ(c2.judged_on.by, xwarp::clock::cold_module_work);
}

TEST(Compare, AProgramComparedWithItselfIsNeverImprovedOrRegressedOnItsBuildWork)
{
    // The same two identities built once each in every sample of both sides; the after side's
    // loading threads took 20% more CPU (a busier machine slows a CPU too) and Warp's timers
    // 15% more: beyond both bands, but the compiler had the same work. Without the gate both
    // clocks said "regressed".
    auto before = make({3000, 3010, 2990}, {"a", "b"});
    auto after = make({3450, 3460, 3440}, {"a", "b"});
    for (auto& s : after.samples)
    {
        s.cold.wall_ms -= 450.0;  // the wall the job waited on did not move
    }
    with_cpu(before, [](double ms) { return ms; });
    with_cpu(after, [](double ms) { return ms * 1.2 / 1.15; });
    auto c = compare_reports(before, after, "b", "a");
    EXPECT_NE(c.verdict, xwarp::verdict::improved);
    EXPECT_NE(c.verdict, xwarp::verdict::regressed);
    for (const auto& k : c.clocks)
    {
        if (k.clock == xwarp::clock::cold_module_cpu || k.clock == xwarp::clock::cold_module_work)
        {
            EXPECT_EQ(k.outcome, clock_outcome::same_builds) << static_cast<int>(k.clock);
        }
    }
    // another build in one sample: not the same work, judged on its times as before
    auto other = make({3450, 3460, 3440}, {"a", "b"});
    other.samples[0].cold.module_loads.push_back(load("m", "c", 10));
    with_cpu(other, [](double ms) { return ms * 1.2 / 1.15; });
    auto c2 = compare_reports(before, other, "b", "a");
    EXPECT_TRUE(std::any_of(c2.clocks.begin(), c2.clocks.end(), [](const clock_judgement& k)
                            { return k.clock == xwarp::clock::cold_module_cpu && k.outcome == clock_outcome::regressed; }));
    // a change that fills a cache keeps the identities and changes the work (NVRTC's cache
    // kept): judged on its times
    auto kept = compare_reports(before, after, "b", "a", deciding_clock::by_structure, {cache_kind::cuda});
    EXPECT_TRUE(std::any_of(kept.clocks.begin(), kept.clocks.end(), [](const clock_judgement& k)
                            { return k.clock == xwarp::clock::cold_module_cpu && k.outcome == clock_outcome::regressed; }));
}

TEST(Compare, AWallClockChangeTheMachinesLoadExplainsIsInconclusiveMachineBusy)
{
    // Same structure: judged on compile elapsed. The after side ran beside 4 s more of other
    // processes' CPU per sample (2 s per CPU), as much as it got slower: the load, not the change.
    auto before = make({3000, 3010, 2990}, {"a"});
    auto after = make({3000, 3010, 2990}, {"a"});
    for (auto& s : after.samples)
    {
        s.cold.wall_ms += 1800.0;
    }
    with_load(before, 0.0);
    with_load(after, 4000.0);
    auto c = compare_reports(before, after, "b", "a");
    EXPECT_EQ(c.judged_on.by, xwarp::clock::compile_elapsed);
    EXPECT_EQ(c.verdict, xwarp::verdict::inconclusive);
    EXPECT_EQ(c.clocks[1].outcome, clock_outcome::machine_busy);
    ASSERT_TRUE(c.clocks[1].load_delta_ms);
    EXPECT_DOUBLE_EQ(*c.clocks[1].load_delta_ms, 2000.0);
    EXPECT_TRUE(std::any_of(c.reasons.begin(), c.reasons.end(), [](const std::string& r)
                            { return r.rfind("the machine was busy", 0) == 0; }));
    // the same slowdown under the same load on both sides is the change's: regressed
    with_load(before, 4000.0);
    auto same_load = compare_reports(before, after, "b", "a");
    EXPECT_EQ(same_load.verdict, xwarp::verdict::regressed);
    // a change larger than the load's share is the change's too
    for (auto& s : after.samples)
    {
        s.cold.wall_ms += 3000.0;
    }
    with_load(before, 0.0);
    auto beyond = compare_reports(before, after, "b", "a");
    EXPECT_EQ(beyond.verdict, xwarp::verdict::regressed);
}

TEST(Compare, RunsWhoseColdPassesStartedFromDifferentCachesAreNotComparable)
{
    auto before = make({3000, 3010, 2990}, {"a", "b"});
    auto after = make({2000, 2010, 1990}, {"b"});
    const auto caches = [](report& r, std::int64_t cuda_bytes)
    {
        for (auto& s : r.samples)
        {
            cache_state warp{cache_kind::warp_kernels, 0, 0, 6, 40000};
            cache_state cuda{cache_kind::cuda, cuda_bytes > 0 ? 3 : 0, cuda_bytes, 3, cuda_bytes + 1000};
            s.cold.caches = {warp, cuda};
        }
    };
    caches(before, 0);
    caches(after, 5400000);
    auto c = compare_reports(before, after, "b", "a");
    EXPECT_EQ(c.verdict, xwarp::verdict::not_comparable);
    ASSERT_FALSE(c.reasons.empty());
    EXPECT_NE(c.reasons[0].find("cuda-cache was empty before and holding"), std::string::npos) << c.reasons[0];
    // a change that fills that cache on purpose (a lever that replays a kept cache) is judged
    auto lever = compare_reports(before, after, "b", "a", deciding_clock::by_structure, {cache_kind::cuda});
    EXPECT_EQ(lever.verdict, xwarp::verdict::improved);
    // reports that recorded no caches (older ones) are judged as before
    auto old_before = make({3000, 3010, 2990}, {"a", "b"});
    EXPECT_EQ(compare_reports(old_before, after, "b", "a").verdict, xwarp::verdict::improved);
}

TEST(Compare, AModuleThatFailsToBuildOnBothSidesInTheSamePassingTestIsJudgedPast)
{
    auto before = make({3000, 3010, 2990}, {"a", "b"});
    auto after = make({2000, 2010, 1990}, {"b"});
    const auto failing = [](report& r, const std::string& test)
    {
        for (auto& s : r.samples)
        {
            module_load bad = load("expects_failure", "dead", 5);
            bad.status = load_status::error;
            bad.test = test;
            s.cold.module_loads.push_back(bad);
        }
    };
    failing(before, "tests/test_x.py::test_bad_kernel_raises");
    failing(after, "tests/test_x.py::test_bad_kernel_raises");
    auto c = compare_reports(before, after, "b", "a");
    EXPECT_EQ(c.verdict, xwarp::verdict::improved);
    EXPECT_TRUE(std::any_of(c.notes.begin(), c.notes.end(), [](const std::string& n)
                            { return n.find("module expects_failure failed to build on both sides in tests/test_x.py") == 0; }));
    // on one side only, or outside any test: a failed build, invalid
    auto clean = make({2000, 2010, 1990}, {"b"});
    EXPECT_EQ(compare_reports(before, clean, "b", "a").verdict, xwarp::verdict::invalid);
    auto before2 = make({3000, 3010, 2990}, {"a", "b"});
    auto after2 = make({2000, 2010, 1990}, {"b"});
    failing(before2, "");
    failing(after2, "");
    EXPECT_EQ(compare_reports(before2, after2, "b", "a").verdict, xwarp::verdict::invalid);
}

TEST(Compare, ASideWhoseProgramPointedWarpAtAKeptCacheIsNotComparedWithAColdOne)
{
    // c01 pointing wp.config.kernel_cache_dir at a kept folder: the probe's private caches stay
    // empty, builds 4 -> 0, and the report read "inconclusive"; it is another experiment
    report before = make({3000, 3000, 3000}, {"a"});
    report after = make({3000, 3000, 3000}, {"a"});
    for (auto& s : after.samples)
    {
        s.cold.caches_outside = {"/home/me/kept-cache"};
    }
    comparison c = compare_reports(before, after, "cold", "kept");
    EXPECT_EQ(c.verdict, verdict::not_comparable);
    ASSERT_FALSE(c.reasons.empty());
    EXPECT_NE(c.reasons[0].find("pointed Warp's kernel cache at /home/me/kept-cache, outside the probe's, after and not before"),
              std::string::npos)
        << c.reasons[0];
    report also = make({3000, 3000, 3000}, {"a"});
    for (auto& s : also.samples)
    {
        s.cold.caches_outside = {"/home/me/kept-cache"};
    }
    EXPECT_NE(compare_reports(after, also, "kept", "kept again").verdict, verdict::not_comparable);
}
