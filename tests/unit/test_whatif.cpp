// What-if analysis on synthetic reports: which levers are planned, how a replay is judged,
// and what the findings and the declined ledger say afterwards. The replays themselves run on
// real Warp in tests/python/test_whatif.py.
#include <gtest/gtest.h>

#include "builders.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/analysis/replay_plans.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/render/html.hpp"
#include "xwarp/render/text.hpp"

using namespace xwarp;
using namespace xwarp::testing;

namespace
{
    // A report whose finding names `lever`, with the given advisory kind and estimate.
    report with_finding(const std::string& mechanism, const std::string& lever, finding_kind kind,
                        std::optional<double> savings)
    {
        report r;
        r.samples.push_back(make_sample(1, pass(3000, {load("m", "a", 2000), load("n", "b", 800)}), pass(500, {})));
        summarize(r);
        finding f;
        f.mechanism = mechanism;
        f.lever = lever;
        f.kind = kind;
        f.module = "m";
        f.savings_ms = savings;
        r.findings.push_back(f);
        return r;
    }

    report replay_of(double cold_ms, nlohmann::json applied, int samples = 1)
    {
        report r;
        for (int i = 1; i <= samples; ++i)
        {
            auto cold = pass(cold_ms + 1000, {load("m", "a", cold_ms)});
            cold.processes[0].whatif = {{"lever", "x"}, {"applied", applied}};
            r.samples.push_back(make_sample(i, cold, pass(500, {})));
        }
        return r;
    }

    report baseline_of(double cold_ms, int samples = 1)
    {
        report r;
        for (int i = 1; i <= samples; ++i)
        {
            r.samples.push_back(make_sample(i, pass(cold_ms + 1000, {load("m", "a", cold_ms)}), pass(500, {})));
        }
        return r;
    }
}

TEST(WhatIf, AutoPlansTheFindingsLeversLargestEstimateFirst)
{
    report r = with_finding("CS-12", "pch-off", finding_kind::advisory, std::nullopt);
    finding big;
    big.mechanism = "CS-10";
    big.lever = "backward-off";
    big.savings_ms = 900;
    r.findings.push_back(big);
    finding none;
    none.mechanism = "CS-1";  // no lever: never planned
    r.findings.push_back(none);
    auto plans = plan_levers(r, {}, true);
    ASSERT_EQ(plans.size(), 2u);
    EXPECT_EQ(plans[0].lever, "backward-off");
    EXPECT_EQ(plans[1].lever, "pch-off");
    EXPECT_EQ(*plans[0].estimate_ms, 900.0);
    EXPECT_THROW(plan_levers(r, {"turbo"}, false), unknown_lever);
}

TEST(WhatIf, TheLargestEstimateIsReplayedFirstWhateverAnUnestimatedLeverTouches)
{
    // options-at-creation estimated at 200 ms; pch-off unestimated, touching more build time:
    // the estimate the report leads with is measured first
    report r = with_finding("CS-3", "options-at-creation", finding_kind::diagnosis, 200.0);
    r.findings.push_back(with_finding("CS-12", "pch-off", finding_kind::advisory, std::nullopt).findings[0]);
    r.findings.push_back(with_finding("CS-10", "backward-off", finding_kind::advisory, std::nullopt).findings[0]);
    auto plans = plan_levers(r, {}, true);
    ASSERT_EQ(plans.size(), 3u);
    EXPECT_EQ(plans[0].lever, "options-at-creation");
}

TEST(WhatIf, FindingsAreOrderedMeasuredFirstThenEstimatesThenTheRest)
{
    report r = with_finding("CS-9", "shared-module", finding_kind::diagnosis, 2730.0);  // an estimate, its replay not applied
    r.findings.push_back(with_finding("CS-10", "backward-off", finding_kind::advisory, std::nullopt).findings[0]);
    r.findings.push_back(with_finding("CS-12", "pch-off", finding_kind::advisory, std::nullopt).findings[0]);
    whatif_result measured;
    measured.lever = "backward-off";
    measured.verdict = xwarp::verdict::improved;
    measured.judged_on = {xwarp::clock::cold_module_work, ""};
    measured.savings[xwarp::clock::cold_module_work] = 17610;
    whatif_result unapplied;
    unapplied.lever = "shared-module";
    unapplied.verdict = xwarp::verdict::not_applied;
    r.whatif = {unapplied, measured};
    apply_whatif(r);
    ASSERT_EQ(r.findings.size(), 3u);
    EXPECT_EQ(r.findings[0].mechanism, "CS-10");  // measured
    EXPECT_EQ(r.findings[1].mechanism, "CS-9");   // estimated, not measured
    EXPECT_EQ(r.findings[2].mechanism, "CS-12");  // no figure
}

TEST(WhatIf, OneReplayIsOneNumberHoweverManyFindingsItMeasured)
{
    // Warp's serial suite: four CS-6 findings, one preregister-overloads replay; a reader added
    // its -18.60 s four times
    report r = with_finding("CS-6", "preregister-overloads", finding_kind::diagnosis, 900.0);
    for (int i = 0; i < 3; ++i)
    {
        r.findings.push_back(with_finding("CS-6", "preregister-overloads", finding_kind::diagnosis, 500.0 - i).findings[0]);
    }
    r.findings.push_back(with_finding("CS-12", "pch-off", finding_kind::advisory, std::nullopt).findings[0]);
    whatif_result measured;
    measured.lever = "preregister-overloads";
    measured.verdict = xwarp::verdict::improved;
    measured.samples = 3;
    measured.judged_on = {xwarp::clock::cold_module_cpu, ""};
    measured.savings[xwarp::clock::cold_module_cpu] = 18600;
    r.whatif = {measured};
    apply_whatif(r);
    ASSERT_EQ(r.findings.size(), 5u);
    const std::vector<int> together{1, 2, 3, 4};
    for (int i = 0; i < 4; ++i)
    {
        ASSERT_TRUE(r.findings[i].measured);
        EXPECT_EQ(r.findings[i].measured->together, together);
        EXPECT_EQ(r.findings[i].measured->shows_number, i == 0);
    }
    EXPECT_FALSE(r.findings[4].measured);
    const std::string text = render_text(r);
    std::size_t shown = 0;
    for (auto at = text.find("18.60 s"); at != std::string::npos; at = text.find("18.60 s", at + 1))
    {
        ++shown;
    }
    EXPECT_EQ(shown, 3u) << text;  // the first finding's headline and measured line, and the replay's own row
    EXPECT_NE(text.find("measured together with finding #1 by one preregister-overloads replay (#1, #2, #3, #4)"),
              std::string::npos) << text;
    EXPECT_NE(text.find("the number is theirs together, not each one's"), std::string::npos) << text;
    const report back = report_from_json(report_to_json(r));
    EXPECT_EQ(back.findings[2].measured->together, together);
    EXPECT_FALSE(back.findings[2].measured->shows_number);
}

TEST(WhatIf, ASavingOnCpuTimeIsQuotedWithTheWallTheJobWaitedFor)
{
    // -n 16: the CPU summed over 16 workers is not time waited; the compile elapsed beside it is
    report r = with_finding("CS-6", "preregister-overloads", finding_kind::diagnosis, 900.0);
    whatif_result measured;
    measured.lever = "preregister-overloads";
    measured.verdict = xwarp::verdict::improved;
    measured.samples = 3;
    measured.judged_on = {xwarp::clock::cold_module_cpu, ""};
    measured.savings[xwarp::clock::cold_module_cpu] = 18600;
    measured.savings[xwarp::clock::compile_elapsed] = 4200;
    r.whatif = {measured};
    apply_whatif(r);
    ASSERT_TRUE(r.findings[0].measured && r.findings[0].measured->wall_saving_ms);
    EXPECT_EQ(*r.findings[0].measured->wall_clock, xwarp::clock::compile_elapsed);
    const std::string text = render_text(r);
    EXPECT_NE(text.find("-18.60 s cold module CPU (-4.20 s compile elapsed), improved"), std::string::npos) << text;
    const report back = report_from_json(report_to_json(r));
    EXPECT_DOUBLE_EQ(*back.findings[0].measured->wall_saving_ms, 4200.0);
    // judged on a wall, nothing is added beside it
    measured.judged_on = {xwarp::clock::compile_elapsed, ""};
    r.whatif = {measured};
    r.findings[0].measured.reset();
    apply_whatif(r);
    EXPECT_FALSE(r.findings[0].measured->wall_saving_ms);
}

TEST(WhatIf, TheReplaysRowQuotesTheFindingsOwnEstimate)
{
    report r = with_finding("CS-9", "shared-module", finding_kind::diagnosis, 2730.0);
    whatif_result w;
    w.lever = "shared-module";
    w.verdict = xwarp::verdict::not_applied;
    w.estimate_ms = 2240.0;  // planned from an analysis on fewer samples
    r.whatif = {w};
    apply_whatif(r);
    EXPECT_EQ(*r.whatif[0].estimate_ms, 2730.0);
    EXPECT_EQ(*r.findings[0].savings_ms, 2730.0);
}

TEST(WhatIf, PlansSayWhenThereIsNothingToMove)
{
    report r = with_finding("CS-9", "shared-module", finding_kind::diagnosis, 100.0);
    auto plans = plan_levers(r, {"shared-module", "mathdx-off", "keep-cache", "parallel-preload"}, false);
    ASSERT_EQ(plans.size(), 4u);
    EXPECT_NE(plans[0].not_applicable, "");  // no module named <kernel>_<8 hex>
    EXPECT_NE(plans[1].not_applicable, "");  // no LTO
    EXPECT_NE(plans[2].not_applicable, "");  // the warm pass compiled nothing
    EXPECT_EQ(plans[3].not_applicable, "");  // two modules built one after the other
    EXPECT_EQ(plans[3].params["groups"][0]["modules"].size(), 2u);
    EXPECT_TRUE(plans[1].time_launches);
    EXPECT_NE(plans[3].environment().at("XWARP_WHATIF").find("parallel-preload"), std::string::npos);
}

TEST(WhatIf, ReplayJudgedByCompareAndAppliedCounts)
{
    lever_plan p;
    p.lever = "pch-off";
    p.mechanisms = {"CS-12"};
    auto improved = judge_replay(p, baseline_of(2000), replay_of(1000, {{"config_set", 1}}));
    EXPECT_EQ(improved.verdict, xwarp::verdict::improved);
    EXPECT_DOUBLE_EQ(*improved.saving_on(xwarp::clock::cold_module_work), 1000.0);
    auto regressed = judge_replay(p, baseline_of(1000), replay_of(2000, {{"config_set", 1}}));
    EXPECT_EQ(regressed.verdict, xwarp::verdict::regressed);
    // nothing was changed in the replayed processes: not-applied, whatever the clocks say
    auto nothing = judge_replay(p, baseline_of(2000), replay_of(1000, nlohmann::json::object()));
    EXPECT_EQ(nothing.verdict, xwarp::verdict::not_applied);
}

TEST(WhatIf, BackwardOffIsInvalidWhereTheReplayDifferentiates)
{
    lever_plan p;
    p.lever = "backward-off";
    report replay = replay_of(1000, {{"config_set", 1}});
    replay.samples[0].cold.launches[0].adjoint = true;
    replay.samples[0].cold.launches[0].kernel = "loss";
    auto w = judge_replay(p, baseline_of(2000), replay);
    EXPECT_EQ(w.verdict, xwarp::verdict::invalid);
    EXPECT_NE(w.reason.find("kernel loss"), std::string::npos);
}

TEST(WhatIf, AnAdvisoryThatDidNotPayMovesToTheLedgerADiagnosisStays)
{
    report r = with_finding("CS-12", "pch-off", finding_kind::advisory, std::nullopt);
    finding d;
    d.mechanism = "CS-3";
    d.lever = "options-at-creation";
    d.kind = finding_kind::diagnosis;
    r.findings.push_back(d);
    whatif_result pch;
    pch.lever = "pch-off";
    pch.verdict = xwarp::verdict::regressed;
    pch.samples = 3;
    whatif_result options;
    options.lever = "options-at-creation";
    options.verdict = xwarp::verdict::inconclusive;
    r.whatif = {pch, options};
    apply_whatif(r);
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_EQ(r.findings[0].mechanism, "CS-3");
    ASSERT_TRUE(r.findings[0].measured);
    EXPECT_EQ(r.findings[0].measured->verdict, xwarp::verdict::inconclusive);
    ASSERT_EQ(r.declined.size(), 1u);
    EXPECT_EQ(r.declined[0].lever, "pch-off");
    EXPECT_NE(r.declined[0].reason.find("regressed"), std::string::npos);
}

TEST(WhatIf, AMeasuredGainOverridesTheEstimatesDecline)
{
    report r = with_finding("CS-12", "pch-off", finding_kind::advisory, std::nullopt);
    declined_lever d;
    d.mechanism = "CS-13";
    d.lever = "parallel-preload";
    d.reason = "with 2 CPU(s) ...";
    d.recommendation = "Preload them together";
    r.declined.push_back(d);
    whatif_result w;
    w.lever = "parallel-preload";
    w.verdict = xwarp::verdict::improved;
    w.judged_on = {xwarp::clock::compile_elapsed, "builds overlapped"};
    w.savings[xwarp::clock::compile_elapsed] = 400;
    r.whatif = {w};
    apply_whatif(r);
    EXPECT_TRUE(r.declined.empty());
    ASSERT_EQ(r.findings.size(), 2u);
    const auto& f = r.findings[0];  // a measured gain leads the unestimated advisory
    EXPECT_EQ(f.mechanism, "CS-13");
    EXPECT_EQ(r.findings[1].mechanism, "CS-12");
    EXPECT_EQ(f.recommendation, "Preload them together");
    ASSERT_TRUE(f.measured);
    EXPECT_EQ(f.measured->clock, xwarp::clock::compile_elapsed);
    EXPECT_EQ(f.measured->saving_ms, 400.0);
}

TEST(WhatIf, AReplaySettlesWhenMoreSamplesCannotChangeItsVerdict)
{
    lever_plan p;
    p.lever = "pch-off";
    // beyond the band with two a side: credited without a test, so more samples are wanted
    EXPECT_EQ(replay_settled_because(p, baseline_of(2000, 2), replay_of(1000, {{"config_set", 1}}, 2), 10), "");
    // five a side: the rank test decides
    EXPECT_EQ(replay_settled_because(p, baseline_of(2000, 5), replay_of(1000, {{"config_set", 1}}, 5), 10)
                  .rfind("the rank test decided", 0),
              0u);
    // an invalid replay is settled at once, whatever its clocks
    lever_plan off;
    off.lever = "backward-off";
    report adjoint = replay_of(1000, {{"config_set", 1}}, 2);
    adjoint.samples[0].cold.launches[0].adjoint = true;
    EXPECT_EQ(replay_settled_because(off, baseline_of(2000, 2), adjoint, 10),
              "the verdict is invalid: more samples cannot change it");
}

TEST(WhatIf, UntilSettledIsKeptInTheJsonAndShownInTextAndHtml)
{
    report r = baseline_of(2000, 2);
    summarize(r);
    whatif_result w;
    w.lever = "backward-off";
    w.verdict = xwarp::verdict::improved;
    w.samples = 3;
    w.until_settled = settling{1, 1, 3, false, "reached 3 samples a side without settling"};
    r.whatif.push_back(w);
    const report back = report_from_json(report_to_json(r));
    ASSERT_TRUE(back.whatif.at(0).until_settled);
    EXPECT_EQ(back.whatif[0].until_settled->stopped_because, "reached 3 samples a side without settling");
    EXPECT_EQ(back.whatif[0].until_settled->added_after, 1);
    const std::string text = render_whatif_text(back);
    EXPECT_NE(text.find("until settled: added 1 baseline and 1 replay sample(s) (at most 3 a side); "
                        "not settled: reached 3"),
              std::string::npos);
    // the replays are listed once (they were printed twice)
    const std::string heading = "What-if replays (";
    EXPECT_EQ(text.find(heading), text.rfind(heading));
    EXPECT_NE(render_html(back).find("data-xwarp=\"until-settled\" data-settled=\"false\""), std::string::npos);
    // a replay without rounds writes no until_settled at all
    r.whatif[0].until_settled.reset();
    EXPECT_FALSE(report_to_json(r)["whatif"][0].contains("until_settled"));
}

TEST(WhatIf, AReplayCountsTheBuildsBesideItsTimeVerdictAndShowsThem)
{
    lever_plan p;
    p.lever = "options-at-creation";
    p.mechanisms = {"CS-3"};
    report baseline;
    baseline.samples.push_back(make_sample(1, pass(4000, {load("m", "a", 1500), load("m", "b", 1500)}), pass(500, {})));
    auto w = judge_replay(p, baseline, replay_of(1500, {{"options", 1}}));
    // counted from the records: two builds of m before, one with the lever, none warm
    EXPECT_EQ(w.cold_builds_baseline, 2);
    EXPECT_EQ(w.cold_builds_replay, 1);
    EXPECT_EQ(w.warm_builds_baseline, 0);
    EXPECT_EQ(w.warm_builds_replay, 0);
    EXPECT_EQ(w.counted_builds_words(),
              "counted: the cold pass built 2 -> 1, the warm pass 0 -> 0 (baseline -> replay, first good sample)");
    report r = baseline;
    r.whatif.push_back(w);
    report round = report_from_json(report_to_json(r));
    summarize(round);
    EXPECT_EQ(round.whatif.at(0).cold_builds_replay, 1);
    EXPECT_NE(render_whatif_text(round).find("counted: the cold pass built 2 -> 1"), std::string::npos);
    EXPECT_NE(render_html(round).find("counted: the cold pass built 2 -&gt; 1"), std::string::npos);
}

// An inconclusive replay measured nothing either way: the advisory stays a finding (from what
// was built), with its measurement and no saving credited, so a busy machine cannot take it away.
TEST(WhatIf, AnAdvisoryWhoseReplayWasInconclusiveStaysAFindingWithNoSavingCredited)
{
    report r = with_finding("CS-10", "backward-off", finding_kind::advisory, std::nullopt);
    whatif_result w;
    w.lever = "backward-off";
    w.verdict = xwarp::verdict::inconclusive;
    w.samples = 3;
    w.savings[xwarp::clock::cold_module_cpu] = 40.0;
    w.judged_on = {xwarp::clock::cold_module_cpu, "builds were serial"};
    r.whatif = {w};
    apply_whatif(r);
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_EQ(r.findings[0].mechanism, "CS-10");
    EXPECT_EQ(r.findings[0].headline(), finding::headline_source::measured_no_gain);
    EXPECT_TRUE(r.declined.empty());
}

// A regression on one or two samples a side is indicative: the advisory stays, no saving credited;
// the same regression on three a side declines it.
TEST(WhatIf, AnIndicativeRegressionDoesNotDeclineAnAdvisory)
{
    for (const int n : {1, 2, 3})
    {
        report r = with_finding("CS-12", "pch-off", finding_kind::advisory, std::nullopt);
        whatif_result w;
        w.lever = "pch-off";
        w.verdict = xwarp::verdict::regressed;
        w.samples = n;
        r.whatif = {w};
        apply_whatif(r);
        EXPECT_EQ(r.findings.size(), n < 3 ? 1u : 0u) << n;
        EXPECT_EQ(r.declined.size(), n < 3 ? 0u : 1u) << n;
    }
}
