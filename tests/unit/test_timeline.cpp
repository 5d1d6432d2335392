// The build timeline (from recorded spans), its Chrome trace, and the --samples auto rule.
#include <gtest/gtest.h>

#include "builders.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/render/trace.hpp"
#include "xwarp/runner/runner.hpp"

using namespace xwarp;
using namespace xwarp::testing;

TEST(Timeline, SpansOfTheMedianSampleFromTheFirstProcessStart)
{
    report r;
    for (int i = 1; i <= 3; ++i)
    {
        auto a = load("m", "a", 1000.0 * i);
        a.phases = {{"codegen", 0.0, 10.0}, {"compile", 10.0, 900.0 * i}};
        a.triggered_by = "step";
        auto cold = pass(2000.0 * i, {a, load("n", "b", 100)});
        cold.processes[0].started_unix = 100.0;
        r.samples.push_back(make_sample(i, cold, pass(300, {})));
    }
    summarize(r);
    const auto& t = r.result.timeline;
    EXPECT_EQ(t.sample, 2);  // the median cold wall
    ASSERT_EQ(t.lanes.size(), 1u);
    ASSERT_EQ(t.spans.size(), 4u);  // two loads, two phases of the first
    EXPECT_EQ(t.spans[0].kind, "load");
    EXPECT_EQ(t.spans[0].triggered_by, "step");
    EXPECT_EQ(t.spans[1].kind, "codegen");
    EXPECT_DOUBLE_EQ(t.spans[2].ms, 1800.0);
    EXPECT_EQ(t.spans[3].module, "n");
    EXPECT_GT(t.spans[3].start_ms, t.spans[0].start_ms);

    const auto trace = render_trace(r);
    int complete = 0;
    for (const auto& e : trace["traceEvents"])
    {
        if (e["ph"] == "X")
        {
            ++complete;
            EXPECT_GE(e["ts"].get<double>(), 0.0);
            EXPECT_TRUE(e["args"].contains("module") && e["args"].contains("hash") && e["args"].contains("block_dim"));
        }
        else
        {
            EXPECT_EQ(e["ph"], "M");
        }
    }
    EXPECT_EQ(complete, 4);
}

TEST(Timeline, RecordedStreamOfTwoProcessesHasALanePerProcess)
{
    report r = load_recorded_run(std::string(XWARP_FIXTURES_DIR) + "/streams/two_processes-warp1.19.0");
    summarize(r);
    EXPECT_EQ(r.result.timeline.lanes.size(), 2u);
    double previous = -1.0;
    for (const auto& s : r.result.timeline.spans)
    {
        if (s.kind == "load")
        {
            EXPECT_GE(s.start_ms, previous);  // one process after the other
            previous = s.start_ms;
        }
    }
}

TEST(Sampling, SettlesWhenIdentitiesAgreeAndTheMedianIsKnownWithinTheBand)
{
    auto with_work = [](std::vector<double> ms, const std::string& hash = "a")
    {
        std::vector<sample> v;
        int i = 0;
        for (double x : ms)
        {
            v.push_back(make_sample(++i, pass(x + 1000, {load("m", hash, x)}), pass(300, {})));
        }
        return v;
    };
    EXPECT_EQ(sampling_settled(with_work({1000})), "");                        // one sample says nothing
    EXPECT_NE(sampling_settled(with_work({1000, 1004})), "");                  // agree within 1%
    EXPECT_EQ(sampling_settled(with_work({1000, 1200})), "");                  // spread dominates: not yet
    EXPECT_EQ(sampling_settled(with_work({1000, 1200, 1100})), "");
    EXPECT_NE(sampling_settled(with_work({1000, 1200, 1100, 1150})), "");     // four samples
    auto differ = with_work({1000, 1000, 1000, 1000});
    differ[3] = make_sample(4, pass(2000, {load("m", "other", 1000)}), pass(300, {}));
    EXPECT_EQ(sampling_settled(differ), "");  // a sample loaded another identity
}
