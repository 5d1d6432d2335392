// What-if replays: plans from the baseline's records, judgement by compare's rules plus what
// each lever requires, and the findings annotated with what was measured.
#include "xwarp/analysis/replay_plans.hpp"
#include "xwarp/model/contracts.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "xwarp/analysis/compare.hpp"
#include "xwarp/analysis/diagnose.hpp"
#include "xwarp/analysis/mechanisms.hpp"
#include "xwarp/analysis/stats.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/model/format.hpp"
#include "xwarp/model/json_io.hpp"
#include "levers/lever.hpp"

namespace xwarp
{
    using nlohmann::json;

    namespace
    {

        std::vector<const finding*> findings_for(const report& r, const std::string& lever)
        {
            std::vector<const finding*> out;
            for (const auto& f : r.findings)
            {
                if (f.lever == lever)
                {
                    out.push_back(&f);
                }
            }
            return out;
        }

        json summed_applied(const report& replay)
        {
            json total = json::object();
            const sample* s = replay.first_good();
            const run_result* run = s ? &s->cold : (replay.samples.empty() ? nullptr : &replay.samples.front().cold);
            if (!run)
            {
                return total;
            }
            for (const auto& p : run->processes)
            {
                const json applied = p.whatif.is_object() ? field_or(p.whatif, "applied", json::object()) : json::object();
                for (const auto& [k, v] : applied.items())
                {
                    if (v.is_number() && (!total.contains(k) || total[k].is_number()))
                    {
                        total[k] = field_or(total, k.c_str(), 0.0) + v.get<double>();
                    }
                    else
                    {
                        total[k] = v;
                    }
                }
            }
            return total;
        }

        // Whether the shim counted any of the lever's effects (its other counters are context):
        // the contract's x-effects, compiled in, the one place they are written.
        bool anything_applied(const levers::lever_def& lever, const json& applied)
        {
            for (const auto& effect : contract_effects(lever.info.name))
            {
                const auto it = applied.find(effect);
                if (it != applied.end() && it->is_number() && it->get<double>() > 0)
                {
                    return true;
                }
            }
            return false;
        }
    }

    std::map<std::string, std::string> lever_plan::environment() const
    {
        const json spec = {{"lever", lever}, {"params", params}};
        // a plan outside the shim's contract is this program's bug: caught here, not as a replay
        // the shim quietly does not apply
        if (const std::string wrong = contract_violation(contract::whatif_spec, spec); !wrong.empty())
        {
            throw std::logic_error("internal: the " + lever + " plan is outside the shim's inputs contract: " + wrong);
        }
        std::map<std::string, std::string> env{{"XWARP_WHATIF", spec.dump()}};
        if (time_launches)
        {
            env["XWARP_TIME_LAUNCHES"] = timed_kernels();
        }
        return env;
    }

    std::vector<cache_kind> lever_plan::keeps() const
    {
        std::vector<cache_kind> out;
        for (const auto& word : contract_kept_caches(lever))
        {
            out.push_back(parse_member<cache_kind>(word));
        }
        return out;
    }

    std::string lever_plan::timed_kernels() const
    {
        std::string keys;
        for (const auto& k : levers::strings_of(field_or(params, "timed_kernels", json::array())))
        {
            keys += (keys.empty() ? "" : ",") + k;
        }
        return keys;
    }

    namespace
    {
        // The build time a lever touches in the baseline's first good cold pass: the builds of
        // the modules it plans to move, or for a lever of the whole program (no module list)
        // the precompiled headers and every build.
        double build_time_touched(const lever_plan& p, const run_result& cold)
        {
            if (const auto* def = levers::find(p.lever); def && def->stake)
            {
                return def->stake(p, cold);
            }
            double ms = 0.0;
            for (const auto& l : cold.module_loads)
            {
                if (l.status != load_status::compiled)
                {
                    continue;
                }
                if (p.modules.empty())
                {
                    ms += l.work_ms();
                }
                else if (std::find(p.modules.begin(), p.modules.end(), l.module.str()) != p.modules.end())
                {
                    ms += l.work_ms();
                }
            }
            return ms;
        }

        lever_plan plan_one(const std::string& lever, const report& baseline, const sample* s)
        {
            lever_plan p;
            p.lever = lever;
            const auto fs = findings_for(baseline, lever);
            for (const auto* f : fs)
            {
                levers::add_unique(p.mechanisms, f->mechanism);
                if (f->savings_ms)
                {
                    p.estimate_ms = std::max(p.estimate_ms.value_or(0.0), *f->savings_ms);
                }
            }
            if (!s)
            {
                p.not_applicable = "the baseline has no successful sample";
                return p;
            }
            if (!s->warm)
            {
                p.not_applicable = "the baseline is one pass of a suite's own run (the pytest plugin's): a replay needs a "
                                   "measured cold and warm pass (warp-probe measure)";
                return p;
            }
            levers::find(lever)->plan(p, levers::plan_input{baseline, s->cold, *s->warm, fs});
            // What is at stake: the estimate, or for an unestimated lever the build time it
            // touches (CS-10's adjoint builds are most of the builds they are in).
            p.stake_ms = p.estimate_ms ? *p.estimate_ms : build_time_touched(p, s->cold);
            p.stake_source = p.estimate_ms ? "its estimate" : "the build time it touches";
            return p;
        }
    }

    std::vector<lever_plan> plan_levers(const report& baseline, const std::vector<std::string>& levers, bool automatic)
    {
        for (const auto& l : levers)
        {
            if (!levers::find(l))
            {
                std::string all;
                for (const auto& k : known_levers())
                {
                    all += (all.empty() ? "" : ", ") + k;
                }
                throw unknown_lever("unknown lever '" + l + "' (levers: " + all + ")");
            }
        }
        const sample* s = baseline.first_good();
        std::vector<lever_plan> plans;
        for (const auto& l : levers)
        {
            plans.push_back(plan_one(l, baseline, s));
        }
        if (!automatic)
        {
            return plans;
        }
        // The levers of the findings present: the lever of the finding with the largest estimate
        // first (its figure is the one the report leads with, and a replay turns it into a
        // measurement), then the most time at stake: the budget goes where the most can be saved.
        std::vector<lever_plan> found;
        for (const auto& f : baseline.findings)
        {
            const bool planned = std::any_of(plans.begin(), plans.end(), [&](const lever_plan& p) { return p.lever == f.lever.str(); })
                                 || std::any_of(found.begin(), found.end(), [&](const lever_plan& p) { return p.lever == f.lever.str(); });
            if (!f.lever.empty() && !planned)
            {
                found.push_back(plan_one(f.lever, baseline, s));
            }
        }
        // The levers planned whatever the findings (under pytest-xdist, its worker count), where they apply
        for (const auto& l : lever_registry())
        {
            const bool asked = std::any_of(plans.begin(), plans.end(), [&](const lever_plan& p) { return p.lever == l.name; });
            if (l.without_finding && !asked)
            {
                lever_plan own = plan_one(l.name, baseline, s);
                if (own.not_applicable.empty())
                {
                    found.push_back(std::move(own));
                }
            }
        }
        std::stable_sort(found.begin(), found.end(), [](const lever_plan& a, const lever_plan& b) { return a.stake_ms > b.stake_ms; });
        const auto top = std::max_element(found.begin(), found.end(), [](const lever_plan& a, const lever_plan& b)
                                          { return a.estimate_ms.value_or(-1.0) < b.estimate_ms.value_or(-1.0); });
        if (top != found.end() && top->estimate_ms)
        {
            std::rotate(found.begin(), top, top + 1);  // the estimated top finding's lever first
        }
        for (auto& p : found)
        {
            plans.push_back(std::move(p));
        }
        return plans;
    }

    whatif_result unrun_lever(const lever_plan& plan, verdict unrun, const std::string& reason)
    {
        whatif_result w;
        w.lever = plan.lever;
        w.mechanisms = plan.mechanisms;
        w.mechanism = plan.mechanisms.empty() ? std::string() : plan.mechanisms.front();
        w.modules = plan.modules;
        w.params = plan.params;
        w.verdict = unrun;
        w.estimate_ms = plan.estimate_ms;
        w.reason = reason;
        return w;
    }

    std::string replay_settled_because(const lever_plan& plan, const report& baseline, const report& replay,
                                       int max_samples)
    {
        comparison c;
        if (judge_replay(plan, baseline, replay, &c).verdict == verdict::invalid)
        {
            return "the verdict is invalid: more samples cannot change it";
        }
        return settled_because(c, max_samples);
    }

    namespace
    {
        // A replay whose every sample failed: the lever broke the program.
        void judge_failed(whatif_result& w, const report& replay)
        {
            w.verdict = verdict::invalid;
            std::string why;
            bool started = false;
            for (const auto& s : replay.samples)
            {
                why = describe_failure(s.cold, replay.run_settings.timeout_s);
                started = started || s.cold.spawn_error.empty();
                if (!s.cold.stderr_tail.empty())
                {
                    break;
                }
            }
            // a replay that never started says nothing about the lever
            w.reason = "every replay sample failed (" + why + ")" + (started ? ": the lever breaks the program" : "");
        }

        // compare's verdict and the savings on each clock, as the replay's own.
        void judge_by_compare(whatif_result& w, const comparison& c)
        {
            for (const auto& k : c.clocks)
            {
                if (k.delta_ms)
                {
                    w.savings[k.clock] = -*k.delta_ms;
                }
                if (k.clock == c.judged_on.by)
                {
                    w.band_ms = k.band_ms;
                }
            }
            w.judged_on = c.judged_on;
            std::string reasons;
            for (const auto& r : c.reasons)
            {
                reasons += (reasons.empty() ? "" : "; ") + r;
            }
            w.reason = reasons;
            if (c.verdict == verdict::improved || c.verdict == verdict::regressed || c.verdict == verdict::inconclusive)
            {
                w.verdict = c.verdict;
            }
            else if (c.verdict == verdict::unverified)
            {
                w.verdict = verdict::inconclusive;
            }
            else
            {
                w.verdict = verdict::invalid;  // invalid (workload changed, failures) or not-comparable
            }
        }
    }

    whatif_result judge_replay(const lever_plan& plan, const report& baseline, const report& replay, comparison* compared)
    {
        whatif_result w = unrun_lever(plan, verdict::not_run, "");
        w.samples = static_cast<int>(replay.samples.size());
        w.applied = summed_applied(replay);
        w.cold_builds_baseline = baseline.builds_in_first_good(false);
        w.cold_builds_replay = replay.builds_in_first_good(false);
        w.warm_builds_baseline = baseline.builds_in_first_good(true);
        w.warm_builds_replay = replay.builds_in_first_good(true);
        comparison c;
        try
        {
            report before = baseline;
            report after = replay;
            const levers::lever_def* def = levers::find(plan.lever);
            const bool suite = !baseline.result.tests.empty();
            const bool on_wall = def && (def->on_wall || (suite && def->on_wall_in_suites));
            c = compare_reports(before, after, "baseline", "what-if " + plan.lever,
                                on_wall ? deciding_clock::cold_wall : deciding_clock::by_structure, plan.keeps());
            // the conditions beside the verdict: both sides' load (summarized by the compare) and
            // the caches the replay started from
            w.busy_cpus_baseline = before.result.busy_cpus.median;
            w.busy_cpus_replay = after.result.busy_cpus.median;
            if (const sample* first = after.first_good())
            {
                for (const auto& cache : first->cold.caches)
                {
                    if (!cache.empty_at_start())
                    {
                        w.caches_not_empty_at_start.push_back(word_of(cache.kind));
                    }
                }
            }
            if (compared)
            {
                *compared = c;
            }
        }
        catch (const compare_input_error&)
        {
            judge_failed(w, replay);
            return w;
        }
        judge_by_compare(w, c);
        const levers::lever_def& lever = *levers::find(plan.lever);
        if (lever.before && lever.before(w, plan, baseline, replay))
        {
            return w;
        }
        if (w.verdict != verdict::invalid && !anything_applied(lever, w.applied))
        {
            w.verdict = verdict::not_applied;
            w.reason = "the lever found nothing to change in the replayed processes"
                       + (w.applied.empty() ? std::string() : " (" + w.applied.dump() + ")");
            return w;
        }
        if (lever.after)
        {
            lever.after(w, plan, baseline, replay);
        }
        return w;
    }

    namespace
    {
        // One replay, one number: the findings a replay measured together (every finding of its
        // lever) name each other, and only the first in the report's order shows the number.
        void number_replays_once(std::vector<finding>& findings)
        {
            std::map<std::string, std::vector<int>> by_lever;
            for (std::size_t i = 0; i < findings.size(); ++i)
            {
                if (findings[i].measured)
                {
                    by_lever[findings[i].measured->lever].push_back(static_cast<int>(i) + 1);
                }
            }
            for (const auto& [lever, numbers] : by_lever)
            {
                for (const int n : numbers)
                {
                    replay_measurement& m = *findings[static_cast<std::size_t>(n) - 1].measured;
                    m.together = numbers.size() > 1 ? numbers : std::vector<int>{};
                    m.shows_number = n == numbers.front();
                }
            }
        }
    }

    void apply_whatif(report& r)
    {
        for (auto& w : r.whatif)
        {
            // One estimate per finding, shown the same everywhere: the replay's row quotes the
            // finding's own figure as this analysis computed it (the plan's copy was taken from
            // an earlier analysis, on fewer samples)
            std::optional<double> estimate;
            for (const auto& f : r.findings)
            {
                if (f.lever == w.lever && f.savings_ms)
                {
                    estimate = std::max(estimate.value_or(0.0), *f.savings_ms);
                }
            }
            if (estimate)
            {
                w.estimate_ms = estimate;
            }
            replay_measurement measured;
            measured.lever = w.lever;
            measured.verdict = w.verdict;
            measured.saving_ms = w.quoted_saving();
            measured.clock = w.judged_on.by;
            if (w.judged_on.by == xwarp::clock::cold_module_cpu || w.judged_on.by == xwarp::clock::warm_module_cpu)
            {
                for (const auto wall : {xwarp::clock::cold_wall, xwarp::clock::compile_elapsed})
                {
                    if (const auto saving = w.saving_on(wall); saving && !measured.wall_saving_ms)
                    {
                        measured.wall_saving_ms = saving;
                        measured.wall_clock = wall;
                    }
                }
            }
            measured.band_ms = w.band_ms;
            measured.samples = w.samples;
            measured.judged_on = w.judged_on.sentence();
            measured.reason = w.reason;
            measured.needs = w.needs;
            // An advisory is declined on what its replay measured against it: a regression on 3
            // samples a side or more, or a lever that breaks the program or its launches. An
            // inconclusive replay measured nothing either way (the noise, a busy machine), and a
            // regression on one or two samples a side is indicative (a gap that size comes by
            // chance): the finding stays, from what was built, with its measurement and no saving
            // credited, so that the same program gives the same findings quiet and busy.
            const bool indicative = w.samples > 0 && w.samples < 3;
            const bool measured_against = (w.verdict == verdict::regressed && !indicative) || w.verdict == verdict::invalid;
            // a lever no finding named is only a line in the ledger: any replay that did not pay goes there
            const bool did_not_pay = w.verdict == verdict::regressed || w.verdict == verdict::inconclusive || w.verdict == verdict::invalid;
            bool any_finding = false;
            for (auto it = r.findings.begin(); it != r.findings.end();)
            {
                if (it->lever != w.lever)
                {
                    ++it;
                    continue;
                }
                any_finding = true;
                it->measured = measured;
                if (w.verdict == verdict::not_applied)
                {
                    say_library_lever_did_not_apply(*it);
                }
                if (!w.needs.empty())
                {
                    it->recommendation = it->recommendation.str() + " The replay showed what else the fix needs: "
                                         + w.needs + ".";
                }
                // An advisory is an opportunity to measure: measured and not paying, it is no
                // longer recommended. A diagnosis stays (the rebuild happened) with its number.
                if (it->kind == finding_kind::advisory && measured_against)
                {
                    declined_lever d;
                    d.mechanism = it->mechanism;
                    d.lever = w.lever;
                    d.module = it->module;
                    d.device = it->device;
                    d.reason = "measured by the what-if replay: " + word_of(w.verdict) + (w.reason.empty() ? "" : " (" + w.reason + ")");
                    d.numbers = measurement_json(measured);
                    r.declined.push_back(d);
                    it = r.findings.erase(it);
                    continue;
                }
                ++it;
            }
            // Measured paying where the estimate had declined it: the measurement wins.
            if (!any_finding && w.verdict == verdict::improved)
            {
                for (auto it = r.declined.begin(); it != r.declined.end();)
                {
                    if (it->lever != w.lever || it->recommendation.empty())
                    {
                        ++it;
                        continue;
                    }
                    finding f;
                    f.mechanism = it->mechanism;
                    f.module = it->module;
                    f.device = it->device;
                    f.lever = w.lever;
                    f.kind = finding_kind::advisory;
                    if (const auto* m = find_mechanism(it->mechanism))
                    {
                        f.title = m->title;
                        f.guide = m->guide;
                        f.kind = m->kind;
                    }
                    f.evidence = "the estimate declined it (" + it->reason + "), but the what-if replay measured a gain";
                    f.cause = json_text(nlohmann::json{{"declined_estimate", it->numbers}});
                    f.recommendation = it->recommendation;
                    f.measured = measured;
                    r.findings.push_back(f);
                    any_finding = true;
                    it = r.declined.erase(it);
                }
            }
            if (!any_finding && did_not_pay)
            {
                declined_lever d;
                d.mechanism = w.mechanism;
                d.lever = w.lever;
                d.reason = "measured by the what-if replay: " + word_of(w.verdict) + (w.reason.empty() ? "" : " (" + w.reason + ")");
                d.numbers = measurement_json(measured);
                r.declined.push_back(d);
            }
        }
        // Ordered by what is known: gains a replay measured first (by their measurement), then
        // estimates (a replay not applied or not run leaves the estimate an estimate), then
        // findings without a figure. Within each, the order the detectors' ranking gave.
        const auto known = [](const finding& f) -> std::pair<int, double>
        {
            if (f.measured && f.measured->verdict == verdict::improved && f.measured->saving_ms)
            {
                return {0, *f.measured->saving_ms};
            }
            return f.savings_ms ? std::make_pair(1, *f.savings_ms) : std::make_pair(2, 0.0);
        };
        std::stable_sort(r.findings.begin(), r.findings.end(), [&known](const finding& a, const finding& b)
                         {
                             const auto ka = known(a);
                             const auto kb = known(b);
                             return ka.first != kb.first ? ka.first < kb.first : ka.first == 0 && ka.second > kb.second;
                         });
        number_replays_once(r.findings);
    }
}
