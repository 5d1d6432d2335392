#include <gtest/gtest.h>

#include "builders.hpp"
#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/render/text.hpp"

using namespace xwarp;
using namespace xwarp::testing;

namespace
{
    const flag* find_flag(const summary& s, flag_id id)
    {
        for (const auto& f : s.flags)
        {
            if (f.id == id)
            {
                return &f;
            }
        }
        return nullptr;
    }
}

TEST(Summarize, MediansAndCompileElapsedPerSample)
{
    report r;
    r.samples.push_back(make_sample(1, pass(4000, {load("m", "a", 3000)}), pass(500, {load("m", "a", 2, load_status::cached)})));
    r.samples.push_back(make_sample(2, pass(4200, {load("m", "a", 3100)}), pass(600, {load("m", "a", 3, load_status::cached)})));
    r.samples.push_back(make_sample(3, pass(4100, {load("m", "a", 2900)}), pass(550, {load("m", "a", 2, load_status::cached)})));
    summarize(r);
    const auto& s = r.result;
    ASSERT_TRUE(s.valid);
    EXPECT_EQ(s.samples_ok, 3);
    EXPECT_DOUBLE_EQ(*s.cold_wall_ms.median, 4100);
    EXPECT_DOUBLE_EQ(*s.warm_wall_ms.median, 550);
    // per-sample differences 3500, 3600, 3550 -> median 3550, MAD 50
    EXPECT_DOUBLE_EQ(*s.compile_elapsed_ms.median, 3550);
    EXPECT_DOUBLE_EQ(*s.compile_elapsed_ms.mad, 50);
    EXPECT_DOUBLE_EQ(*s.cold_module_ms.median, 3000);
    ASSERT_EQ(s.identities.size(), 1u);
    EXPECT_EQ(s.identities[0].samples_seen, 3);
    EXPECT_TRUE(s.identities_consistent);
    EXPECT_TRUE(s.rebuilt.empty());
    EXPECT_EQ(s.module_ms_source, figure_source::warp_timer);
    EXPECT_EQ(find_flag(s, flag_id::cache_not_reused), nullptr);
}

TEST(Summarize, HashChurnAndBlockDimSpreadAreSeparated)
{
    report r;
    auto cold = pass(9000,
                     {load("m", "a1", 3000, load_status::compiled, 1, {"k1"}),
                      load("m", "a2", 3200, load_status::compiled, 1, {"k1", "k2"}),
                      load("n", "b128", 1000, load_status::compiled, 128, {"t"}),
                      load("n", "b256", 1100, load_status::compiled, 256, {"t"})});
    r.samples.push_back(make_sample(1, cold, pass(700, {})));
    summarize(r);
    const auto& s = r.result;
    ASSERT_EQ(s.rebuilt.size(), 2u);
    EXPECT_EQ(s.rebuilt[0].kind, rebuild_kind::hash_churn);
    EXPECT_EQ(s.rebuilt[0].module, "m");
    EXPECT_EQ(s.rebuilt[0].builds, 2);
    EXPECT_DOUBLE_EQ(s.rebuilt[0].ms, 6200);
    ASSERT_EQ(s.rebuilt[0].hashes.size(), 2u);
    EXPECT_EQ(s.rebuilt[0].hashes[0], "a1");
    EXPECT_EQ(s.rebuilt[1].kind, rebuild_kind::block_dim_spread);
    EXPECT_EQ(s.rebuilt[1].block_dims, (std::vector<int>{128, 256}));
    // identities sorted by ms
    EXPECT_EQ(s.identities[0].hash, "a2");
}

TEST(Summarize, FlagsCacheNotReusedOverlapAndSmallShare)
{
    report r;
    // warm pass compiles again -> CACHE_NOT_REUSED; three builds at once -> overlap 3
    r.samples.push_back(make_sample(
        1, pass(2000, {load("a", "1", 1000), load("b", "2", 1000), load("c", "3", 1000)}, 2, true), pass(1000, {load("a", "1", 900)})));
    summarize(r);
    EXPECT_NE(find_flag(r.result, flag_id::cache_not_reused), nullptr);
    EXPECT_NE(find_flag(r.result, flag_id::builds_overlapped), nullptr);
    EXPECT_EQ(find_flag(r.result, flag_id::compile_small_share), nullptr);

    report small;
    small.samples.push_back(make_sample(1, pass(60000, {load("a", "1", 1000)}), pass(59000, {})));
    summarize(small);
    const flag* f = find_flag(small.result, flag_id::compile_small_share);
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->message.find("1.7%"), std::string::npos) << f->message;
}

TEST(Summarize, OverlapFactorComesFromBuildSpansOrSaysWhyNot)
{
    // Two builds of one second, the second starting half-way through the first: 2 s of builds
    // over 1.5 s during which one ran.
    report r;
    auto a = load("a", "1", 1000);
    auto b = load("b", "2", 1000);
    a.total_ms = b.total_ms = 1000;
    b.t_start_ms = 500;
    r.samples.push_back(make_sample(1, pass(3000, {a, b}, 2, true), pass(500, {})));
    summarize(r);
    ASSERT_TRUE(r.result.overlap_factor.median);
    EXPECT_NEAR(*r.result.overlap_factor.median, 2000.0 / 1500.0, 1e-9);
    EXPECT_NE(find_flag(r.result, flag_id::builds_overlapped), nullptr);

    // A warm pass that compiles again (the cache thrown away) made the old figure read 1.61:
    // serial builds stay serial, whatever the warm pass does.
    report rebuilt;
    rebuilt.samples.push_back(make_sample(1, pass(3000, {load("a", "1", 1000), load("b", "2", 1000)}),
                                          pass(2500, {load("a", "1", 900), load("b", "2", 900)})));
    summarize(rebuilt);
    ASSERT_TRUE(rebuilt.result.overlap_factor.median);
    EXPECT_NEAR(*rebuilt.result.overlap_factor.median, 1.0, 1e-9);
    EXPECT_EQ(find_flag(rebuilt.result, flag_id::builds_overlapped), nullptr);

    // Two processes one after the other, one build between them: nothing could overlap.
    report two;
    auto first = load("m", "1", 1000);
    auto second = load("m", "1", 5, load_status::cached);
    second.pid = 2;
    auto cold = pass(2500, {first, second});
    process_record p2 = cold.processes[0];
    p2.pid = 2;
    p2.started_unix = 1.2;
    cold.processes.push_back(p2);
    two.samples.push_back(make_sample(1, cold, pass(800, {})));
    summarize(two);
    EXPECT_FALSE(two.result.overlap_factor.median);
    EXPECT_EQ(two.result.overlap_note, "one build: nothing could overlap");
    EXPECT_EQ(find_flag(two.result, flag_id::builds_overlapped), nullptr);

    // Builds parsed from Warp's log have no start times.
    report log;
    auto l1 = load("a", "1", 1000);
    auto l2 = load("b", "2", 1000);
    l1.source = l2.source = figure_source::log;
    log.samples.push_back(make_sample(1, pass(2500, {l1, l2}), pass(500, {})));
    summarize(log);
    EXPECT_FALSE(log.result.overlap_factor.median);
    EXPECT_NE(log.result.overlap_note.find("log"), std::string::npos);
}

TEST(Summarize, AllSamplesFailedIsInvalidWithoutMedians)
{
    report r;
    run_result bad;
    bad.wall_ms = 5;
    bad.exit_code = 3;
    sample s;
    s.index = 1;
    s.cold = bad;
    r.samples.push_back(s);
    r.samples.push_back(s);
    analyze(r);
    EXPECT_FALSE(r.result.valid);
    EXPECT_FALSE(r.result.cold_wall_ms.median);
    EXPECT_NE(find_flag(r.result, flag_id::all_samples_failed), nullptr);
    ASSERT_FALSE(r.result.warnings.empty());
    EXPECT_NE(r.result.warnings[0].find("exited with code 3"), std::string::npos);
    EXPECT_FALSE(r.errors.empty());
}

TEST(Summarize, PartialFailureCountsOnlyGoodSamples)
{
    report r;
    r.samples.push_back(make_sample(1, pass(4000, {load("m", "a", 3000)}), pass(500, {})));
    run_result timed_out;
    timed_out.wall_ms = 5000;
    timed_out.timed_out = true;
    sample s;
    s.index = 2;
    s.cold = timed_out;
    r.samples.push_back(s);
    r.run_settings.timeout_s = 5;
    summarize(r);
    EXPECT_TRUE(r.result.valid);
    EXPECT_EQ(r.result.samples_ok, 1);
    EXPECT_EQ(r.result.cold_wall_ms.values.size(), 1u);
    bool saw_timeout = false;
    for (const auto& w : r.result.warnings)
    {
        saw_timeout = saw_timeout || w.find("timed out after 5.0 s") != std::string::npos;
    }
    EXPECT_TRUE(saw_timeout);
}

TEST(Summarize, SamplesThatDisagreeAreFlagged)
{
    report r;
    r.samples.push_back(make_sample(1, pass(4000, {load("m", "a", 3000)}), pass(500, {})));
    r.samples.push_back(make_sample(2, pass(4000, {load("m", "b", 3000)}), pass(500, {})));
    summarize(r);
    EXPECT_FALSE(r.result.identities_consistent);
    EXPECT_NE(find_flag(r.result, flag_id::samples_disagree), nullptr);
    EXPECT_EQ(r.result.identities.size(), 2u);
    EXPECT_EQ(r.result.identities[0].samples_seen, 1);
}

// Found by the report-loader fuzzer: a sample whose cold pass succeeded but whose warm pass is
// missing (a report cut short) must be a failed sample, not a read of an empty optional.
TEST(Summarize, MissingWarmPassIsAFailedSample)
{
    report r;
    r.samples.push_back(make_sample(1, pass(4000, {load("m", "a", 3000)}), pass(500, {})));
    sample s;
    s.index = 2;
    s.cold = pass(4000, {load("m", "a", 3000)});
    r.samples.push_back(s);
    summarize(r);
    EXPECT_EQ(r.result.samples_ok, 1);
    bool said = false;
    for (const auto& w : r.result.warnings)
    {
        said = said || w == "sample 2: no warm pass was recorded";
    }
    EXPECT_TRUE(said);
}

TEST(Summarize, AFailureByASignalNamesOnlyASignalThatExists)
{
    run_result killed;
    killed.term_signal = 11;
    EXPECT_EQ(describe_failure(killed, std::nullopt), "killed by signal 11 (SIGSEGV)");
    killed.term_signal = 9;
    EXPECT_EQ(describe_failure(killed, std::nullopt), "killed by signal 9 (SIGKILL)");
    killed.term_signal = 77;  // a report from anywhere: a number no Linux signal has gets no name
    EXPECT_EQ(describe_failure(killed, std::nullopt), "killed by signal 77");
    killed.term_signal = -3;
    EXPECT_EQ(describe_failure(killed, std::nullopt), "killed by signal -3");
}

TEST(Summarize, TheCpuClockSaysHowFarLoadMovedItInThisRun)
{
    // Newton's basic_pendulum: 38-45 s of module CPU at the lightest load, 50-62 s beside busy jobs
    report r;
    const double cpu[] = {40000.0, 60000.0, 42000.0};
    const double busy[] = {0.2, 1.8, 0.4};
    for (int i = 0; i < 3; ++i)
    {
        module_load l = load("m", "a", 3000);
        l.cpu_ms = cpu[i];
        run_result cold = pass(70000, {l});
        cold.load = machine_load{2, busy[i] * 70000.0, 1000.0};
        r.samples.push_back(make_sample(i + 1, cold, pass(1000, {load("m", "a", 2, load_status::cached)})));
    }
    summarize(r);
    ASSERT_TRUE(r.result.cpu_under_load);
    EXPECT_NEAR(r.result.cpu_under_load->moved_pct, 100.0 * 20000.0 / 42000.0, 0.01);
    EXPECT_NEAR(r.result.cpu_under_load->busy_least, 0.2, 1e-9);
    EXPECT_NEAR(r.result.cpu_under_load->busy_most, 1.8, 1e-9);
    EXPECT_EQ(r.result.cpu_under_load->samples, 3);
    const std::string text = render_text(r);
    EXPECT_NE(text.find("load moves it less than a wall, not never; in this run it moved 48% across 3 samples while 0.2 to "
                        "1.8 CPUs were busy"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("does not move"), std::string::npos);
}
