// Recommendations that never contradict their measurement, the replay budget spent by time at
// stake, library code marked, and each finding's code form (what warp-probe fix writes), on
// recorded shim streams. The patches themselves are written and verified on real Warp in
// tests/python/test_fix.py.
#include <gtest/gtest.h>

#include "builders.hpp"
#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/fixes.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/analysis/replay_plans.hpp"
#include "xwarp/render/html.hpp"
#include "xwarp/render/text.hpp"
#include "xwarp/engine/runner/runner.hpp"

#include "../../src/jobs/fix/project_copy.hpp"  // the fix layer's own: how a command is moved into the copy

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace xwarp;
using namespace xwarp::testing;

namespace
{
    report stream(const std::string& name)
    {
        report r = load_recorded_run(std::string(XWARP_FIXTURES_DIR) + "/streams/" + name + "-warp1.19.0");
        analyze(r);
        return r;
    }

    const finding* first(const report& r, const std::string& mechanism)
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

    whatif_result replay(const std::string& lever, const std::string& verdict, double saving_ms)
    {
        whatif_result w;
        w.lever = lever;
        w.verdict = parse_member<xwarp::verdict>(verdict);
        w.savings[xwarp::clock::cold_module_work] = saving_ms;
        w.judged_on = {xwarp::clock::cold_module_work, "builds were serial and the compiled structure changed"};
        w.band_ms = 20.0;
        w.samples = 2;
        return w;
    }

    const fix_plan* plan_for(const std::vector<fix_plan>& plans, const std::string& mechanism)
    {
        for (const auto& p : plans)
        {
            if (p.mechanism == mechanism)
            {
                return &p;
            }
        }
        return nullptr;
    }
}

TEST(Fixes, AFindingWhoseReplayRegressedNeverSaysItSaves)
{
    report r = stream("cs9_unique");
    ASSERT_NE(first(r, "CS-9"), nullptr);
    ASSERT_TRUE(first(r, "CS-9")->savings_ms);  // an estimate before the replay
    r.whatif.push_back(replay("shared-module", "regressed", -292.0));
    analyze(r);
    const finding* f = first(r, "CS-9");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->headline(), finding::headline_source::measured_no_gain);
    const std::string headline = finding_headline_words(*f);
    EXPECT_EQ(headline.find("saves"), std::string::npos) << headline;
    EXPECT_NE(headline.find("+292 ms"), std::string::npos) << headline;
    EXPECT_NE(headline.find("no saving credited"), std::string::npos) << headline;
    const std::string text = render_text(r);
    const auto line = text.substr(text.find("[CS-9]"), text.find('\n', text.find("[CS-9]")) - text.find("[CS-9]"));
    EXPECT_EQ(line.find("saves"), std::string::npos) << line;
    const std::string html = render_html(r);
    EXPECT_EQ(html.find("saves ~"), std::string::npos);
}

TEST(Fixes, AMeasuredGainIsTheHeadlineAndTheEstimateStandsBesideIt)
{
    report r = stream("cs9_unique");
    r.whatif.push_back(replay("shared-module", "improved", 250.0));
    analyze(r);
    const finding* f = first(r, "CS-9");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->headline(), finding::headline_source::measured_gain);
    const std::string headline = finding_headline_words(*f);
    EXPECT_EQ(headline.rfind("measured -250 ms cold module work, improved (n=2, band 20 ms, indicative: fewer than 3 samples "
                                "a side); estimate ~", 0), 0u) << headline;
}

TEST(Fixes, KernelsCreatedBetweenLaunchesMakeMergingTwoChangesAndTheReplayIsNotSpentOnIt)
{
    report r = stream("unique_between_launches");
    const finding* f = first(r, "CS-9");
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(field_or(f->cause.value(), "created_between_launches", false));
    EXPECT_NE(f->evidence.find("created after the first of them loaded"), std::string::npos) << f->evidence;
    EXPECT_NE(f->recommendation.str().find("the fix is two changes"), std::string::npos);
    const auto plans = plan_levers(r, {}, true);
    const auto shared = std::find_if(plans.begin(), plans.end(), [](const lever_plan& p) { return p.lever == "shared-module"; });
    ASSERT_NE(shared, plans.end());
    EXPECT_NE(shared->not_applicable.find("created between launches"), std::string::npos) << shared->not_applicable;
    // its code form names the module and moves the two late creations before the first launch
    const auto fixes = plan_fixes(r, "CS-9", "");
    ASSERT_EQ(fixes.size(), 1u);
    ASSERT_EQ(fixes[0].ops.size(), 1u);
    EXPECT_EQ(fixes[0].ops[0]["op"], "named_module");
    // one group: the kernels share the factory's default (one edit moves them all), and the two
    // late creations move with it
    ASSERT_EQ(fixes[0].ops[0]["groups"].size(), 1u);
    EXPECT_EQ(fixes[0].ops[0]["groups"][0]["places"].size(), 1u);
    EXPECT_EQ(fixes[0].ops[0]["groups"][0]["hoist_calls"].size(), 2u);
}

TEST(Fixes, TheBudgetMeasuresTheTopEstimateFirstThenWhereTheMostBuildTimeIsAtStake)
{
    report r;
    auto heavy_a = load("physics", "a", 20000);
    auto heavy_b = load("contacts", "b", 20000);
    auto small = load("small_unique_1a2b3c4d", "c", 300);
    r.samples.push_back(make_sample(1, pass(42000, {heavy_a, heavy_b, small}), pass(500, {})));
    summarize(r);
    finding backward;
    backward.mechanism = "CS-10";
    backward.lever = "backward-off";
    backward.kind = finding_kind::advisory;  // no estimate
    r.findings.push_back(backward);
    finding unique;
    unique.mechanism = "CS-9";
    unique.lever = "shared-module";
    unique.savings_ms = 108.0;
    r.findings.push_back(unique);
    finding header;
    header.mechanism = "CS-12";
    header.lever = "pch-off";
    header.kind = finding_kind::advisory;
    r.findings.push_back(header);
    const auto plans = plan_levers(r, {}, true);
    ASSERT_EQ(plans.size(), 3u);
    // the estimate the report leads with is measured first, however small
    EXPECT_EQ(plans[0].lever, "shared-module");
    EXPECT_EQ(plans[0].stake_source, "its estimate");
    // then the unestimated levers by what they can touch at most: 40 s of builds with backward
    // code before pch-off's headers (none were written here)
    EXPECT_EQ(plans[1].lever, "backward-off");
    EXPECT_NEAR(plans[1].stake_ms, 40300.0, 1.0);  // every module it builds with backward code
    EXPECT_EQ(plans[1].stake_source, "the build time it touches");
    EXPECT_EQ(plans[2].lever, "pch-off");
}

TEST(Fixes, CodeInAnInstalledPackageIsMarkedAndNeverPatched)
{
    report r = stream("cs9_unique");
    // the declarations as if the kernels lived in an installed engine
    for (auto& s : r.samples)
    {
        for (auto& p : s.cold.processes)
        {
            for (auto& c : p.calls)
            {
                if (c.file)
                {
                    c.file = "/opt/venv/lib/python3.11/site-packages/engine/filters.py";
                }
            }
        }
    }
    analyze(r);
    const finding* f = first(r, "CS-9");
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(f->library);
    EXPECT_EQ(f->recommendation.str().rfind("This is library code (/opt/venv/lib/python3.11/site-packages/engine/filters.py, an "
                                            "installed package)",
                                            0),
              0u)
        << f->recommendation.str();
    ASSERT_TRUE(f->owner);
    EXPECT_EQ(f->owner->kind, owner_kind::installed);
    EXPECT_NE(f->owner->evidence.find("by its path alone"), std::string::npos) << f->owner->evidence;
    EXPECT_NE(render_text(r).find("[library code]"), std::string::npos);
    const auto fixes = plan_fixes(r, "CS-9", "");
    ASSERT_EQ(fixes.size(), 1u);
    EXPECT_TRUE(fixes[0].ops.empty());
    EXPECT_NE(fixes[0].no_form.find("library code"), std::string::npos);
}

namespace
{
    // cs9_unique's declarations in `file`, and the run's ownership table saying whose it is.
    report owned_by(const std::string& file, const file_owner& owner)
    {
        report r = stream("cs9_unique");
        for (auto& s : r.samples)
        {
            for (auto& p : s.cold.processes)
            {
                for (auto& c : p.calls)
                {
                    if (c.file)
                    {
                        c.file = file;
                    }
                }
            }
        }
        r.cwd = "/somewhere/else";
        r.ownership.emplace();
        r.ownership->project.push_back({"/home/me/proj", "pyproject.toml above the command's entry"});
        r.ownership->files[file] = owner;
        analyze(r);
        return r;
    }
}

TEST(Fixes, TheRecordedOwnerDecidesNotTheFolderTheProbeRanIn)
{
    // the user's script, run by its path from another folder: the table says it is the project's
    const report mine = owned_by("/home/me/proj/sim.py", {owner_kind::project, "", "", "/home/me/proj, pyproject.toml"});
    const finding* f = first(mine, "CS-9");
    ASSERT_NE(f, nullptr);
    EXPECT_FALSE(f->library);
    EXPECT_EQ(f->recommendation.str().find("library"), std::string::npos) << f->recommendation.str();
    EXPECT_NE(render_text(mine).find("whose:    your project (/home/me/proj, pyproject.toml)"), std::string::npos);
    const auto mine_fixes = plan_fixes(mine, "CS-9", "");
    ASSERT_EQ(mine_fixes.size(), 1u);
    EXPECT_TRUE(mine_fixes[0].no_form.empty()) << mine_fixes[0].no_form;

    // Warp's own test module, installed with pip --target: Warp's, never patched
    const report warps = owned_by("/opt/site/warp/tests/test_x.py",
                                  {owner_kind::warp, "warp-lang", "1.19.0", "in Warp's package folder /opt/site/warp"});
    f = first(warps, "CS-9");
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(f->library);
    EXPECT_NE(f->recommendation.str().find("Warp itself (warp-lang 1.19.0)"), std::string::npos) << f->recommendation.str();
    EXPECT_NE(plan_fixes(warps, "CS-9", "")[0].no_form.find("library code"), std::string::npos);

    // a file in no distribution and outside the project: said so, not called a library, not patched
    const report nowhere = owned_by("/tmp/scratch/k.py", {owner_kind::elsewhere, "", "", "not under the project"});
    f = first(nowhere, "CS-9");
    ASSERT_NE(f, nullptr);
    EXPECT_FALSE(f->library);
    EXPECT_NE(f->recommendation.str().find("is not in an installed package and not in this project"), std::string::npos);
    EXPECT_EQ(render_text(nowhere).find("[library code]"), std::string::npos);
    EXPECT_NE(plan_fixes(nowhere, "CS-9", "")[0].no_form.find("not in an installed package and not in this project"),
              std::string::npos);
}

TEST(Fixes, EachLessonsFindingHasItsCodeForm)
{
    const auto hoist = plan_fixes(stream("cs1_late"), "CS-1", "");
    ASSERT_EQ(hoist.size(), 1u);
    ASSERT_EQ(hoist[0].ops.size(), 1u);
    EXPECT_EQ(hoist[0].ops[0]["op"], "hoist");
    EXPECT_EQ(hoist[0].id, "cs-1-hoist");

    const auto factory = plan_fixes(stream("cs1_factory"), "CS-1", "");
    ASSERT_EQ(factory.size(), 1u);
    ASSERT_FALSE(factory[0].ops.empty());
    // the definition, then the factory's call site; the definition gets a module of its own when neither can move
    ASSERT_EQ(factory[0].ops[0]["places"].size(), 2u);
    EXPECT_EQ(factory[0].ops[0]["places"][0]["line"], factory[0].ops[0]["fallback"]["line"]);
    EXPECT_NE(factory[0].ops[0]["places"][1]["line"], factory[0].ops[0]["fallback"]["line"]);

    const auto option = plan_fixes(stream("cs3_option"), "CS-3", "");
    ASSERT_EQ(option.size(), 1u);
    EXPECT_EQ(option[0].ops[0]["op"], "module_options");
    EXPECT_EQ(option[0].ops[0]["options"]["fast_math"], true);
    EXPECT_EQ(option[0].ops[0]["remove"].size(), 1u);

    const auto generic = plan_fixes(stream("cs6_generic"), "CS-6", "");
    ASSERT_EQ(generic.size(), 1u);
    EXPECT_EQ(generic[0].ops[0]["op"], "overloads");
    EXPECT_EQ(generic[0].ops[0]["instances"].size(), 3u);  // float32, float64, float16

    const auto late_option = plan_fixes(stream("option_late"), "option-not-arrived", "");
    ASSERT_EQ(late_option.size(), 1u);
    EXPECT_EQ(late_option[0].ops[0]["op"], "config_at_entry");
    EXPECT_EQ(late_option[0].ops[0]["key"], "enable_backward");

    const auto cache = plan_fixes(stream("cache_many_causes"), "CS-2", "");
    ASSERT_EQ(cache.size(), 1u);
    EXPECT_EQ(cache[0].ops[0]["op"], "remove_statements");
    EXPECT_GE(cache[0].ops[0]["places"].size(), 3u);

    const auto preload = plan_fixes(stream("preload_cpu"), "preload-block-dim", "");
    ASSERT_EQ(preload.size(), 1u);
    EXPECT_EQ(preload[0].ops[0]["block_dim"], 64);
}

TEST(Fixes, NoBackwardOffPatchForAProgramThatRecordsATapeAndOneSentenceWhereNoFormExists)
{
    report grad = stream("grad");
    EXPECT_EQ(first(grad, "CS-10"), nullptr);  // no advisory for a program that differentiates
    finding forced;
    forced.mechanism = "CS-10";
    forced.lever = "backward-off";
    grad.findings.push_back(forced);
    const auto plans = plan_fixes(grad, "CS-10", "");
    ASSERT_EQ(plans.size(), 1u);
    EXPECT_TRUE(plans[0].ops.empty());
    EXPECT_NE(plans[0].no_form.find("wp.Tape"), std::string::npos) << plans[0].no_form;

    const auto granular = plan_fixes(stream("cs4_granular"), "CS-4", "");
    ASSERT_EQ(granular.size(), 1u);
    EXPECT_TRUE(granular[0].ops.empty());
    EXPECT_NE(granular[0].no_form.find("design choice"), std::string::npos) << granular[0].no_form;
}

TEST(Fixes, ALateModuleCountsOnceHoweverManyOfItsKernelsOrProcessesDeclaredIt)
{
    // "57 of the 52": each kernel declaration was counted, not each module
    report r = load_recorded_run(std::string(XWARP_FIXTURES_DIR) + "/streams/unique_between_launches-warp1.19.0");
    for (auto& s : r.samples)
    {
        for (auto& p : s.cold.processes)
        {
            const auto calls = p.calls;
            for (const auto& c : calls)
            {
                if (c.function == "kernel")
                {
                    p.calls.push_back(c);  // a second kernel declared into the same module
                }
            }
        }
    }
    analyze(r);
    const finding* f = first(r, "CS-9");
    ASSERT_NE(f, nullptr);
    const auto at = f->evidence.find(" were created after the first of them loaded");
    ASSERT_NE(at, std::string::npos) << f->evidence;
    const std::string head = f->evidence.substr(0, at);
    const auto of = head.rfind(" of the ");
    const auto start = head.rfind("; ", of);
    ASSERT_NE(of, std::string::npos);
    const int late = std::stoi(head.substr(start + 2, of - start - 2));
    const int total = std::stoi(head.substr(of + 8));
    EXPECT_LE(late, total) << f->evidence;
    EXPECT_EQ(late, 2) << f->evidence;  // the two stages created between launches
}

// fix --verify runs the command in a copy of the project: its paths are mapped into the copy, never
// the module after -m (cd src; python -m particle_prep, where src/particle_prep is also a folder)
TEST(FixCopy, TheModuleAfterDashMStaysAModuleNameWhereAFolderOfThatNameIsBesideIt)
{
    const auto root = std::filesystem::temp_directory_path() / ("xwarp-copy-root-" + std::to_string(::getpid()));
    const auto copy = std::filesystem::temp_directory_path() / ("xwarp-copy-dest-" + std::to_string(::getpid()));
    std::filesystem::create_directories(root / "src" / "particle_prep");
    std::filesystem::create_directories(copy / "src" / "particle_prep");
    std::ofstream(root / "src" / "run.py") << "\n";
    std::ofstream(copy / "src" / "run.py") << "\n";
    measure_options options;
    options.cwd = (root / "src").string();
    options.command = {"python3", "-m", "particle_prep", "--steps", "3"};
    const measure_options moved = fix_parts::in_copy(options, root.string(), copy.string());
    EXPECT_EQ(moved.command, (std::vector<std::string>{"python3", "-m", "particle_prep", "--steps", "3"}));
    EXPECT_EQ(moved.cwd, (copy / "src").string());
    options.command = {"python3", "run.py"};
    EXPECT_EQ(fix_parts::in_copy(options, root.string(), copy.string()).command[1], (copy / "src" / "run.py").string());
    std::filesystem::remove_all(root);
    std::filesystem::remove_all(copy);
}
