// The build timeline (from recorded spans), its Chrome trace, and the --samples auto rule.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

#include "builders.hpp"
#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/render/trace.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/engine/runner/records.hpp"
#include "xwarp/engine/runner/runner.hpp"

using namespace xwarp;
using namespace xwarp::testing;

TEST(Timeline, AnalyzeDrawsTheSameTimelineAfterItsDiagnosis)
{
    report r;
    for (int i = 1; i <= 3; ++i)
    {
        auto a = load("m", "a", 1000.0 * i);
        a.phases = {{"codegen", 0.0, 10.0}, {"compile", 10.0, 900.0 * i}};
        auto cold = pass(2000.0 * i, {a, load("m", "b", 100)});
        cold.processes[0].started_unix = 100.0;
        r.samples.push_back(make_sample(i, cold, pass(300, {})));
    }
    report analyzed = r;
    summarize(r);
    analyze(analyzed);
    ASSERT_EQ(r.result.timeline.spans.size(), 4u);  // a and its two phases, b
    EXPECT_EQ(report_to_json(analyzed)["summary"], report_to_json(r)["summary"]);
    EXPECT_FALSE(analyzed.findings.empty());  // the churn of m was diagnosed between the halves
}

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
    EXPECT_EQ(t.spans[0].kind, span_kind::load);
    EXPECT_EQ(t.spans[0].triggered_by, "step");
    EXPECT_EQ(t.spans[1].kind, span_kind::codegen);
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
            // the load's status as its word (a source that did not see the enum's JSON wrote its number)
            EXPECT_TRUE(e["args"]["status"] == "compiled" || e["args"]["status"] == "cached") << e["args"]["status"];
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
        if (s.kind == span_kind::load)
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

TEST(NvrtcTrace, KeepsCompleteEventsAndTheLongestBeyondTheCap)
{
    // NVRTC's format (clang's time trace): metadata, "Total ..." sums at 0, complete events.
    nlohmann::json raw = {{"beginningOfTime", 1700000000000000},
                          {"traceEvents",
                           {{{"ph", "M"}, {"name", "process_name"}, {"pid", 1}, {"tid", 0}},
                            {{"ph", "X"}, {"name", "Total Frontend"}, {"ts", 0}, {"dur", 90000}},
                            {{"ph", "X"}, {"name", "CUDA C++ Front-End"}, {"ts", 4}, {"dur", 76660},
                             {"args", {{"detail", "wp_stage_1_5f4876c.cu"}}}},
                            {{"ph", "X"}, {"name", "LibNVVM"}, {"ts", 80000}, {"dur", 500000}}}}};
    const nvrtc_trace t = nvrtc_trace_of(raw.dump());
    ASSERT_EQ(t.events.size(), 2u);
    EXPECT_EQ(t.events[0]["name"], "CUDA C++ Front-End");
    EXPECT_EQ(t.events[0]["args"]["detail"], "wp_stage_1_5f4876c.cu");
    EXPECT_EQ(t.events_dropped, 0);

    nlohmann::json many = {{"traceEvents", nlohmann::json::array()}};
    for (int i = 0; i < nvrtc_trace_max_events + 5; ++i)
    {
        many["traceEvents"].push_back({{"ph", "X"}, {"name", "e" + std::to_string(i)}, {"ts", i * 10}, {"dur", i + 1}});
    }
    const nvrtc_trace capped = nvrtc_trace_of(many.dump());
    EXPECT_EQ(capped.events.size(), static_cast<std::size_t>(nvrtc_trace_max_events));
    EXPECT_EQ(capped.events_dropped, 5);
    EXPECT_EQ(capped.events.front()["name"], "e5");  // the five shortest went; the rest stay in time order
    EXPECT_THROW(nvrtc_trace_of("not json"), std::exception);
}

TEST(NvrtcTrace, RecordedOnAnH200EachBuildsPhasesNestInsideItsCompile)
{
    // measure --nvrtc-trace of tests/gpu/programs/serial.py on an H200 (Warp 1.19.0, CUDA 13):
    // six CUDA builds, six traces (kept here: the 30 longest events of each).
    report r = load_report(std::string(XWARP_FIXTURES_DIR) + "/gpu-nvrtc-trace-report.json");
    ASSERT_TRUE(r.run_settings.nvrtc_trace);
    summarize(r);
    const auto& spans = r.result.timeline.spans;
    std::map<std::string, const timeline_span*> compile_of;
    std::map<std::string, int> phases_of;
    for (const auto& sp : spans)
    {
        if (sp.kind == span_kind::compile)
        {
            compile_of[sp.hash] = &sp;
        }
    }
    ASSERT_EQ(compile_of.size(), 6u);
    for (const auto& sp : spans)
    {
        if (sp.kind != span_kind::nvrtc)
        {
            continue;
        }
        ++phases_of[sp.hash];
        const auto* c = compile_of.at(sp.hash);
        EXPECT_GE(sp.start_ms, c->start_ms);
        EXPECT_LE(sp.start_ms + sp.ms, c->start_ms + c->ms + 1.0) << sp.detail;
        EXPECT_EQ(sp.thread, c->thread);
    }
    ASSERT_EQ(phases_of.size(), 6u);
    for (const auto& [hash, n] : phases_of)
    {
        EXPECT_EQ(n, 30) << hash;
    }
    int nvrtc_events = 0;
    bool front_end_named = false;
    const auto trace = render_trace(r);
    for (const auto& e : trace["traceEvents"])
    {
        if (e.value("cat", "") == "nvrtc")
        {
            ++nvrtc_events;
            front_end_named = front_end_named || e["name"].get<std::string>().rfind("CUDA C++ Front-End: wp_stage_", 0) == 0;
            EXPECT_EQ(e["ph"], "X");
            EXPECT_TRUE(e["args"].contains("phase"));
        }
    }
    EXPECT_EQ(nvrtc_events, 180);
    EXPECT_TRUE(front_end_named);
}

TEST(NvrtcTrace, FoundInTheCacheUnderBothNamesNvrtcGives)
{
    // Warp asks for <output>_compile-time-trace.json; CUDA 13's NVRTC writes ....json.json (seen
    // on the H200). Each names its build by the folder's hash; other files are not traces.
    const auto dir = std::filesystem::temp_directory_path() / ("xwarp-nvrtc-test-" + std::to_string(::getpid()));
    const nlohmann::json one = {{"traceEvents", {{{"ph", "X"}, {"name", "LibNVVM"}, {"ts", 1}, {"dur", 5}}}}};
    for (const auto& [folder, file] : std::vector<std::pair<std::string, std::string>>{
             {"wp_stage_1_5f4876c", "wp_stage_1_5f4876c.sm90.cubin_compile-time-trace.json.json"},
             {"wp_stage_2_325c267", "wp_stage_2_325c267.sm90.ptx_compile-time-trace.json"},
             {"wp_stage_3_15cc229", "wp_stage_3_15cc229.meta"}})
    {
        std::filesystem::create_directories(dir / "1.19.0" / folder);
        std::ofstream(dir / "1.19.0" / folder / file) << one.dump();
    }
    std::ofstream(dir / "1.19.0" / "wp_stage_2_325c267" / "broken_compile-time-trace.json") << "{";
    std::vector<std::string> notes;
    const auto traces = collect_nvrtc_traces(dir.string(), notes);
    std::filesystem::remove_all(dir);
    ASSERT_EQ(traces.size(), 2u);
    EXPECT_EQ(traces[0].hash_prefix, "5f4876c");
    EXPECT_EQ(traces[1].hash_prefix, "325c267");
    EXPECT_EQ(traces[0].events.size(), 1u);
    ASSERT_EQ(notes.size(), 1u);  // the broken one costs a note
    EXPECT_NE(notes[0].find("could not be read"), std::string::npos);
}
