// A test suite's tables and findings on synthetic passes: every load counted for the test that
// was running, each process's compile share, a repeat across worker processes and one module's
// code under several names as findings (the real suite runs in tests/python/test_suites.py).
#include <map>

#include <gtest/gtest.h>

#include "builders.hpp"
#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/suite.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/render/text.hpp"

using namespace xwarp;
using namespace xwarp::testing;

namespace
{
    module_load in_test(module_load l, const std::string& test, std::int64_t pid = 1)
    {
        l.test = test;
        l.pid = pid;
        return l;
    }

    report suite_of(std::vector<module_load> loads)
    {
        report r;
        run_result cold = pass(5000.0, std::move(loads));
        process_record worker = cold.processes.front();
        cold.processes.front().exited_ms = 4000.0;
        worker.pid = 2;
        worker.exited_ms = 3000.0;
        cold.processes.push_back(worker);
        r.samples.push_back(make_sample(1, cold, pass(500.0, {})));
        analyze(r);
        return r;
    }

    const finding* finding_of(const report& r, const std::string& mechanism)
    {
        for (const auto& f : r.findings)
        {
            if (f.mechanism == mechanism)
            {
                return &f;
            }
        }
        return nullptr;
    }
}

TEST(ASuite, CountsEachBuildForTheTestThatRanItAndEachProcesssShare)
{
    report r = suite_of({in_test(load("shared", "aaaa111", 900.0), "t.py::test_a"),
                         in_test(load("shared", "aaaa111", 100.0, load_status::cached), "t.py::test_b"),
                         in_test(load("own", "bbbb222", 300.0), "t.py::test_b"),
                         in_test(load("setup_mod", "cccc333", 50.0), "")});
    const auto& tests = r.result.tests;
    ASSERT_EQ(tests.size(), 3u);
    EXPECT_EQ(tests[0].test, "t.py::test_a");  // by build time paid
    EXPECT_EQ(tests[0].builds, 1);
    EXPECT_EQ(tests[1].test, "t.py::test_b");
    EXPECT_EQ(tests[1].builds, 1);  // the cached load paid nothing
    ASSERT_EQ(tests[1].identities.size(), 1u);
    EXPECT_EQ(tests[1].identities[0].words().rfind("own bbbb222 on cpu block_dim 1 (", 0), 0u) << tests[1].identities[0].words();
    EXPECT_EQ(tests[1].identities[0].module, "own");  // data, not words: the JSON carries its fields
    EXPECT_EQ(tests[2].test, "");  // collection and set-up
    ASSERT_EQ(r.result.workers.size(), 1u);
    EXPECT_EQ(r.result.workers[0].builds, 3);
    EXPECT_EQ(*r.result.workers[0].wall_ms, 4000.0);
    EXPECT_EQ(r.result.workers[0].tests, 2);
    const std::string text = render_text(r);
    EXPECT_NE(text.find("Tests, by build time paid"), std::string::npos);
    EXPECT_NE(text.find("collection / set-up (outside any test)"), std::string::npos);
}

TEST(ASuite, ARepeatAcrossWorkersAndOneCodeUnderTwoNamesAreFindings)
{
    // the second copy's thread waited for a CPU most of its 800 ms: Warp's timer is a wall
    module_load second = in_test(load("shared", "aaaa111", 800.0), "t.py::test_c", 2);
    second.cpu_ms = 290.0;
    report r = suite_of({in_test(load("shared", "aaaa111", 900.0), "t.py::test_a", 1), second,
                         in_test(load("offset_small", "dddd444", 120.0), "t.py::test_p[small]", 1),
                         in_test(load("offset_large", "dddd444", 110.0), "t.py::test_p[large]", 1)});
    const finding* repeated = finding_of(r, "repeated-across-workers");
    ASSERT_NE(repeated, nullptr);
    EXPECT_EQ(repeated->module.str(), "shared");
    EXPECT_DOUBLE_EQ(*repeated->savings_ms, 800.0);
    EXPECT_NE(repeated->evidence.find("t.py::test_a, t.py::test_c"), std::string::npos) << repeated->evidence;
    EXPECT_NE(repeated->evidence.find("the copies after the first took 800 ms on Warp's timers (the loading threads' wall), "
                                      "290 ms of it on a CPU"),
              std::string::npos)
        << repeated->evidence;
    EXPECT_EQ(repeated->cause.value()["cpu_ms"], 290.0);
    EXPECT_EQ(repeated->cause.value()["warp_ms"], 800.0);
    EXPECT_EQ(finding_of(r, "same-hash-rebuilt"), nullptr);  // the workers' repeat is the suite's finding
    const finding* named = finding_of(r, "same-code-other-name");
    ASSERT_NE(named, nullptr);
    EXPECT_DOUBLE_EQ(*named->savings_ms, 110.0);
    EXPECT_NE(named->evidence.find("no CPU time was recorded for them"), std::string::npos) << named->evidence;
    EXPECT_EQ(r.result.workers.size(), 2u);
}

TEST(ASuite, AProgramThatIsNoSuiteHasNoTestsNorSuiteFindings)
{
    report r = suite_of({load("shared", "aaaa111", 900.0), load("offset_small", "dddd444", 120.0),
                         load("offset_large", "dddd444", 110.0)});
    EXPECT_TRUE(r.result.tests.empty());
    EXPECT_TRUE(r.result.workers.empty());
    EXPECT_EQ(finding_of(r, "same-code-other-name"), nullptr);
    EXPECT_EQ(render_text(r).find("Tests, by build time paid"), std::string::npos);
}

// Paid by the first: a later test of the same process that launches a module another test built
// reuses that build; a module rebuilt in between is the rebuilder's, and a load from another
// process's cache has no payer here.
TEST(ASuite, ATestThatLaunchesAModuleAnotherBuiltReusesWhatTheFirstPaidFor)
{
    run_result cold;
    auto at = [](module_load l, std::int64_t seq, const char* test) {
        l.seq = seq;
        l.test = test;
        return l;
    };
    cold.module_loads = {at(xwarp::testing::load("shared", "aaaa", 100.0), 1, "t_first"),
                         at(xwarp::testing::load("shared", "bbbb", 100.0), 5, "t_rebuild"),
                         at(xwarp::testing::load("other", "cccc", 50.0, load_status::cached), 7, "t_cached")};
    process_record p;
    p.pid = 1;
    auto use = [](std::int64_t seq, const char* test, const char* module) {
        api_call_event c;
        c.function = "test_use";
        c.seq = seq;
        c.args = {{"test", test}, {"module", module}, {"device", "cpu"}};
        return c;
    };
    p.calls = {use(2, "t_first", "shared"), use(3, "t_second", "shared"), use(4, "t_third", "shared"),
               use(6, "t_rebuild", "shared"), use(8, "t_cached", "other"), use(9, "t_after", "other"),
               use(10, "t_fourth", "shared")};
    cold.processes = {p};
    summary s;
    suite_tables(cold, s);
    std::map<std::string, test_cost> by;
    for (const auto& t : s.tests)
    {
        by[t.test] = t;
    }
    EXPECT_EQ(by["t_first"].reusers, (std::vector<std::string>{"t_second", "t_third"}));
    EXPECT_EQ(by["t_first"].reused_by, 2);
    EXPECT_EQ(by["t_rebuild"].reusers, (std::vector<std::string>{"t_fourth"}));
    EXPECT_EQ(by["t_cached"].reused_by, 0) << "a build from another process's cache has no payer here";
}

// A test that built two modules: each build says how many later tests reused that build, not the
// test's total (the plugin's "reused by N" line is per build).
TEST(ASuite, EachBuildCountsTheTestsThatReusedItNotItsTestsTotal)
{
    run_result cold;
    auto at = [](module_load l, std::int64_t seq, const char* test) {
        l.seq = seq;
        l.test = test;
        return l;
    };
    cold.module_loads = {at(xwarp::testing::load("a", "aaaa", 100.0), 1, "t_pays"), at(xwarp::testing::load("b", "bbbb", 80.0), 2, "t_pays")};
    process_record p;
    p.pid = 1;
    auto use = [](std::int64_t seq, const char* test, const char* module) {
        api_call_event c;
        c.function = "test_use";
        c.seq = seq;
        c.args = {{"test", test}, {"module", module}, {"device", "cpu"}};
        return c;
    };
    p.calls = {use(3, "t1", "a"), use(4, "t2", "a"), use(5, "t3", "a"), use(6, "t1", "b")};
    cold.processes = {p};
    summary s;
    suite_tables(cold, s);
    const auto pays = std::find_if(s.tests.begin(), s.tests.end(), [](const test_cost& t) { return t.test == "t_pays"; });
    ASSERT_NE(pays, s.tests.end());
    EXPECT_EQ(pays->reused_by, 3);  // t1, t2, t3: the test's total
    ASSERT_EQ(pays->identities.size(), 2u);
    EXPECT_EQ(pays->identities[0].reused_by, 3);  // a: t1, t2, t3
    EXPECT_EQ(pays->identities[1].reused_by, 1);  // b: t1
}

TEST(ASuite, AFailedBuildShowsWarpsErrorAndTheTestItFailedInWithWhetherThatTestPassed)
{
    module_load expected = in_test(load("bad_kernel", "dddd444", 20.0, load_status::error), "t.py::test_raises");
    expected.error = shared_text("RuntimeError: Error while parsing function \"bad\"\nat t.py:12");
    module_load broken = in_test(load("broken", "eeee555", 30.0, load_status::error), "t.py::test_breaks");
    broken.error = shared_text("Warp CPU error: compile failed");
    report r;
    run_result cold = pass(5000.0, {in_test(load("ok", "aaaa111", 900.0), "t.py::test_a"), expected, broken});
    cold.failed_tests = {"t.py::test_breaks"};
    r.samples.push_back(make_sample(1, cold, pass(500.0, {})));
    analyze(r);
    std::map<std::string, std::string> failure;
    for (const auto& id : r.result.identities)
    {
        failure[id.module.str()] = id.failure;
    }
    EXPECT_EQ(failure["ok"], "");
    EXPECT_EQ(failure["bad_kernel"], "RuntimeError: Error while parsing function \"bad\" (in t.py::test_raises, which "
                                     "passed: a build the test expects to fail)");
    EXPECT_EQ(failure["broken"], "Warp CPU error: compile failed (in t.py::test_breaks, which failed)");
    const std::string text = render_text(r);
    EXPECT_NE(text.find("failed: RuntimeError: Error while parsing function \"bad\" (in t.py::test_raises"), std::string::npos)
        << text;
}
