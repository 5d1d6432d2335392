// The history: step detection, trends over stored runs, the SQLite store (dedup, migrations,
// a corrupt or newer file moved aside, two writers at once), budgets, machine tables and the
// project's commit read from .git.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <SQLiteCpp/SQLiteCpp.h>

#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/budget_check.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/analysis/trend.hpp"
#include "xwarp/engine/env/environment.hpp"
#include "xwarp/store/run_store.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/engine/os/tempdir.hpp"
#include "xwarp/render/budget_lines.hpp"
#include "xwarp/render/history_text.hpp"
#include "xwarp/render/html.hpp"
#include "xwarp/engine/runner/runner.hpp"

using namespace xwarp;
namespace fs = std::filesystem;

namespace
{
    report recorded(const std::string& name)
    {
        report r = load_recorded_run(std::string(XWARP_FIXTURES_DIR) + "/streams/" + name + "-warp1.19.0");
        analyze(r);
        return r;
    }

    struct temp_folder
    {
        fs::path path;
        temp_folder()
        {
            path = fs::temp_directory_path() / ("xwarp-history-test-" + std::to_string(::getpid()) + "-"
                                                + std::to_string(counter()++));
            fs::create_directories(path);
        }
        ~temp_folder()
        {
            std::error_code ec;
            fs::remove_all(path, ec);
        }
        static std::atomic<int>& counter()
        {
            static std::atomic<int> n{0};
            return n;
        }
    };

    history_run run_with(std::int64_t id, const std::string& commit, double mad = 5.0)
    {
        history_run r;
        r.id = id;
        r.fp.machine = "box";
        r.fp.command = "python app.py";
        r.fp.warp = "1.19.0";
        r.fp.git_commit = commit;
        r.cold_module_mad_ms = mad;
        return r;
    }

    history_identity row(const std::string& module, const std::string& hash, double ms)
    {
        history_identity i;
        i.module = module;
        i.hash = hash;
        i.device = "cpu";
        i.block_dim = 1;
        i.builds = 1;
        i.ms = ms;
        return i;
    }
}

TEST(Steps, AFlatSeriesHasNone)
{
    EXPECT_TRUE(detect_steps({100, 102, 99, 101, 100, 98}, std::vector<double>(6, 5.0), series_measure::cold_ms).empty());
}

TEST(Steps, APersistingChangeIsAStepAtItsFirstRun)
{
    const auto steps = detect_steps({100, 101, 99, 160, 158, 161}, std::vector<double>(6, 5.0), series_measure::cold_ms);
    ASSERT_EQ(steps.size(), 1u);
    EXPECT_EQ(steps[0].index, 3);
    EXPECT_TRUE(steps[0].confirmed);
    EXPECT_DOUBLE_EQ(steps[0].before, 100.0);
    EXPECT_NEAR(steps[0].after, 159.0, 1e-9);
}

TEST(Steps, ASingleOddRunIsNotAStep)
{
    EXPECT_TRUE(detect_steps({100, 101, 180, 100, 99}, std::vector<double>(5, 5.0), series_measure::cold_ms).empty());
}

TEST(Steps, AChangeAtTheLastRunIsUnconfirmed)
{
    const auto steps = detect_steps({1, 1, 1, 2}, std::vector<double>(4, 0.0), series_measure::identities);
    ASSERT_EQ(steps.size(), 1u);
    EXPECT_EQ(steps[0].index, 3);
    EXPECT_FALSE(steps[0].confirmed);
}

TEST(Steps, RunToRunSpreadWidensTheBand)
{
    // Runs that swing by about 10% around 100, with a tight band of their own: no step.
    EXPECT_TRUE(detect_steps({100, 112, 95, 108, 97, 110, 104, 99}, std::vector<double>(8, 1.0), series_measure::cold_ms).empty());
}

TEST(Steps, ASecondLargerJumpIsNotTakenAsPersistenceOfTheFirst)
{
    const auto steps = detect_steps({450, 470, 832, 832}, std::vector<double>(4, 15.0), series_measure::cold_ms);
    ASSERT_EQ(steps.size(), 1u);
    EXPECT_EQ(steps[0].index, 2);
}

TEST(Trend, PlantedExtraKernelIsAStepAtItsRunWithTheCommitThatChanged)
{
    std::vector<history_run> runs = {run_with(4, "aaaa"), run_with(5, "aaaa"), run_with(9, "bbbb"), run_with(10, "bbbb")};
    std::vector<std::vector<history_identity>> rows = {
        {row("__main__", "h1", 400), row("warp.builtins", "w", 50)},
        {row("__main__", "h1", 404), row("warp.builtins", "w", 51)},
        {row("__main__", "h1", 402), row("__main__", "h2", 380), row("warp.builtins", "w", 50)},
        {row("__main__", "h1", 399), row("__main__", "h2", 384), row("warp.builtins", "w", 49)},
    };
    const auto t = build_trend(runs, rows);
    ASSERT_FALSE(t.total_steps.empty());
    EXPECT_EQ(t.total_steps[0].at_run, 9);
    EXPECT_EQ(t.total_steps[0].measure, series_measure::identities);
    ASSERT_EQ(t.total_steps[0].changed.size(), 1u);
    EXPECT_EQ(t.total_steps[0].changed[0], "commit aaaa -> bbbb");
    const auto& main = t.modules.front();
    EXPECT_EQ(main.module, "__main__");
    ASSERT_EQ(main.steps.size(), 2u);  // identities 1 -> 2 and cold ms ~400 -> ~780
    for (const auto& s : main.steps)
    {
        EXPECT_EQ(s.at_run, 9);
    }
    for (const auto& m : t.modules)
    {
        if (m.module == "warp.builtins")
        {
            EXPECT_TRUE(m.steps.empty());
        }
    }
    const std::string text = render_trend(t);
    EXPECT_NE(text.find("step at run @9: identities 2 -> 3; changed: commit aaaa -> bbbb"), std::string::npos) << text;
}

TEST(Diff, NamesNewAndGoneIdentities)
{
    const auto d = build_history_diff(run_with(1, "a"), {row("m", "1111111x", 100), row("n", "2222222x", 50)},
                                      run_with(2, "b"), {row("m", "3333333x", 180), row("n", "2222222x", 50)});
    ASSERT_EQ(d.modules.size(), 1u);
    EXPECT_EQ(d.unchanged, 1);
    EXPECT_EQ(d.modules[0].added, std::vector<std::string>{"3333333@1"});
    EXPECT_EQ(d.modules[0].removed, std::vector<std::string>{"1111111@1"});
    EXPECT_DOUBLE_EQ(d.modules[0].delta_ms, 80.0);
}

TEST(Store, KeepsARunOnceAndReadsItBack)
{
    temp_folder tmp;
    std::vector<std::string> notes;
    run_store store((tmp.path / "sub" / "h.sqlite3").string(), &notes);
    EXPECT_TRUE(notes.empty());
    const report r = recorded("cs1_late");
    const auto id = store.add_report(r, run_kind::measure);
    EXPECT_EQ(store.add_report(r, run_kind::measure), id);  // same content: same run
    const auto runs = store.runs({});
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].identities, static_cast<int>(r.result.identities.size()));
    EXPECT_EQ(runs[0].fp.command, series_command(r));
    EXPECT_EQ(store.identities(id).size(), r.result.identities.size());
    // each identity's source bytes are those of its first load that has them
    int with_bytes = 0;
    for (const auto& row : store.identities(id))
    {
        std::int64_t first = -1;
        for (const auto& s : r.samples)
        {
            for (const auto& l : s.cold.module_loads)
            {
                if (s.ok() && first < 0 && l.source_bytes && l.module == row.module && l.hash == row.hash
                    && l.device == row.device)
                {
                    first = *l.source_bytes;
                }
            }
        }
        EXPECT_EQ(row.source_bytes, first) << row.module << " " << row.hash;
        with_bytes += first >= 0 ? 1 : 0;
    }
    EXPECT_GT(with_bytes, 0);
    EXPECT_EQ(store.find(r), id);
    const report back = report_from_text(store.report_json(id));
    EXPECT_EQ(back.result.identities.size(), r.result.identities.size());
    EXPECT_THROW(store.report_json(id + 100), store_error);
    {
        SQLite::Database db((tmp.path / "sub" / "h.sqlite3").string());
        EXPECT_EQ(db.execAndGet("PRAGMA user_version").getInt(), store_schema_version);
        EXPECT_EQ(db.execAndGet("PRAGMA journal_mode").getString(), "wal");
    }
}

// Each replay is stored with its saving on the clock it was judged on: the store once chose
// the clock by comparing judged_on, a sentence, with a word, and stored every replay's cold
// module saving.
TEST(Store, AReplaysSavingIsStoredOnTheClockItWasJudgedOn)
{
    temp_folder tmp;
    run_store store((tmp.path / "h.sqlite3").string(), nullptr);
    report r = recorded("cs1_late");
    whatif_result on_elapsed;
    on_elapsed.lever = "parallel-preload";
    on_elapsed.verdict = verdict::improved;
    on_elapsed.samples = 3;
    on_elapsed.savings = {{clock::cold_module_work, -900.0}, {clock::compile_elapsed, 1200.0}};
    on_elapsed.judged_on = {clock::compile_elapsed, "builds overlapped, so summed module work overstates the time waited"};
    whatif_result on_cpu;
    on_cpu.lever = "backward-off";
    on_cpu.verdict = verdict::improved;
    on_cpu.samples = 3;
    on_cpu.savings = {{clock::cold_module_work, 700.0}, {clock::cold_module_cpu, 450.0}};
    on_cpu.judged_on = {clock::cold_module_cpu, "builds were serial and the compiled structure changed"};
    whatif_result on_wall;
    on_wall.lever = "xdist-loadfile";
    on_wall.verdict = verdict::regressed;
    on_wall.samples = 2;
    on_wall.savings = {{clock::cold_module_work, 50.0}, {clock::cold_wall, -3100.0}};
    on_wall.judged_on = {clock::cold_wall, "a change to how a test suite runs"};
    r.whatif = {on_elapsed, on_cpu, on_wall};
    const auto id = store.add_report(r, run_kind::measure);
    const auto replays = store.replays(id);
    ASSERT_EQ(replays.size(), 3u);
    EXPECT_EQ(replays[0].lever, "parallel-preload");
    EXPECT_EQ(replays[0].clock, clock::compile_elapsed);
    EXPECT_EQ(replays[0].saving_ms, 1200.0);
    EXPECT_EQ(replays[1].clock, clock::cold_module_cpu);
    EXPECT_EQ(replays[1].saving_ms, 450.0);
    EXPECT_EQ(replays[2].clock, clock::cold_wall);
    EXPECT_EQ(replays[2].saving_ms, -3100.0);
    EXPECT_EQ(replays[2].verdict, verdict::regressed);
}

// The report's text goes into its row a block at a time, never held whole: what is read back
// is report_json_text's text to the byte, for a report several blocks long, and its digest is
// the FNV-1a of that text, the key rows stored by earlier versions were given (found again).
TEST(Store, TheTextIsStoredWholeAcrossBlocksUnderTheDigestEarlierVersionsGave)
{
    temp_folder tmp;
    run_store store((tmp.path / "h.sqlite3").string(), nullptr);
    report r = recorded("cs1_late");
    for (int i = 2; i <= 40; ++i)  // several 64 KB blocks of text
    {
        r.samples.push_back(r.samples.front());
        r.samples.back().index = i;
    }
    analyze(r);
    const std::string text = report_json_text(r);
    ASSERT_GT(text.size(), 3u * 65536u);
    const auto id = store.add_report(r, run_kind::measure);
    EXPECT_EQ(store.report_json(id), text);
    std::uint64_t h = 1469598103934665603ULL;
    for (const unsigned char c : text)
    {
        h = (h ^ c) * 1099511628211ULL;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    SQLite::Database db((tmp.path / "h.sqlite3").string());
    SQLite::Statement q(db, "SELECT digest, length(report) FROM runs WHERE id = ?");
    q.bind(1, id);
    ASSERT_TRUE(q.executeStep());
    EXPECT_EQ(q.getColumn(0).getString(), hex);
    EXPECT_EQ(q.getColumn(1).getInt64(), static_cast<std::int64_t>(text.size()));
}

TEST(Store, ACorruptFileIsMovedAsideAndAFreshStoreStarts)
{
    temp_folder tmp;
    const auto path = (tmp.path / "h.sqlite3").string();
    {
        std::ofstream f(path);
        f << std::string(8192, 'x');
    }
    std::vector<std::string> notes;
    run_store store(path, &notes);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("is not a readable store"), std::string::npos) << notes[0];
    EXPECT_NE(notes[0].find("moved aside to " + path + ".corrupt-"), std::string::npos) << notes[0];
    int aside = 0;
    for (const auto& e : fs::directory_iterator(tmp.path))
    {
        aside += e.path().filename().string().find("h.sqlite3.corrupt-") == 0 ? 1 : 0;
    }
    EXPECT_EQ(aside, 1);
    EXPECT_GT(store.add_report(recorded("clean"), run_kind::measure), 0);
}

TEST(Store, AFileFromANewerXwarpIsMovedAside)
{
    temp_folder tmp;
    const auto path = (tmp.path / "h.sqlite3").string();
    {
        SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
        db.exec("CREATE TABLE future (x); PRAGMA user_version = 99");
    }
    std::vector<std::string> notes;
    run_store store(path, &notes);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("newer xwarp (store schema 99"), std::string::npos) << notes[0];
    EXPECT_TRUE(store.runs({}).empty());
}

TEST(Store, RememberRunNeverThrowsAndSaysWhy)
{
    std::vector<std::string> notes;
    store_location where;
    where.path = "/proc/no-such-place/h.sqlite3";
    EXPECT_FALSE(remember_run(where, recorded("clean"), run_kind::measure, notes));
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("not stored in the history"), std::string::npos);
    store_location off;
    off.off = true;
    notes.clear();
    EXPECT_FALSE(remember_run(off, recorded("clean"), run_kind::measure, notes));
    EXPECT_TRUE(notes.empty());
}

TEST(Store, TwoWritersAtOnceBothLand)
{
    temp_folder tmp;
    const auto path = (tmp.path / "h.sqlite3").string();
    const report base = recorded("clean");
    std::atomic<int> failures{0};
    auto writer = [&](int who)
    {
        for (int i = 0; i < 15; ++i)
        {
            report r = base;
            r.label = "writer " + std::to_string(who) + " run " + std::to_string(i);
            std::vector<std::string> notes;
            if (!remember_run(store_location{path, false, "test"}, r, run_kind::measure, notes) || !notes.empty())
            {
                ++failures;
            }
        }
    };
    std::thread a(writer, 1), b(writer, 2);
    a.join();
    b.join();
    EXPECT_EQ(failures.load(), 0);
    std::vector<std::string> notes;
    run_store store(path, &notes);
    history_filter all;
    all.limit = 0;
    EXPECT_EQ(store.runs(all).size(), 30u);
}

TEST(Store, MachineTableOfTwoFingerprints)
{
    temp_folder tmp;
    std::vector<std::string> notes;
    run_store store((tmp.path / "h.sqlite3").string(), &notes);
    report a = recorded("cs1_late");
    report b = a;
    a.env.host = "node-a100";
    b.env.host = "node-h200";
    b.env.gpus.push_back({0, "NVIDIA H200", "9.0", 1});
    store.add_report(a, run_kind::import);
    store.add_report(b, run_kind::import);
    const auto latest = store.latest_per_machine(series_command(a));
    ASSERT_EQ(latest.size(), 2u);
    std::vector<std::vector<history_identity>> rows;
    for (const auto& r : latest)
    {
        rows.push_back(store.identities(r.id));
    }
    const auto t = build_machine_table(series_command(a), latest, rows);
    EXPECT_EQ(t.machines, (std::vector<std::string>{"node-a100", "node-h200"}));
    ASSERT_FALSE(t.rows.empty());
    EXPECT_TRUE(t.rows[0].ms[0] && t.rows[0].ms[1]);
    EXPECT_NE(render_machine_table(t).find("node-h200"), std::string::npos);
}

TEST(HistoryView, TheHtmlShowsSparklinesAndSaysThisRunIsAStep)
{
    std::vector<history_run> runs = {run_with(1, "a"), run_with(2, "a"), run_with(3, "b")};
    std::vector<std::vector<history_identity>> rows = {
        {row("__main__", "h1", 400)}, {row("__main__", "h1", 401)}, {row("__main__", "h1", 400), row("__main__", "h2", 390)}};
    run_series v;
    v.store = "/tmp/h.sqlite3";
    v.this_run = 3;
    v.trend = build_trend(runs, rows);
    const std::string html = render_html(recorded("clean"), {}, &v);
    EXPECT_NE(html.find("data-xwarp=\"history\""), std::string::npos);
    EXPECT_NE(html.find("this run is a step"), std::string::npos);
    EXPECT_NE(html.find("<polyline"), std::string::npos);
    EXPECT_EQ(render_html(recorded("clean")).find("data-xwarp=\"history\""), std::string::npos);
}

TEST(Budget, ParsesTheGrammarAndRefusesInWords)
{
    const auto limits = parse_budget("identities<=3,builds-per-module<=1,cold-module-ms<=2500.5");
    ASSERT_EQ(limits.size(), 3u);
    EXPECT_EQ(limits[2].metric, "cold-module-ms");
    EXPECT_DOUBLE_EQ(limits[2].limit, 2500.5);
    try
    {
        parse_budget("identities<3");
        FAIL();
    }
    catch (const budget_error& e)
    {
        EXPECT_STREQ(e.what(), "'identities<3' is not METRIC<=NUMBER or METRIC>=NUMBER");
    }
    EXPECT_THROW(parse_budget("speed<=3"), budget_error);
    EXPECT_THROW(parse_budget("identities<=x"), budget_error);
    EXPECT_THROW(parse_budget("identities<=-1"), budget_error);
    EXPECT_THROW(parse_budget("identities<=1,"), budget_error);
}

TEST(Budget, NamesTheModuleThatBuiltTwice)
{
    const report r = recorded("cs1_late");
    const auto results = check_budget(r, parse_budget("builds-per-module<=1,identities<=100"));
    ASSERT_EQ(results.size(), 2u);
    EXPECT_TRUE(results[0].exceeded);
    EXPECT_EQ(results[0].module, "__main__ on cpu");
    EXPECT_NE(results[0].message.find("builds-per-module 2 > 1: __main__ on cpu built 2 time(s)"), std::string::npos)
        << results[0].message;
    EXPECT_FALSE(results[1].exceeded);
    const auto clean = check_budget(recorded("clean"), parse_budget("builds-per-module<=1"));
    EXPECT_FALSE(clean[0].exceeded) << clean[0].message;
}

TEST(Budget, APassThatUsedACacheOfItsOwnIsNotJudged)
{
    // the CS-2 cheat: the program points Warp at a folder of its own, so a second run finds
    // everything built and "identities<=2" would be met by a run that built nothing
    report r = recorded("clean");
    const auto met = check_budget(r, parse_budget("identities<=100,builds-per-module<=1"));
    EXPECT_FALSE(met[0].exceeded || met[1].exceeded);
    r.samples.at(0).warm->caches_outside = {"/home/student/my_cache"};
    const auto refused = check_budget(r, parse_budget("identities<=100,builds-per-module<=1"));
    ASSERT_EQ(refused.size(), 2u);
    for (const auto& b : refused)
    {
        EXPECT_TRUE(b.exceeded);
        EXPECT_NE(b.message.find("not judged: a process used the kernel cache /home/student/my_cache"), std::string::npos)
            << b.message;
    }
    // kept through the JSON
    const report back = report_from_json(report_to_json(r));
    EXPECT_EQ(back.samples.at(0).warm->caches_outside, std::vector<std::string>{"/home/student/my_cache"});
}

TEST(ProjectCommit, ReadsHeadRefsAndPackedRefsWithoutGit)
{
    temp_folder tmp;
    const std::string a(40, 'a'), b(40, 'b');
    fs::create_directories(tmp.path / ".git" / "refs" / "heads");
    fs::create_directories(tmp.path / "src" / "deep");
    std::ofstream(tmp.path / ".git" / "HEAD") << "ref: refs/heads/main\n";
    EXPECT_EQ(project_commit((tmp.path / "src" / "deep").string()), "");  // no commit yet
    std::ofstream(tmp.path / ".git" / "packed-refs") << "# pack-refs with: peeled\n" << b << " refs/heads/main\n";
    EXPECT_EQ(project_commit((tmp.path / "src" / "deep").string()), b);
    std::ofstream(tmp.path / ".git" / "refs" / "heads" / "main") << a << "\n";
    EXPECT_EQ(project_commit((tmp.path / "src").string()), a);
    EXPECT_EQ(project_commit("/proc"), "");
}

TEST(Steps, ATimeAtTheLastRunIsNotAStepAndSeenNoiseWidensTheBand)
{
    // Recorded on this machine with --samples 1 (a precompiled-header write that varies by
    // 0.4 s): the last run is as far from the level as run 2 was, and run 2 did not persist.
    EXPECT_TRUE(detect_steps({2390, 2800, 2370, 2830}, std::vector<double>(4, 120.0), series_measure::cold_ms).empty());
    // A real step after such an excursion is still found once it persists.
    const auto steps = detect_steps({2390, 2800, 2370, 4100, 4150}, std::vector<double>(5, 120.0), series_measure::cold_ms);
    ASSERT_EQ(steps.size(), 1u);
    EXPECT_EQ(steps[0].index, 3);
    EXPECT_TRUE(steps[0].confirmed);
}

TEST(Budget, WarmBuildsSaysWhetherTheCacheIsReused)
{
    // cache_many_causes throws its cache away: the warm pass builds again; clean reuses it.
    report thrown = load_recorded_run(std::string(XWARP_FIXTURES_DIR) + "/streams/cache_many_causes-warp1.19.0");
    analyze(thrown);
    const auto over = check_budget(thrown, parse_budget("warm-builds<=0"));
    ASSERT_EQ(over.size(), 1u);
    EXPECT_TRUE(over[0].exceeded) << over[0].message;
    EXPECT_NE(over[0].message.find("on a warm cache"), std::string::npos) << over[0].message;
    report reused = load_recorded_run(std::string(XWARP_FIXTURES_DIR) + "/streams/clean-warp1.19.0");
    analyze(reused);
    const auto ok = check_budget(reused, parse_budget("warm-builds<=0"));
    EXPECT_FALSE(ok[0].exceeded) << ok[0].message;
    EXPECT_EQ(*ok[0].value, 0.0);
}

TEST(Budget, AFloorIsWrittenWithGreaterOrEqualAndFailsUnder)
{
    const auto limits = parse_budget("build-overlap>=1.3,identities<=2");
    ASSERT_EQ(limits.size(), 2u);
    EXPECT_TRUE(limits[0].at_least);
    EXPECT_FALSE(limits[1].at_least);
    EXPECT_THROW(parse_budget("build-overlap>=-1"), budget_error);
    EXPECT_THROW(parse_budget("build-overlap=>1"), budget_error);

    // Two builds of one second, the second starting half-way through the first: overlap 4/3.
    report r = recorded("clean");
    auto& loads = r.samples.front().cold.module_loads;
    ASSERT_FALSE(loads.empty());
    module_load second = loads.front();
    second.module = "second_module";
    second.hash = "ffff";
    auto& first = loads.front();
    first.total_ms = second.total_ms = 1000.0;
    second.t_start_ms = first.t_start_ms + 500.0;
    loads.push_back(second);
    analyze(r);
    const auto met = check_budget(r, parse_budget("build-overlap>=1.3"));
    ASSERT_TRUE(met[0].value);
    EXPECT_FALSE(met[0].exceeded) << met[0].message;
    EXPECT_NE(met[0].message.find("build-overlap 1.33 >= 1.30"), std::string::npos) << met[0].message;
    const auto missed = check_budget(r, parse_budget("build-overlap>=1.5"));
    EXPECT_TRUE(missed[0].exceeded);
    EXPECT_NE(missed[0].message.find("build-overlap 1.33 < 1.50"), std::string::npos) << missed[0].message;
    EXPECT_NE(render_budget_text(missed, "expect").find("UNDER"), std::string::npos);

    // One build: nothing could overlap, so a floor cannot be met, and says why.
    const auto one = check_budget(recorded("clean"), parse_budget("build-overlap>=1.3"));
    EXPECT_TRUE(one[0].exceeded);
    EXPECT_NE(one[0].message.find("not known"), std::string::npos) << one[0].message;
}

TEST(Budget, BackwardModulesCountsModulesBuiltWithAdjointCode)
{
    // Recorded with the default options: every module carries backward code.
    const report with_backward = recorded("cs1_factory");
    const auto over = check_budget(with_backward, parse_budget("backward-modules<=0"));
    ASSERT_TRUE(over[0].value);
    EXPECT_GE(*over[0].value, 1.0);
    EXPECT_TRUE(over[0].exceeded);
    EXPECT_NE(over[0].message.find("was built with backward (adjoint) code"), std::string::npos) << over[0].message;

    // The same loads with the option recorded off: a forward-only build.
    report forward = recorded("cs1_factory");
    for (auto& smp : forward.samples)
    {
        for (auto& l : smp.cold.module_loads)
        {
            ASSERT_TRUE(l.snapshot);
            nlohmann::json options = *l.snapshot->options;
            options["enable_backward"] = false;
            l.snapshot->options = shared_options(options);
        }
    }
    const auto met = check_budget(forward, parse_budget("backward-modules<=0"));
    EXPECT_FALSE(met[0].exceeded) << met[0].message;
    EXPECT_EQ(*met[0].value, 0.0);

    // The module's option on, each kernel's own off (@wp.kernel(enable_backward=False)): Warp
    // generates no adjoint for any of them, so the build is forward-only; one kernel left on
    // brings the module's backward code back.
    report per_kernel = recorded("cs1_factory");
    for (auto& smp : per_kernel.samples)
    {
        for (auto& l : smp.cold.module_loads)
        {
            ASSERT_FALSE(l.snapshot->kernels.empty());
            for (auto& k : l.snapshot->kernels)
            {
                k.enable_backward = false;
            }
        }
    }
    EXPECT_FALSE(check_budget(per_kernel, parse_budget("backward-modules<=0"))[0].exceeded);
    per_kernel.samples[0].cold.module_loads[0].snapshot->kernels[0].enable_backward.reset();
    EXPECT_TRUE(check_budget(per_kernel, parse_budget("backward-modules<=0"))[0].exceeded);

    // No snapshot recorded the option (Warp's log lines only): not known, counted as not met.
    report log_only = recorded("cs1_late_log_only");
    const auto unknown = check_budget(log_only, parse_budget("backward-modules<=0"));
    EXPECT_FALSE(unknown[0].value);
    EXPECT_TRUE(unknown[0].exceeded);
}

TEST(Budget, WorkloadSameIsJudgedOnTheComparisonAndNamesTheMissingLaunch)
{
    const auto limits = parse_budget("identities<=9,workload=same");
    ASSERT_EQ(limits.size(), 2u);
    EXPECT_TRUE(needs_compared_run(limits));
    EXPECT_FALSE(needs_compared_run(parse_budget("identities<=9")));
    EXPECT_THROW(parse_budget("workload=different"), budget_error);

    const report r = recorded("cs1_factory");
    // without a run to compare with, the clause cannot be met
    const auto alone = check_budget(r, limits);
    EXPECT_TRUE(alone[1].exceeded);
    EXPECT_NE(alone[1].message.find("--compare"), std::string::npos) << alone[1].message;

    workload_check same;
    same.status = workload_status::same;
    EXPECT_FALSE(check_budget(r, limits, {&same})[1].exceeded);

    workload_check changed;
    changed.status = workload_status::changed;
    changed.reason = "the launch sequences part at launch #2";
    launch_divergence d;
    d.index = 1;
    d.before = launch_record{};
    d.before->kernel = "damp";
    changed.first_divergence = d;
    const auto cheated = check_budget(r, limits, {&changed});
    EXPECT_TRUE(cheated[1].exceeded);
    EXPECT_NE(cheated[1].message.find("missing: damp (launch #2)"), std::string::npos) << cheated[1].message;
    EXPECT_NE(render_budget_text(cheated, "Expectation").find("CHANGED"), std::string::npos);
}

// kernels=same: the launches kept and none now another kernel (a kernel swapped for another with
// the same arguments keeps workload=same: compare's gate lets a kernel be renamed).
TEST(Budget, KernelsSameRefusesAKernelSwappedForAnotherWithTheSameArguments)
{
    const auto limits = parse_budget("workload=same,kernels=same");
    EXPECT_TRUE(needs_compared_run(parse_budget("kernels=same")));
    EXPECT_THROW(parse_budget("kernels=other"), budget_error);
    const report r = recorded("cs1_factory");
    EXPECT_TRUE(check_budget(r, limits)[1].exceeded) << "no run to compare with";

    workload_check same;
    same.status = workload_status::same;
    same.reason = "2 launches in the same order";
    EXPECT_FALSE(check_budget(r, limits, {&same})[1].exceeded);

    workload_check swapped = same;
    swapped.renames.push_back({"damp", "integrate"});
    const auto cheated = check_budget(r, limits, {&swapped});
    EXPECT_FALSE(cheated[0].exceeded) << "the workload alone lets it pass";
    EXPECT_TRUE(cheated[1].exceeded);
    EXPECT_NE(cheated[1].message.find("launched damp, this one launches integrate"), std::string::npos) << cheated[1].message;

    workload_check changed;
    changed.status = workload_status::changed;
    EXPECT_TRUE(check_budget(r, limits, {&changed})[1].exceeded);
}

namespace
{
    // A good one-sample report whose cell left these arrays (the shim's "results" call).
    report with_results(const nlohmann::json& arrays)
    {
        report r = recorded("cs1_factory");
        for (auto& smp : r.samples)
        {
            for (auto& p : smp.cold.processes)
            {
                api_call_event c;
                c.function = "results";
                c.args = arrays;
                p.calls.push_back(c);
            }
        }
        return r;
    }
}

// results=same: the arrays the compared run left hold the same figures, to a relative 1e-4.
TEST(Budget, ResultsSameComparesTheArraysTheCellLeftWithTheComparedRuns)
{
    const auto limits = parse_budget("results=same");
    const nlohmann::json a = {{"dtype", "vec3f"}, {"shape", {64}}, {"n", 192}, {"nonfinite", 0},
                              {"sum", 96.5}, {"abs_sum", 120.25}, {"min", -0.5}, {"max", 1.25}};
    const report before = with_results({{"a", a}, {"m", a}});
    auto nearly = a;
    nearly["sum"] = 96.5 * (1 + 2e-6);  // fast_math's last bits
    EXPECT_FALSE(check_budget(with_results({{"a", nearly}, {"m", a}, {"extra", a}}), limits, {nullptr, &before})[0].exceeded);

    auto other = a;
    other["sum"] = 80.0;
    const auto differ = check_budget(with_results({{"a", other}, {"m", a}}), limits, {nullptr, &before});
    EXPECT_TRUE(differ[0].exceeded);
    EXPECT_NE(differ[0].message.find("a: sum 80.0, was 96.5"), std::string::npos) << differ[0].message;

    const auto gone = check_budget(with_results({{"m", a}}), limits, {nullptr, &before});
    EXPECT_TRUE(gone[0].exceeded);
    EXPECT_NE(gone[0].message.find("a is gone"), std::string::npos) << gone[0].message;

    const report nothing = recorded("cs1_factory");
    EXPECT_TRUE(check_budget(nothing, limits, {nullptr, &before})[0].exceeded) << "this run recorded no arrays";
    EXPECT_TRUE(check_budget(with_results({{"a", a}}), limits, {nullptr, &nothing})[0].exceeded);
    EXPECT_TRUE(check_budget(with_results({{"a", a}}), limits)[0].exceeded) << "no run to compare with";
}

// option:MODULE.KEY=VALUE: the module's last cold load carried the option at that value.
TEST(Budget, AnOptionClauseIsJudgedOnTheModulesLastColdLoad)
{
    EXPECT_THROW(parse_budget("option:fast_math=true"), budget_error) << "no module";
    EXPECT_THROW(parse_budget("option:__main__.fast_math"), budget_error) << "no value";
    const auto parsed = parse_budget("option:my.pkg.max_unroll=32");
    ASSERT_EQ(parsed.size(), 1u);
    EXPECT_EQ(parsed[0].module, "my.pkg");
    EXPECT_EQ(parsed[0].option, "max_unroll");
    EXPECT_EQ(parsed[0].value_json, "32");
    EXPECT_EQ(parse_budget("option:m.fast_math=True")[0].value_json, "true");
    EXPECT_EQ(parse_budget("option:m.mode=debug")[0].value_json, "\"debug\"");

    report r = recorded("cs1_factory");
    const std::string module = r.samples[0].cold.module_loads.back().module;
    nlohmann::json options = *r.samples[0].cold.module_loads.back().snapshot->options;
    options["max_unroll"] = 32;
    r.samples[0].cold.module_loads.back().snapshot->options = shared_options(options);
    EXPECT_FALSE(check_budget(r, parse_budget("option:" + module + ".max_unroll=32"))[0].exceeded);
    const auto wrong = check_budget(r, parse_budget("option:" + module + ".max_unroll=8"));
    EXPECT_TRUE(wrong[0].exceeded);
    EXPECT_NE(wrong[0].message.find("32, expected 8"), std::string::npos) << wrong[0].message;
    EXPECT_TRUE(check_budget(r, parse_budget("option:no_such_module.max_unroll=32"))[0].exceeded);

    // option:@KERNEL: the module that holds the kernel, whatever it is called (module="unique"
    // with module_options is a correct answer to CS-3, and its module's name is a hash)
    const std::string kernel = r.samples[0].cold.module_loads.back().snapshot->kernels.at(0).key;
    const auto by_kernel = check_budget(r, parse_budget("option:@" + kernel + ".max_unroll=32"));
    EXPECT_FALSE(by_kernel[0].exceeded) << by_kernel[0].message;
    EXPECT_EQ(by_kernel[0].module, module);
    EXPECT_NE(by_kernel[0].message.find("which holds " + kernel), std::string::npos) << by_kernel[0].message;
    const auto absent = check_budget(r, parse_budget("option:@no_such_kernel.max_unroll=32"));
    EXPECT_TRUE(absent[0].exceeded);
    EXPECT_NE(absent[0].message.find("no module holding the kernel no_such_kernel"), std::string::npos) << absent[0].message;
}

// launch-builds: compiled loads a launch waited for; a preload's do not count.
TEST(Budget, LaunchBuildsCountsWhatNoPreloadBuilt)
{
    report r = recorded("cs1_factory");
    const auto before = check_budget(r, parse_budget("launch-builds<=0"));
    ASSERT_TRUE(before[0].value);
    EXPECT_GT(*before[0].value, 0.0);
    EXPECT_TRUE(before[0].exceeded);
    for (auto& smp : r.samples)
    {
        for (auto& ld : smp.cold.module_loads)
        {
            ld.via_preload = true;
        }
    }
    EXPECT_FALSE(check_budget(r, parse_budget("launch-builds<=0"))[0].exceeded);
}

TEST(Store, ASuitesTestsAreKeptPerRunAndTrendedTestByTest)
{
    temp_folder tmp;
    std::vector<std::string> notes;
    run_store store((tmp.path / "h.sqlite3").string(), &notes);
    const report suite = recorded("suite_xdist");
    ASSERT_FALSE(suite.result.tests.empty());
    report later = suite;
    later.created_utc = "2099-01-01T00:00:00Z";  // another run of the series
    later.result.tests.front().build_ms *= 3.0;
    const std::int64_t first = store.add_report(suite, run_kind::measure);
    store.add_report(later, run_kind::measure);
    const auto kept = store.tests(first);
    ASSERT_EQ(kept.size(), suite.result.tests.size());
    EXPECT_EQ(kept.front().test, suite.result.tests.front().test);  // costliest first, as the report ranks them
    EXPECT_DOUBLE_EQ(kept.front().build_ms, suite.result.tests.front().build_ms);
    EXPECT_TRUE(store.tests(store.add_report(recorded("clean"), run_kind::measure)).empty());  // no suite, no rows

    const auto runs = store.series(suite.env.host, series_command(suite));
    ASSERT_EQ(runs.size(), 2u);
    std::vector<std::vector<history_identity>> rows;
    std::vector<std::vector<test_cost>> tests;
    for (const auto& r : runs)
    {
        rows.push_back(store.identities(r.id));
        tests.push_back(store.tests(r.id));
    }
    history_trend t = build_trend(runs, rows);
    add_test_trends(t, tests);
    ASSERT_EQ(t.tests.size(), suite.result.tests.size());
    EXPECT_EQ(t.tests.front().test, suite.result.tests.front().test);
    ASSERT_EQ(t.tests.front().build_ms.size(), 2u);
    EXPECT_DOUBLE_EQ(*t.tests.front().build_ms[1], 3.0 * *t.tests.front().build_ms[0]);
    EXPECT_NE(render_trend(t).find("Per test (build ms it paid per run"), std::string::npos);
}

namespace
{
    test_cost suite_test(const std::string& name, std::vector<std::pair<std::string, std::string>> built, double ms)
    {
        test_cost t;
        t.test = name;
        for (const auto& [module, hash] : built)
        {
            built_identity b;
            b.module = module;
            b.hash = hash;
            b.device = "cpu";
            b.ms = ms / static_cast<double>(built.size());
            t.identities.push_back(b);
        }
        t.builds = static_cast<int>(t.identities.size());
        t.build_ms = built.empty() ? 0.0 : ms;
        return t;
    }
}

TEST(Trend, ATestStepsWhereWhatItBuiltChangedNotWhereXdistMovedABuildOrTheTimeMoved)
{
    std::vector<history_run> runs = {run_with(1, "a"), run_with(2, "a"), run_with(3, "a"), run_with(4, "b"), run_with(5, "b")};
    history_trend t = build_trend(runs, std::vector<std::vector<history_identity>>(runs.size()));
    std::vector<std::vector<test_cost>> tests = {
        {suite_test("t.py::a", {{"sim", "1111111aa"}}, 400), suite_test("t.py::b", {}, 0)},
        // xdist drew b first: b built sim, a reused nothing new (a move, not a step)
        {suite_test("t.py::a", {}, 0), suite_test("t.py::b", {{"sim", "1111111aa"}}, 410)},
        // the same build, twice the time (a loaded machine): no step with identities known
        {suite_test("t.py::a", {{"sim", "1111111aa"}}, 900), suite_test("t.py::b", {}, 0)},
        // the code changed: a builds a new identity of sim
        {suite_test("t.py::a", {{"sim", "2222222bb"}}, 420), suite_test("t.py::b", {}, 0)},
        {suite_test("t.py::a", {{"sim", "2222222bb"}}, 415), suite_test("t.py::b", {}, 0)},
    };
    add_test_trends(t, tests);
    for (const auto& tt : t.tests)
    {
        if (tt.test == "t.py::a")
        {
            ASSERT_EQ(tt.steps.size(), 1u) << render_trend(t);
            EXPECT_EQ(tt.steps[0].at_run, 4);
            EXPECT_EQ(tt.steps[0].measure, series_measure::identities);
            EXPECT_EQ(tt.steps[0].built, (std::vector<std::string>{"new sim 2222222 on cpu", "gone sim 1111111 on cpu"}));
        }
        else
        {
            EXPECT_TRUE(tt.steps.empty()) << render_trend(t);
        }
    }
    EXPECT_NE(render_trend(t).find("built: new sim 2222222 on cpu, gone sim 1111111 on cpu"), std::string::npos);

    // a store that did not keep what tests built falls back to time steps
    for (auto& run : tests)
    {
        for (auto& c : run)
        {
            c.identities.clear();
            c.identities_known = false;
        }
    }
    history_trend old = build_trend(runs, std::vector<std::vector<history_identity>>(runs.size()));
    add_test_trends(old, tests);
    for (const auto& tt : old.tests)
    {
        for (const auto& s : tt.steps)
        {
            EXPECT_EQ(s.measure, series_measure::cold_ms);
        }
    }
}

TEST(Trend, AModuleTimeStepWithTheSameIdentitiesSaysTheTimeMovedNotTheCode)
{
    std::vector<history_run> runs = {run_with(1, "a"), run_with(2, "a"), run_with(3, "a"), run_with(4, "a"), run_with(5, "a")};
    std::vector<std::vector<history_identity>> rows = {
        {row("sim", "h1", 400)}, {row("sim", "h1", 402)}, {row("sim", "h1", 401)}, {row("sim", "h1", 900)}, {row("sim", "h1", 905)}};
    const auto t = build_trend(runs, rows);
    ASSERT_EQ(t.modules.size(), 1u);
    ASSERT_EQ(t.modules[0].steps.size(), 1u);
    EXPECT_TRUE(t.modules[0].steps[0].same_builds);
    EXPECT_NE(step_line(t.modules[0].steps[0]).find("the time moved"), std::string::npos);

    rows[3] = {row("sim", "h2", 900)};
    rows[4] = {row("sim", "h2", 905)};
    const auto changed = build_trend(runs, rows);
    ASSERT_FALSE(changed.modules[0].steps.empty());
    for (const auto& s : changed.modules[0].steps)
    {
        EXPECT_FALSE(s.same_builds);
        EXPECT_EQ(s.built, (std::vector<std::string>{"new sim h2 on cpu block_dim 1", "gone sim h1 on cpu block_dim 1"}));
    }
}

TEST(Diff, NamesTheTestsThatPayForEachNewIdentity)
{
    std::vector<test_cost> b_tests = {suite_test("t.py::a", {{"m", "3333333x"}}, 180), suite_test("t.py::b", {}, 0)};
    b_tests[0].identities[0].block_dim = 1;
    const auto d = build_history_diff(run_with(1, "a"), {row("m", "1111111x", 100)}, run_with(2, "b"),
                                      {row("m", "3333333x", 180)}, b_tests);
    ASSERT_EQ(d.modules.size(), 1u);
    ASSERT_EQ(d.modules[0].paid_by.count("3333333@1"), 1u);
    EXPECT_EQ(d.modules[0].paid_by.at("3333333@1"), std::vector<std::string>{"t.py::a"});
    EXPECT_NE(render_history_diff(d).find("3333333@1 paid by t.py::a"), std::string::npos) << render_history_diff(d);
}

TEST(Store, WhatEachTestBuiltIsKeptAndOlderRowsSayTheyDoNotKnow)
{
    temp_folder tmp;
    std::vector<std::string> notes;
    const std::string path = (tmp.path / "h.sqlite3").string();
    const report suite = recorded("suite_xdist");
    std::int64_t id = 0;
    {
        run_store store(path, &notes);
        id = store.add_report(suite, run_kind::measure);
        const auto kept = store.tests(id);
        ASSERT_EQ(kept.size(), suite.result.tests.size());
        for (const auto& k : kept)
        {
            EXPECT_TRUE(k.identities_known);
            EXPECT_EQ(static_cast<int>(k.identities.size()), k.builds) << k.test;
            for (const auto& t : suite.result.tests)
            {
                if (t.test == k.test)
                {
                    ASSERT_EQ(k.identities.size(), t.identities.size());
                    for (std::size_t i = 0; i < t.identities.size(); ++i)
                    {
                        EXPECT_EQ(k.identities[i].hash, t.identities[i].hash);
                        EXPECT_EQ(k.identities[i].module.str(), t.identities[i].module.str());
                        EXPECT_EQ(k.identities[i].block_dim, t.identities[i].block_dim);
                    }
                }
            }
        }
    }
    {
        SQLite::Database db(path, SQLite::OPEN_READWRITE);
        db.exec("UPDATE tests SET built = NULL");  // as a store of schema 2 left its rows
    }
    run_store store(path, &notes);
    for (const auto& k : store.tests(id))
    {
        EXPECT_FALSE(k.identities_known);
        EXPECT_TRUE(k.identities.empty());
    }
}
