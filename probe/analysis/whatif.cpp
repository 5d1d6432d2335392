// What-if replays: plans from the baseline's records, judgement by compare's rules plus what
// each lever requires, and the findings annotated with what was measured.
#include "xwarp/analysis/whatif.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "xwarp/analysis/compare.hpp"
#include "xwarp/analysis/mechanisms.hpp"
#include "xwarp/analysis/stats.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp
{
    using nlohmann::json;

    namespace
    {
        const sample* first_good(const report& r)
        {
            for (const auto& s : r.samples)
            {
                if (s.ok())
                {
                    return &s;
                }
            }
            return nullptr;
        }

        bool is_warp_internal(const std::string& module)
        {
            return module == "warp" || module.rfind("warp.", 0) == 0;
        }

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

        void add_unique(std::vector<std::string>& v, const std::string& s)
        {
            if (!s.empty() && std::find(v.begin(), v.end(), s) == v.end())
            {
                v.push_back(s);
            }
        }

        std::vector<std::string> strings_of(const json& j)
        {
            std::vector<std::string> out;
            if (j.is_array())
            {
                for (const auto& x : j)
                {
                    if (x.is_string())
                    {
                        out.push_back(x.get<std::string>());
                    }
                }
            }
            return out;
        }

        // The parameters of each lever, from what the baseline's first good cold pass recorded.
        // An empty `not_applicable` means there is something for the lever to move.
        void plan_params(lever_plan& p, const report& r, const run_result& cold, const run_result& warm,
                         const std::vector<const finding*>& fs)
        {
            const std::string& lever = p.lever;
            if (lever == "backward-off")
            {
                for (const auto& l : cold.module_loads)
                {
                    if (l.status == load_status::compiled && l.snapshot && !is_warp_internal(l.module)
                        && field_or(*l.snapshot->options, "enable_backward", false) == true)
                    {
                        add_unique(p.modules, l.module);
                    }
                }
                if (p.modules.empty())
                {
                    p.not_applicable = "no module was built with backward code";
                }
            }
            else if (lever == "pch-off")
            {
                const bool header = std::any_of(cold.module_loads.begin(), cold.module_loads.end(),
                                                [](const module_load& l) { return l.pch_ms.has_value() || l.native_kind == "cuda"; });
                if (!header)
                {
                    p.not_applicable = "no build used a precompiled header";
                }
            }
            else if (lever == "mathdx-off")
            {
                std::vector<std::string> kernels;
                for (const auto& l : cold.module_loads)
                {
                    if (std::any_of(l.lto.begin(), l.lto.end(), [](const lto_artifact& a) { return a.built; }))
                    {
                        add_unique(p.modules, l.module);
                        if (l.snapshot)
                        {
                            for (const auto& k : l.snapshot->kernels)
                            {
                                add_unique(kernels, k.key);
                            }
                        }
                    }
                }
                p.params["timed_kernels"] = kernels;
                p.time_launches = true;
                if (p.modules.empty())
                {
                    p.not_applicable = "no MathDx LTO artifact was built";
                }
            }
            else if (lever == "keep-cache")
            {
                const bool warm_builds = std::any_of(warm.module_loads.begin(), warm.module_loads.end(),
                                                     [](const module_load& l) { return l.status == load_status::compiled; });
                if (!warm_builds && fs.empty())
                {
                    p.not_applicable = "the warm pass compiled nothing: the cache was already reused";
                }
            }
            else if (lever == "parallel-preload")
            {
                std::map<std::pair<std::string, int>, std::vector<std::string>> groups;
                for (const auto& l : cold.module_loads)
                {
                    if (l.status == load_status::compiled && !is_warp_internal(l.module))
                    {
                        add_unique(groups[{l.device, l.block_dim.value_or(-1)}], l.module);
                    }
                }
                json g = json::array();
                for (const auto& [k, mods] : groups)
                {
                    if (mods.size() >= 2)
                    {
                        g.push_back({{"device", k.first}, {"block_dim", k.second}, {"modules", mods}});
                        for (const auto& m : mods)
                        {
                            add_unique(p.modules, m);
                        }
                    }
                }
                p.params["groups"] = g;
                p.params["workers"] = std::max(1, std::min(4, r.env.cpu_count));
                if (g.empty())
                {
                    p.not_applicable = "fewer than two modules were built on any device: nothing to overlap";
                }
            }
            else if (lever == "options-at-creation")
            {
                json modules = json::object();
                for (const auto* f : fs)
                {
                    if (f->mechanism == "CS-3")
                    {
                        for (const auto& c : field_or(f->cause.value(), "changes", json::array()))
                        {
                            const json options = field_or(field_or(c, "detail", json::object()), "options", json::object());
                            for (const auto& [k, v] : options.items())
                            {
                                modules[f->module][k] = field_or(v, "new", json());
                            }
                        }
                    }
                    else if (f->mechanism == "option-not-arrived")
                    {
                        const json cause = f->cause.value();
                        modules[f->module][field_or(cause, "option", std::string("?"))] = field_or(cause, "config_value", json());
                    }
                }
                for (const auto& [m, o] : modules.items())
                {
                    add_unique(p.modules, m);
                }
                p.params["modules"] = modules;
                if (modules.empty())
                {
                    p.not_applicable = "no option changed after a module was created";
                }
            }
            else if (lever == "preregister-overloads")
            {
                std::set<std::string> wanted;  // modules with late instances (all, when asked by name)
                for (const auto* f : fs)
                {
                    wanted.insert(f->module);
                }
                std::map<std::string, const module_load*> last;
                for (const auto& l : cold.module_loads)
                {
                    if (l.snapshot && (wanted.empty() || wanted.count(l.module)))
                    {
                        last[l.module] = &l;
                    }
                }
                json instances = json::array();
                std::set<std::string> seen;
                for (const auto& [m, l] : last)
                {
                    for (const auto& k : l->snapshot->kernels)
                    {
                        if (!k.generic || !k.types.is_array())
                        {
                            continue;
                        }
                        json inst = {{"module", m}, {"kernel", k.key}, {"types", k.types}};
                        if (seen.insert(inst.dump()).second)
                        {
                            instances.push_back(inst);
                            add_unique(p.modules, m);
                        }
                    }
                }
                p.params["instances"] = instances;
                if (instances.empty())
                {
                    p.not_applicable = "no generic instance was recorded with its argument types";
                }
            }
            else if (lever == "shared-module")
            {
                std::vector<std::string> names;
                for (const auto* f : fs)
                {
                    for (const auto& m : strings_of(field_or(f->cause.value(), "modules", json::array())))
                    {
                        add_unique(names, m);
                    }
                }
                std::vector<std::string> kernels;
                for (const auto& l : cold.module_loads)
                {
                    const bool named = names.empty() ? !unique_module_kernel(l.module).empty()
                                                     : std::find(names.begin(), names.end(), l.module) != names.end();
                    if (named && l.snapshot && l.snapshot->kernels.size() == 1)
                    {
                        add_unique(kernels, l.snapshot->kernels[0].key);
                        add_unique(p.modules, l.module);
                    }
                }
                p.params["kernels"] = kernels;
                if (kernels.empty())
                {
                    p.not_applicable = "no module=\"unique\" kernel was built";
                }
            }
            else if (lever == "merge-modules")
            {
                std::vector<std::string> modules;
                for (const auto* f : fs)
                {
                    for (const auto& m : strings_of(field_or(f->cause.value(), "modules", json::array())))
                    {
                        add_unique(modules, m);
                    }
                }
                p.modules = modules;
                p.params["modules"] = modules;
                if (modules.empty())
                {
                    p.not_applicable = "no group of small modules a merge could keep at one block_dim (no CS-4 finding)";
                }
            }
        }

        json summed_applied(const report& replay)
        {
            json total = json::object();
            const sample* s = first_good(replay);
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

        bool anything_applied(const json& applied)
        {
            for (const auto& [k, v] : applied.items())
            {
                if (k != "workers" && k != "error" && v.is_number() && v.get<double>() > 0 && k != "modules_missing"
                    && k != "instances_not_rebuilt" && k != "errors")
                {
                    return true;
                }
            }
            return false;
        }

        // Median steady-state launch time per kernel, the first timed launch of each process left out.
        std::map<std::string, double> steady_launches(const report& r)
        {
            std::map<std::string, std::vector<double>> all;
            for (const auto& s : r.samples)
            {
                if (!s.ok())
                {
                    continue;
                }
                for (const auto& p : s.cold.processes)
                {
                    if (!p.launch_times.is_object())
                    {
                        continue;
                    }
                    for (const auto& [k, v] : p.launch_times.items())
                    {
                        if (!v.is_array())
                        {
                            continue;
                        }
                        for (std::size_t i = 1; i < v.size(); ++i)
                        {
                            if (v[i].is_number())
                            {
                                all[k].push_back(v[i].get<double>());
                            }
                        }
                    }
                }
            }
            std::map<std::string, double> out;
            for (const auto& [k, v] : all)
            {
                if (auto m = median(v))
                {
                    out[k] = *m;
                }
            }
            return out;
        }
    }

    const std::vector<std::string>& known_levers()
    {
        static const std::vector<std::string> levers = {"backward-off",    "pch-off",        "parallel-preload",
                                                        "options-at-creation", "preregister-overloads", "shared-module",
                                                        "merge-modules",   "keep-cache",     "mathdx-off"};
        return levers;
    }

    std::map<std::string, std::string> lever_plan::environment() const
    {
        std::map<std::string, std::string> env{{"XWARP_WHATIF", json{{"lever", lever}, {"params", params}}.dump()}};
        if (time_launches)
        {
            env["XWARP_TIME_LAUNCHES"] = timed_kernels();
        }
        return env;
    }

    std::string lever_plan::timed_kernels() const
    {
        std::string keys;
        for (const auto& k : strings_of(field_or(params, "timed_kernels", json::array())))
        {
            keys += (keys.empty() ? "" : ",") + k;
        }
        return keys;
    }

    std::vector<lever_plan> plan_levers(const report& baseline, const std::vector<std::string>& levers, bool automatic)
    {
        for (const auto& l : levers)
        {
            if (std::find(known_levers().begin(), known_levers().end(), l) == known_levers().end())
            {
                std::string all;
                for (const auto& k : known_levers())
                {
                    all += (all.empty() ? "" : ", ") + k;
                }
                throw unknown_lever("unknown lever '" + l + "' (levers: " + all + ")");
            }
        }
        std::vector<std::string> chosen = levers;
        if (automatic)
        {
            // the levers of the findings present, largest estimate first
            std::vector<std::pair<double, std::string>> ranked;
            for (const auto& f : baseline.findings)
            {
                if (f.lever.empty())
                {
                    continue;
                }
                const double at_stake = f.savings_ms.value_or(-1.0);
                auto it = std::find_if(ranked.begin(), ranked.end(), [&](const auto& x) { return x.second == f.lever; });
                if (it == ranked.end())
                {
                    ranked.push_back({at_stake, f.lever});
                }
                else
                {
                    it->first = std::max(it->first, at_stake);
                }
            }
            std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
            for (const auto& [ms, l] : ranked)
            {
                if (std::find(chosen.begin(), chosen.end(), l) == chosen.end())
                {
                    chosen.push_back(l);
                }
            }
        }
        std::vector<lever_plan> plans;
        const sample* s = first_good(baseline);
        for (const auto& l : chosen)
        {
            lever_plan p;
            p.lever = l;
            const auto fs = findings_for(baseline, l);
            for (const auto* f : fs)
            {
                add_unique(p.mechanisms, f->mechanism);
                if (f->savings_ms)
                {
                    p.estimate_ms = std::max(p.estimate_ms.value_or(0.0), *f->savings_ms);
                }
            }
            if (!s)
            {
                p.not_applicable = "the baseline has no successful sample";
            }
            else
            {
                plan_params(p, baseline, s->cold, *s->warm, fs);
            }
            plans.push_back(std::move(p));
        }
        return plans;
    }

    whatif_result unrun_lever(const lever_plan& plan, const std::string& verdict, const std::string& reason)
    {
        whatif_result w;
        w.lever = plan.lever;
        w.mechanisms = plan.mechanisms;
        w.mechanism = plan.mechanisms.empty() ? std::string() : plan.mechanisms.front();
        w.modules = plan.modules;
        w.params = plan.params;
        w.verdict = verdict;
        w.estimate_ms = plan.estimate_ms;
        w.reason = reason;
        return w;
    }

    std::string replay_settled_because(const lever_plan& plan, const report& baseline, const report& replay,
                                       int max_samples)
    {
        comparison c;
        if (judge_replay(plan, baseline, replay, &c).verdict == "invalid")
        {
            return "the verdict is invalid: more samples cannot change it";
        }
        return settled_because(c, max_samples);
    }

    whatif_result judge_replay(const lever_plan& plan, const report& baseline, const report& replay, comparison* compared)
    {
        whatif_result w = unrun_lever(plan, "", "");
        w.samples = static_cast<int>(replay.samples.size());
        w.applied = summed_applied(replay);
        comparison c;
        try
        {
            report before = baseline;
            report after = replay;
            c = compare_reports(before, after, "baseline", "what-if " + plan.lever);
            if (compared)
            {
                *compared = c;
            }
        }
        catch (const compare_input_error&)
        {
            w.verdict = "invalid";
            std::string why;
            for (const auto& s : replay.samples)
            {
                why = describe_failure(s.cold, replay.run_settings.timeout_s);
                if (!s.cold.stderr_tail.empty())
                {
                    break;
                }
            }
            w.reason = "every replay sample failed (" + why + "): the lever breaks the program";
            return w;
        }
        for (const auto& k : c.clocks)
        {
            if (k.clock == "cold_module_ms" && k.delta_ms)
            {
                w.saving_cold_module_ms = -*k.delta_ms;
            }
            if (k.clock == "compile_elapsed_ms" && k.delta_ms)
            {
                w.saving_compile_elapsed_ms = -*k.delta_ms;
            }
            if (k.clock == "warm_module_ms" && k.delta_ms)
            {
                w.saving_warm_module_ms = -*k.delta_ms;
            }
            if (k.clock == c.decided_by)
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
        if (c.verdict == "improved" || c.verdict == "regressed" || c.verdict == "inconclusive")
        {
            w.verdict = c.verdict;
        }
        else if (c.verdict == "unverified")
        {
            w.verdict = "inconclusive";
        }
        else
        {
            w.verdict = "invalid";  // invalid (workload changed, failures) or not-comparable
        }
        w.reason = reasons;

        // What the lever itself requires.
        if (plan.lever == "backward-off")
        {
            for (const auto& s : replay.samples)
            {
                for (const auto& l : s.cold.launches)
                {
                    if (l.adjoint)
                    {
                        w.verdict = "invalid";
                        w.reason = "kernel " + l.kernel + " is launched with adjoint=True: the program needs its "
                                   "backward code";
                        return w;
                    }
                }
                for (const auto& p : s.cold.processes)
                {
                    for (const auto& call : p.calls)
                    {
                        if (call.function == "Tape")
                        {
                            w.verdict = "invalid";
                            w.reason = "a wp.Tape records gradients"
                                       + (call.file ? " at " + *call.file + ":" + std::to_string(call.line.value_or(0)) : std::string())
                                       + ": the program differentiates, so it needs backward code";
                            return w;
                        }
                    }
                }
            }
        }
        if (plan.lever == "parallel-preload" && w.verdict != "invalid")
        {
            const double preloaded = field_or(w.applied, "modules_preloaded", 0.0);
            if (preloaded < 2)
            {
                w.verdict = "not-applied";
                w.reason = "only " + std::to_string(static_cast<int>(preloaded)) + " module(s) existed at the first launch ("
                           + std::to_string(static_cast<int>(field_or(w.applied, "modules_missing", 0.0)))
                           + " were created later): a preload had nothing to overlap";
                return w;
            }
        }
        if (w.verdict != "invalid" && !anything_applied(w.applied))
        {
            w.verdict = "not-applied";
            w.reason = "the lever found nothing to change in the replayed processes"
                       + (w.applied.empty() ? std::string() : " (" + w.applied.dump() + ")");
            return w;
        }
        if (plan.lever == "keep-cache")
        {
            int warm_builds = 0;
            for (const auto& s : replay.samples)
            {
                if (s.warm)
                {
                    for (const auto& l : s.warm->module_loads)
                    {
                        warm_builds += l.status == load_status::compiled;
                    }
                }
            }
            if (warm_builds > 0)
            {
                w.reason += (w.reason.empty() ? "" : "; ") + std::to_string(warm_builds)
                            + " warm-pass build(s) remain: something else keeps the cache from being reused";
            }
        }
        if (plan.lever == "mathdx-off")
        {
            const auto before = steady_launches(baseline);
            const auto after = steady_launches(replay);
            for (const auto& [k, ms] : after)
            {
                json entry = {{"replay_ms", ms}, {"baseline_ms", nullptr}};
                if (before.count(k))
                {
                    entry["baseline_ms"] = before.at(k);
                }
                w.steady_state[k] = entry;
            }
            if (w.steady_state.empty())
            {
                w.reason += std::string(w.reason.empty() ? "" : "; ")
                            + "the steady-state launch time was not measured: no recommendation without it";
                if (w.verdict == "improved")
                {
                    w.verdict = "inconclusive";
                }
            }
        }
        return w;
    }

    void apply_whatif(report& r)
    {
        for (const auto& w : r.whatif)
        {
            // The saving on the clock the replay was judged on, ready to show.
            std::optional<double> saving = w.saving_cold_module_ms;
            std::string clock = "cold module work";
            if (w.judged_on.rfind("compile elapsed", 0) == 0)
            {
                saving = w.saving_compile_elapsed_ms;
                clock = "compile elapsed";
            }
            else if (w.judged_on.rfind("warm module work", 0) == 0)
            {
                saving = w.saving_warm_module_ms;
                clock = "warm module work";
            }
            json measured = {{"verdict", w.verdict},
                             {"saving_ms", nullable(saving)},
                             {"clock", clock},
                             {"band_ms", nullable(w.band_ms)},
                             {"samples", w.samples},
                             {"judged_on", w.judged_on},
                             {"reason", w.reason},
                             {"lever", w.lever}};
            const bool did_not_pay = w.verdict == "regressed" || w.verdict == "inconclusive" || w.verdict == "invalid";
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
                // An advisory is an opportunity to measure: measured and not paying, it is no
                // longer recommended. A diagnosis stays (the rebuild happened) with its number.
                if (it->kind == "advisory" && did_not_pay)
                {
                    declined_lever d;
                    d.mechanism = it->mechanism;
                    d.lever = w.lever;
                    d.module = it->module;
                    d.device = it->device;
                    d.reason = "measured by the what-if replay: " + w.verdict + (w.reason.empty() ? "" : " (" + w.reason + ")");
                    d.numbers = measured;
                    r.declined.push_back(d);
                    it = r.findings.erase(it);
                    continue;
                }
                ++it;
            }
            // Measured paying where the estimate had declined it: the measurement wins.
            if (!any_finding && w.verdict == "improved")
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
                    f.kind = "advisory";
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
                d.reason = "measured by the what-if replay: " + w.verdict + (w.reason.empty() ? "" : " (" + w.reason + ")");
                d.numbers = measured;
                r.declined.push_back(d);
            }
        }
    }
}
