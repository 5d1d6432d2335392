// The verdict rules of fix and warm-up (analysis/fix_verdicts.hpp, warmup_verdicts.hpp) on
// synthetic samples, the closed word sets (model/verdicts.hpp) and the contracts between the
// engine and its Python (model/contracts.hpp) held to the engine's own tables.
#include <gtest/gtest.h>

#include <algorithm>

#include "builders.hpp"
#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/fix_verdicts.hpp"
#include "xwarp/analysis/levers.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/analysis/warmup_verdicts.hpp"
#include "xwarp/analysis/replay_plans.hpp"
#include "xwarp/model/contracts.hpp"
#include "xwarp/render/warmup_file.hpp"
#include "xwarp/model/verdicts.hpp"
#include "../../src/analysis/levers/lever.hpp"

using namespace xwarp;
using namespace xwarp::testing;

namespace
{
    // Three samples of one program whose cold pass builds `hashes` in cold_ms altogether.
    report measured(double cold_ms, std::vector<std::string> hashes, std::int64_t launches = 2)
    {
        report r;
        r.command = {"python", "prog.py"};
        r.env.warp_version = "1.19.0";
        for (int i = 1; i <= 3; ++i)
        {
            std::vector<module_load> loads;
            for (const auto& h : hashes)
            {
                loads.push_back(load("prog", h, cold_ms / static_cast<double>(hashes.size()) + i));
            }
            r.samples.push_back(make_sample(i, pass(cold_ms + 900 + i, loads, launches), pass(900 + i, {}, launches)));
        }
        analyze(r);
        return r;
    }

    warmup_plan plan_covering(const std::string& module, const std::string& hash)
    {
        warmup_plan plan;
        warmup_target t;
        t.module = module;
        t.hash = hash;
        t.device = "cpu";
        t.block_dim = 1;
        t.covered = true;
        plan.targets.push_back(t);
        plan.covered = 1;
        return plan;
    }

    primed_sample primed(run_result prime, std::vector<module_load> program_loads)
    {
        primed_sample s;
        s.prime = std::move(prime);
        s.program = make_sample(1, pass(1000, std::move(program_loads)), pass(990, {}));
        return s;
    }
}

TEST(FixVerdicts, APatchThatBuildsLessWithTheSameLaunchesIsVerifiedAndOneThatChangesThemIsInvalid)
{
    const report unpatched = measured(3000, {"a", "b", "c"});
    fix_result f;
    f.finding = "CS-1 #1";
    judge_patch(f, unpatched, measured(1000, {"a"}));
    EXPECT_EQ(f.verdict, fix_verdict::verified) << f.reason;
    ASSERT_TRUE(f.saving_ms.has_value());
    EXPECT_GT(*f.saving_ms, 1000.0);

    fix_result same;
    judge_patch(same, unpatched, unpatched);
    EXPECT_EQ(same.verdict, fix_verdict::no_gain) << same.reason;

    fix_result fewer_launches;
    judge_patch(fewer_launches, unpatched, measured(1000, {"a"}, 1));
    EXPECT_EQ(fewer_launches.verdict, fix_verdict::invalid) << fewer_launches.reason;
}

TEST(FixVerdicts, AStepThatStopsPayingIsLeftOutOfApplyAndSaysSo)
{
    const report one = measured(3000, {"a", "b", "c"});
    const report two = measured(1000, {"a"});
    fix_result first;
    first.verdict = fix_verdict::verified;
    judge_together_step(first, 0, one, two);
    EXPECT_EQ(first.together_step, together_status::first);
    EXPECT_TRUE(applies(first));

    fix_result pays;
    pays.verdict = fix_verdict::verified;
    judge_together_step(pays, 1, one, two);
    EXPECT_EQ(pays.together_step, together_status::still_pays);
    EXPECT_TRUE(applies(pays));

    fix_result stops;
    stops.verdict = fix_verdict::verified;
    judge_together_step(stops, 1, two, two);
    EXPECT_EQ(stops.together_step, together_status::stops_paying);
    EXPECT_NE(stops.together.find("stops paying once the 1 before it"), std::string::npos) << stops.together;
    EXPECT_FALSE(applies(stops));

    fix_result apart;
    apart.verdict = fix_verdict::verified;
    not_combined(apart, "they do not combine");
    EXPECT_TRUE(applies(apart));  // verified alone; only a measured stop leaves it out
    fix_result unverified;
    EXPECT_FALSE(applies(unverified));
}

TEST(WarmupVerdicts, ACoveredIdentityThatStillBuildsFailsAndNamesIt)
{
    const warmup_plan plan = plan_covering("prog", "abc1234ff");
    const run_result prime = pass(2000, {load("prog", "abc1234ff", 1500)});
    const warmup_check clean = judge_warmup(plan, {primed(prime, {load("prog", "abc1234ff", 0, load_status::cached)})},
                                            false, std::nullopt, 3000.0);
    EXPECT_EQ(clean.verdict, warmup_verdict::verified);
    EXPECT_EQ(clean.warmup_builds, 1);
    EXPECT_TRUE(clean.covered_built.empty());

    const warmup_check built = judge_warmup(plan, {primed(prime, {load("prog", "abc1234ff", 1500)})}, false, std::nullopt,
                                            3000.0);
    EXPECT_EQ(built.verdict, warmup_verdict::failed);
    ASSERT_EQ(built.covered_built.size(), 1u);
    EXPECT_NE(built.covered_built[0].find("prog abc1234"), std::string::npos) << built.covered_built[0];

    const warmup_check other = judge_warmup(plan, {primed(prime, {load("prog", "feedbee00", 800)})}, false, std::nullopt, 3000.0);
    EXPECT_EQ(other.verdict, warmup_verdict::verified);  // a hash the run never built: new, not a miss
    EXPECT_EQ(other.new_built.size(), 1u);
}

TEST(WarmupVerdicts, AWarmupStepIsJudgedAgainstAColdRunTimedBesideItNotTheReportsOld)
{
    const warmup_plan plan = plan_covering("prog", "abc1234ff");
    const run_result prime = pass(2000, {load("prog", "abc1234ff", 1500)});
    const auto primed_three = std::vector<primed_sample>(3, primed(prime, {load("prog", "abc1234ff", 0, load_status::cached)}));
    const auto cold_runs = [](double wall) { return std::vector<sample>(3, make_sample(1, pass(wall, {}), pass(990, {}))); };
    // warm-up 2 s + the program after 1 s against cold runs of 4 s beside them: 0.75, less than one
    const warmup_check faster = judge_warmup(plan, primed_three, false, std::nullopt, std::nullopt, cold_runs(4000));
    ASSERT_TRUE(faster.of_cold);
    EXPECT_DOUBLE_EQ(*faster.of_cold, 0.75);
    EXPECT_DOUBLE_EQ(*faster.cold_wall_beside_ms.median, 4000.0);
    // the same step beside cold runs of 2.4 s (a quiet machine, a kept CUDA cache): 1.25, more
    const warmup_check slower = judge_warmup(plan, primed_three, false, std::nullopt, std::nullopt, cold_runs(2400));
    EXPECT_GT(*slower.of_cold, 1.0 + *slower.of_cold_band);
    EXPECT_EQ(faster.cost, warmup_cost::less_than_one_cold_run);
    EXPECT_FALSE(faster.cost_indicative);
    EXPECT_EQ(slower.cost, warmup_cost::more_than_one_cold_run);
    // no cold run beside it: no ratio is made from an old report's cold wall
    const warmup_check alone = judge_warmup(plan, primed_three, false, std::nullopt, std::nullopt);
    EXPECT_FALSE(alone.of_cold);
    EXPECT_FALSE(alone.cold_wall_beside_ms.median);
    EXPECT_EQ(alone.cost, warmup_cost::not_judged);
    // one cold run beside one primed run: a direction, only indicative (issue 75: 0.86 of 111 s)
    const auto one_cold = std::vector<sample>(1, make_sample(1, pass(4000, {}), pass(990, {})));
    const warmup_check once = judge_warmup(plan, {primed_three.front()}, false, std::nullopt, std::nullopt, one_cold);
    EXPECT_EQ(once.cost, warmup_cost::less_than_one_cold_run);
    EXPECT_TRUE(once.cost_indicative);
    EXPECT_NE(once.cost_why.find("indicative: 1 cold sample(s)"), std::string::npos) << once.cost_why;
    // a warm-up that built nothing (Warp on PYTHONPATH, every module refused): its time is no
    // warm-up's, whatever the ratio says
    const run_result idle = pass(900, {});
    const auto nothing = std::vector<primed_sample>(3, primed(idle, {load("prog", "abc1234ff", 1500)}));
    const warmup_check none = judge_warmup(plan, nothing, false, std::nullopt, std::nullopt, cold_runs(4000));
    EXPECT_EQ(none.cost, warmup_cost::not_judged);
    EXPECT_NE(none.cost_why.find("built none of the 1 identities it covers"), std::string::npos) << none.cost_why;
    warmup_plan shown = plan;
    shown.check = none;
    const std::string text = render_warmup_text(shown);
    EXPECT_NE(text.find("not judged"), std::string::npos) << text;
    EXPECT_EQ(text.find("pays on this machine"), std::string::npos) << text;
}

TEST(WarmupVerdicts, AFailedWarmupAndAnInterruptDecideBeforeTheBuilds)
{
    const warmup_plan plan = plan_covering("prog", "abc1234ff");
    run_result broken = pass(50, {});
    broken.exit_code = 1;
    broken.error_line = "ImportError: no module named prog";
    primed_sample failed;
    failed.prime = broken;
    const warmup_check c = judge_warmup(plan, {failed}, false, std::nullopt, std::nullopt);
    EXPECT_EQ(c.verdict, warmup_verdict::failed);
    ASSERT_FALSE(c.reasons.empty());
    EXPECT_NE(c.reasons[0].find("ImportError"), std::string::npos) << c.reasons[0];

    const warmup_check stopped = judge_warmup(plan, {}, true, std::nullopt, std::nullopt);
    EXPECT_EQ(stopped.verdict, warmup_verdict::interrupted);
    EXPECT_EQ(stopped.samples, 0);
}

TEST(Verdicts, AWordOutsideItsSetIsRefusedNeverTakenForTheFirstMember)
{
    EXPECT_EQ(parse_member<verdict>("not-comparable"), verdict::not_comparable);
    EXPECT_EQ(word_of(fix_verdict::no_gain), "no-gain");
    EXPECT_FALSE(member_named<run_status>("okay").has_value());
    EXPECT_THROW(parse_member<warmup_verdict>("passed"), std::invalid_argument);
    EXPECT_THROW(nlohmann::json("improvd").get<verdict>(), std::invalid_argument);
    EXPECT_EQ(nlohmann::json(together_status::stops_paying), "stops-paying");
}

TEST(Contracts, EveryLeverOfTheEngineIsInTheShimInputsWithTheSameEffects)
{
    std::vector<std::string> in_contract = contract_levers();
    std::vector<std::string> engine = known_levers();
    std::sort(in_contract.begin(), in_contract.end());
    std::sort(engine.begin(), engine.end());
    EXPECT_EQ(in_contract, engine);
    for (const auto* def : levers::table())
    {
        EXPECT_FALSE(contract_effects(def->info.name).empty()) << def->info.name;  // judged by the contract's x-effects alone
    }
}

TEST(Contracts, ASpecOutsideTheContractIsNamedAndAPlanOfEveryLeverIsInside)
{
    EXPECT_EQ(contract_violation(contract::whatif_spec, {{"lever", "pch-off"}, {"params", nlohmann::json::object()}}), "");
    EXPECT_NE(contract_violation(contract::whatif_spec, {{"lever", "pch-off"}, {"params", {{"workers", 2}}}}), "");
    EXPECT_NE(contract_violation(contract::whatif_spec, {{"lever", "faster"}, {"params", nlohmann::json::object()}}), "");
    EXPECT_EQ(contract_violation(contract::whatif_spec,
                                 {{"lever", "parallel-preload"},
                                  {"params", {{"groups", {{{"device", "cpu"}, {"block_dim", -1}, {"modules", {"a", "b"}}}}},
                                              {"workers", 2}}}}),
              "");
    EXPECT_NE(contract_violation(contract::shim_environment, {{"XWARP_RECORD_DIR", "/tmp/x"}, {"XWARP_DEBUG", "1"}}), "");
    EXPECT_NE(contract_violation(contract::whatif_spec, {{"lever", "merge-modules"}, {"params", nlohmann::json::object()}})
                  .find("merge-modules: at /params"),
              std::string::npos);
    // every lever's plan on a program builds an environment the contract accepts
    // (lever_plan::environment() throws otherwise)
    const report r = measured(3000, {"a", "b"});
    for (const auto& p : plan_levers(r, known_levers(), false))
    {
        EXPECT_NO_THROW(p.environment()) << p.lever;
    }
}

TEST(Contracts, TheFixerRequestNamesOnlyTheProtocolsOperations)
{
    const auto ops = fixer_operations();
    for (const char* op : {"config_at_entry", "module_options", "overloads", "named_module", "hoist", "preload",
                           "preload_block_dim", "remove_statements"})
    {
        EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
    }
    const nlohmann::json good = {{"protocol", fixer_protocol_version()},
                                 {"root", "/p"},
                                 {"fixes", {{{"id", "cs-1"}, {"ops", {{{"op", "remove_statements"}, {"places", {{{"file", "a.py"}, {"line", 3}}}}}}}}}}};
    EXPECT_EQ(contract_violation(contract::fixer_request, good), "");
    nlohmann::json unknown = good;
    unknown["fixes"][0]["ops"][0]["op"] = "rewrite_everything";
    EXPECT_NE(contract_violation(contract::fixer_request, unknown), "");
    nlohmann::json missing = good;
    missing["fixes"][0]["ops"][0].erase("places");
    EXPECT_NE(contract_violation(contract::fixer_request, missing), "");
    EXPECT_EQ(contract_violation(contract::fixer_response, {{"fixes", {{{"id", "cs-1"}, {"reason", "no"}}}}}), "");
    EXPECT_NE(contract_violation(contract::fixer_response, {{"fixes", {{{"reason", "no id"}}}}}), "");
}
