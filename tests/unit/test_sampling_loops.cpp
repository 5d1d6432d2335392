// The sampling loops on a scripted sampler: when --samples auto stops, how compare
// --until-settled alternates its sides and when it stops, how what-if replays spend their budget
// and when their rounds stop. Samples are real shim streams (tests/fixtures/streams) with their
// module work scaled to the figures each test needs; the loops' own code runs unchanged.
#include <cmath>

#include <gtest/gtest.h>

#include "scripted_sampler.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/jobs/whatif/adaptive.hpp"
#include "xwarp/jobs/whatif/replay_loops.hpp"

using namespace xwarp;
using namespace xwarp::testing;

namespace
{
    report recorded(const std::string& name)
    {
        return load_recorded_run(std::string(XWARP_FIXTURES_DIR) + "/streams/" + name + "-warp1.19.0");
    }

    // The recorded sample with its cold module work scaled to `cold_ms` (every load alike).
    sample with_work(const sample& recorded_sample, double cold_ms)
    {
        sample s = recorded_sample;
        double work = 0.0;
        for (const auto& l : s.cold.module_loads)
        {
            work += l.work_ms();
        }
        const double k = cold_ms / work;
        for (auto& l : s.cold.module_loads)
        {
            for (auto* v : {&l.warp_ms, &l.total_ms, &l.native_ms, &l.codegen_ms, &l.pch_ms})
            {
                if (*v)
                {
                    **v *= k;
                }
            }
        }
        s.cold.wall_ms = s.warm->wall_ms + cold_ms + 100.0;
        return s;
    }

    double cold_work(const sample& s)
    {
        double work = 0.0;
        for (const auto& l : s.cold.module_loads)
        {
            work += l.work_ms();
        }
        return work;
    }

    std::deque<sample> samples_of(const sample& base, const std::vector<double>& cold_ms)
    {
        std::deque<sample> out;
        for (double ms : cold_ms)
        {
            out.push_back(with_work(base, ms));
        }
        return out;
    }

    // A lever's replay sample: the shim's exit record says what the lever changed.
    sample applied(sample s, const std::string& lever)
    {
        for (auto& p : s.cold.processes)
        {
            p.whatif = {{"lever", lever}, {"applied", {{"config_set", 1}}}};
        }
        return s;
    }

    const cancel_check never = [] { return false; };
}

TEST(SamplingLoops, AutoStopsAtTheFirstSampleThatSettlesTheMedian)
{
    const sample base = recorded("clean").samples.at(0);
    // Two samples 30% apart leave the median unknown within the band; the third agrees with the
    // first and settles it (median 1000 ms, MAD 0).
    scripted_sampler source({{"", samples_of(base, {1000, 1300, 1000, 1000, 1000})}}, 10);
    const report r = measure_until_settled(source, 10, nullptr, never);
    EXPECT_EQ(source.taken(""), 3);
    EXPECT_EQ(r.samples.size(), 3u);
    EXPECT_EQ(r.run_settings.stopped_because.rfind("settled after 3 good samples", 0), 0u) << r.run_settings.stopped_because;
}

TEST(SamplingLoops, AutoTakesTheMostItMayWhenTheIdentitiesDisagree)
{
    const sample clean = recorded("clean").samples.at(0);
    const sample other = recorded("cs1_late").samples.at(0);  // another program's identities
    std::deque<sample> script = {with_work(clean, 1000), with_work(other, 1000), with_work(clean, 1000),
                                 with_work(clean, 1000), with_work(clean, 1000)};
    scripted_sampler source({{"", script}}, 4);
    const report r = measure_until_settled(source, 4, nullptr, never);
    EXPECT_EQ(source.taken(""), 4);
    EXPECT_NE(r.run_settings.stopped_because.find("reached --max-samples 4 without settling"), std::string::npos)
        << r.run_settings.stopped_because;
}

TEST(SamplingLoops, AutoStopsWhenInterrupted)
{
    const sample base = recorded("clean").samples.at(0);
    scripted_sampler source({{"", samples_of(base, {1000, 1300, 1600, 1000})}}, 10);
    int polled = 0;
    const cancel_check after_two = [&] { return ++polled > 1; };  // the second sample's check says stop
    const report r = measure_until_settled(source, 10, nullptr, after_two);
    EXPECT_EQ(source.taken(""), 2);
    EXPECT_EQ(r.run_settings.stopped_because, "interrupted");
}

TEST(SamplingLoops, CompareUntilSettledAlternatesSidesAndStopsWhenTheRankTestDecides)
{
    const sample base = recorded("clean").samples.at(0);
    scripted_sampler before_source({{"", samples_of(base, {1000, 1010, 990, 1005, 995, 1000, 1000})}}, 10);
    scripted_sampler after_source({{"", samples_of(base, {600, 610, 590, 605, 595, 600, 600})}}, 10);
    report before = before_source.report_of({with_work(base, 1000), with_work(base, 1008)});
    report after = after_source.report_of({with_work(base, 600), with_work(base, 603)});
    const comparison c = compare_until_settled(before, after, before_source, after_source, 10, "before", "after", nullptr, never);
    // from two a side to the rank test's five: three rounds, each before then after
    ASSERT_TRUE(c.until_settled);
    EXPECT_EQ(c.until_settled->added_before, 3);
    EXPECT_EQ(c.until_settled->added_after, 3);
    EXPECT_TRUE(c.until_settled->settled);
    EXPECT_NE(c.until_settled->stopped_because.find("the rank test decided"), std::string::npos);
    EXPECT_EQ(c.verdict, xwarp::verdict::improved);
    ASSERT_EQ(before.samples.size(), 5u);
    EXPECT_EQ(after.samples.size(), 5u);
}

TEST(SamplingLoops, CompareUntilSettledStopsAtMaxSamplesWhenTheVerdictCannotSettle)
{
    const sample base = recorded("clean").samples.at(0);
    // A 30% gain whose samples interleave with the baseline's: the rank test never decides.
    scripted_sampler before_source({{"", samples_of(base, {1000, 400, 1600, 500, 1500, 450})}}, 4);
    scripted_sampler after_source({{"", samples_of(base, {700, 1500, 450, 1400, 500, 1450})}}, 4);
    report before = before_source.report_of({with_work(base, 1000), with_work(base, 1600)});
    report after = after_source.report_of({with_work(base, 700), with_work(base, 1400)});
    const comparison c = compare_until_settled(before, after, before_source, after_source, 4, "b", "a", nullptr, never);
    ASSERT_TRUE(c.until_settled);
    EXPECT_EQ(before.samples.size(), 4u);
    EXPECT_EQ(after.samples.size(), 4u);
    EXPECT_FALSE(c.until_settled->settled) << c.until_settled->stopped_because;
}

TEST(SamplingLoops, WhatIfRoundsAddSamplesUntilTheReplaySettles)
{
    const sample base = recorded("clean").samples.at(0);
    std::deque<sample> replays;
    for (double ms : {500, 505, 495, 502, 498, 500, 500, 500})
    {
        replays.push_back(applied(with_work(base, ms), "backward-off"));
    }
    scripted_sampler source({{"", samples_of(base, {1000, 1010, 990, 1005, 995, 1000, 1000, 1000})},
                             {"backward-off", replays}},
                            10);
    replay_request request;
    request.levers.levers = {"backward-off"};
    request.until_settled = true;
    request.max_samples = 10;
    request.budget_s = 3600.0;
    const report r = measure_with_whatif(source, 3, request, nullptr, never);
    ASSERT_EQ(r.whatif.size(), 1u);
    const auto& w = r.whatif[0];
    EXPECT_EQ(w.verdict, xwarp::verdict::improved) << w.reason;
    EXPECT_EQ(w.samples, 5);  // two planned, three rounds to the rank test's five
    ASSERT_TRUE(w.until_settled);
    EXPECT_TRUE(w.until_settled->settled);
    EXPECT_EQ(w.until_settled->added_after, 3);
    EXPECT_EQ(source.taken(""), 5);
    // the first baseline sample plans; then the replay's 1, and baseline i before the replay's i
    ASSERT_GE(source.calls.size(), 4u);
    EXPECT_EQ(source.calls[0].variant, "");
    EXPECT_EQ(source.calls[1].variant, "backward-off");
    EXPECT_EQ(source.calls[2].variant, "");
    EXPECT_EQ(source.calls[3].variant, "backward-off");
}

TEST(SamplingLoops, WhatIfRoundsStopWhenTheBudgetRunsOut)
{
    const sample base = recorded("clean").samples.at(0);
    std::deque<sample> replays;
    for (int i = 0; i < 8; ++i)
    {
        replays.push_back(applied(with_work(base, i % 2 ? 600 : 1400), "backward-off"));
    }
    scripted_sampler source({{"", samples_of(base, {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000})},
                             {"backward-off", replays}},
                            10);
    replay_request request;
    request.levers.levers = {"backward-off"};
    request.until_settled = true;
    request.max_samples = 10;
    // room for the two planned replay samples and one round, not a second
    const double one = base.warm->wall_ms + 1100.0 + base.warm->wall_ms;  // a replay sample's cold + warm walls
    request.budget_s = (3.2 * one) / 1000.0;
    const report r = measure_with_whatif(source, 2, request, nullptr, never);
    ASSERT_EQ(r.whatif.size(), 1u);
    ASSERT_TRUE(r.whatif[0].until_settled);
    EXPECT_NE(r.whatif[0].until_settled->stopped_because.find("budget ran out"), std::string::npos)
        << r.whatif[0].until_settled->stopped_because;
    EXPECT_LE(source.taken("backward-off"), 4);
}

TEST(SamplingLoops, AReplayOverTheBudgetIsNotRunAndCostsNoSample)
{
    const sample base = recorded("clean").samples.at(0);
    scripted_sampler source({{"", samples_of(base, {1000, 1000, 1000})}}, 3);
    replay_request request;
    request.levers.levers = {"backward-off"};
    request.budget_s = 0.001;
    const report r = measure_with_whatif(source, 3, request, nullptr, never);
    ASSERT_EQ(r.whatif.size(), 1u);
    EXPECT_EQ(r.whatif[0].verdict, xwarp::verdict::not_run);
    EXPECT_EQ(source.taken("backward-off"), 0);
    EXPECT_EQ(source.taken(""), 3);
    EXPECT_GT(cold_work(r.samples[0]), 0.0);
}
