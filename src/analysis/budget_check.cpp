#include "xwarp/analysis/budget_check.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "xwarp/model/format.hpp"

#include "budget_metrics/metric.hpp"

namespace xwarp
{
    const std::vector<std::string>& budget_metrics()
    {
        static const std::vector<std::string> names = []
        {
            std::vector<std::string> out;
            for (const auto* m : budget_parts::metric_registry())
            {
                out.emplace_back(m->name);
            }
            return out;
        }();
        return names;
    }

    namespace
    {
        // option:MODULE.KEY=VALUE's value as JSON: true/false (Python's spelling too), a number,
        // else the word as a string.
        std::string option_value_json(const std::string& text)
        {
            if (text == "true" || text == "True")
            {
                return "true";
            }
            if (text == "false" || text == "False")
            {
                return "false";
            }
            // a JSON number keeps its kind (32 stays an integer, as the recorded options hold it)
            const nlohmann::json number = nlohmann::json::parse(text, nullptr, false);
            return number.is_number() ? number.dump() : nlohmann::json(text).dump();
        }

        // A clause that is not METRIC<=N or METRIC>=N.
        budget_limit parse_clause(const std::string& part)
        {
            budget_limit c;
            for (const auto& [name, kind] : {std::pair<const char*, limit_kind>("workload", limit_kind::workload),
                                             {"kernels", limit_kind::kernels}, {"results", limit_kind::results}})
            {
                if (part.rfind(name, 0) == 0)
                {
                    if (part != std::string(name) + "=same")
                    {
                        throw budget_error("'" + part + "': the " + name + " clause is " + name + "=same");
                    }
                    c.kind = kind;
                    c.metric = name;
                    return c;
                }
            }
            if (part.rfind("option:", 0) == 0)
            {
                const std::string rest = part.substr(7);
                const auto eq = rest.find('=');
                const auto dot = rest.rfind('.', eq);
                if (eq == std::string::npos || dot == std::string::npos || dot == 0 || dot + 1 >= eq || eq + 1 >= rest.size())
                {
                    throw budget_error("'" + part + "' is not option:MODULE.KEY=VALUE (the module's Python name, "
                                       "e.g. option:__main__.max_unroll=32) or option:@KERNEL.KEY=VALUE (the module "
                                       "that holds the kernel, whatever its name: a module=\"unique\" kernel's too)");
                }
                c.kind = limit_kind::option;
                c.metric = "option";
                c.module = rest.substr(0, dot);
                c.option = rest.substr(dot + 1, eq - dot - 1);
                c.value_json = option_value_json(rest.substr(eq + 1));
                return c;
            }
            throw budget_error("'" + part + "' is not METRIC<=NUMBER, METRIC>=NUMBER, workload=same, kernels=same, "
                               "results=same or option:MODULE.KEY=VALUE");
        }
    }

    std::vector<budget_limit> parse_budget(const std::string& spec)
    {
        // limits are words and numbers: a byte that is not UTF-8 would reach the history's JSON
        if (!valid_utf8(spec))
        {
            throw budget_error("the limits are not UTF-8 text (byte " + std::to_string(first_invalid_utf8(spec))
                               + "): write METRIC<=NUMBER[,...]");
        }
        std::vector<budget_limit> out;
        std::size_t start = 0;
        while (start <= spec.size())
        {
            const auto comma = spec.find(',', start);
            const std::string part = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
            start = comma == std::string::npos ? spec.size() + 1 : comma + 1;
            if (part.empty())
            {
                throw budget_error("an empty limit in '" + spec + "' (write METRIC<=NUMBER[,METRIC>=NUMBER...])");
            }
            if (part.find_first_of("<>") == std::string::npos)
            {
                out.push_back(parse_clause(part));
                continue;
            }
            auto op = part.find("<=");
            budget_limit l;
            if (op == std::string::npos)
            {
                op = part.find(">=");
                l.at_least = true;
            }
            if (op == std::string::npos)
            {
                throw budget_error("'" + part + "' is not METRIC<=NUMBER or METRIC>=NUMBER");
            }
            l.metric = part.substr(0, op);
            const auto& known = budget_metrics();
            if (std::find(known.begin(), known.end(), l.metric) == known.end())
            {
                std::string names;
                for (const auto& n : known)
                {
                    names += (names.empty() ? "" : ", ") + n;
                }
                throw budget_error("unknown budget metric '" + l.metric + "' (one of " + names + ")");
            }
            const std::string number = part.substr(op + 2);
            errno = 0;
            char* end = nullptr;
            l.limit = std::strtod(number.c_str(), &end);
            if (number.empty() || *end != '\0' || errno != 0 || !std::isfinite(l.limit) || l.limit < 0.0)
            {
                throw budget_error("'" + part + "': expected a number of 0 or more after " + (l.at_least ? ">=" : "<=")
                                   + ", got '" + number + "'");
            }
            out.push_back(l);
        }
        return out;
    }

    namespace
    {
        std::string number_text(const std::string& metric, double v)
        {
            if (metric.size() > 3 && metric.compare(metric.size() - 3, 3, "-ms") == 0)
            {
                return format_ms(v);
            }
            return format_fixed(v, v == std::floor(v) ? 0 : 2);
        }
    }

    namespace
    {
        // workload=same, from compare's launch gate: what it says when the launches differ
        // names the launch that went missing.
        budget_result workload_result(const workload_check* workload)
        {
            budget_result b;
            b.metric = "workload";
            if (!workload)
            {
                b.exceeded = true;
                b.message = "workload: no run to compare with (workload=same is judged against --compare RUN): "
                            "counted as not met";
                return b;
            }
            b.exceeded = workload->status != workload_status::same;
            b.message = "workload " + word_of(workload->status)
                        + (workload->reason.empty() ? std::string() : ": " + workload->reason);
            // which launch: all of them, the first the runs disagree on, the kernels whose counts moved
            if (b.exceeded && workload->after_launches == 0 && workload->before_launches > 0)
            {
                b.message += "; missing: all " + std::to_string(workload->before_launches) + " launches";
            }
            else if (const auto& d = workload->first_divergence; b.exceeded && d)
            {
                if (d->before && !d->after)
                {
                    b.message += "; missing: " + d->before->kernel + " (launch #" + std::to_string(d->index + 1) + ")";
                }
                else if (d->before && d->after && d->before->kernel != d->after->kernel)
                {
                    // (the same kernel launched otherwise is said in the reason: "block_dim 64 -> 1")
                    b.message += "; launch #" + std::to_string(d->index + 1) + " was " + d->before->kernel + ", now "
                                 + d->after->kernel;
                }
            }
            for (const auto& moved : workload->moved_counts)
            {
                if (b.exceeded)
                {
                    b.message += "; " + moved.kernel + " launched " + std::to_string(moved.after) + " time(s), was "
                                 + std::to_string(moved.before);
                }
            }
            return b;
        }
    }

    namespace
    {
        // kernels=same: the launches kept (workload=same) and none of them now a different kernel.
        budget_result kernels_result(const workload_check* workload)
        {
            budget_result b = workload_result(workload);
            b.metric = "kernels";
            if (!workload || b.exceeded)
            {
                b.message = "kernels: " + b.message;
                return b;
            }
            if (workload->renames.empty())
            {
                b.message = "kernels same: " + workload->reason;
                return b;
            }
            b.exceeded = true;
            b.message = "kernels changed:";
            for (std::size_t i = 0; i < workload->renames.size() && i < 3; ++i)
            {
                const auto& rn = workload->renames[i];
                b.message += std::string(i ? ";" : "") + " where the run compared with launched " + rn.before + ", this one launches "
                             + rn.after;
            }
            return b;
        }

        // The arrays a run's cell left in its namespace (the shim's "results" call), from its
        // first good sample's cold pass; null when none were recorded.
        const nlohmann::json* recorded_results(const report& r)
        {
            for (const auto& smp : r.samples)
            {
                if (!smp.ok())
                {
                    continue;
                }
                for (const auto& p : smp.cold.processes)
                {
                    for (const auto& c : p.calls)
                    {
                        if (c.function == "results" && c.args.is_object())
                        {
                            return &c.args;
                        }
                    }
                }
                return nullptr;
            }
            return nullptr;
        }

        bool close_enough(const nlohmann::json& want, const nlohmann::json& got)
        {
            if (!want.is_number() || !got.is_number())
            {
                return want == got;
            }
            const double a = want.get<double>();
            const double c = got.get<double>();
            return std::fabs(a - c) <= 1e-4 * std::max({1.0, std::fabs(a), std::fabs(c)});
        }

        // How one array differs from the one of the same name in the run compared with, or "".
        std::string array_difference(const std::string& name, const nlohmann::json& want, const nlohmann::json& got)
        {
            for (const char* exact : {"dtype", "shape", "n", "nonfinite"})
            {
                if (want.value(exact, nlohmann::json()) != got.value(exact, nlohmann::json()))
                {
                    return name + ": " + exact + " " + got.value(exact, nlohmann::json()).dump() + ", was "
                           + want.value(exact, nlohmann::json()).dump();
                }
            }
            for (const char* stat : {"sum", "abs_sum", "min", "max"})
            {
                if (!close_enough(want.value(stat, nlohmann::json()), got.value(stat, nlohmann::json())))
                {
                    return name + ": " + stat + " " + got.value(stat, nlohmann::json()).dump() + ", was "
                           + want.value(stat, nlohmann::json()).dump();
                }
            }
            return {};
        }

        // results=same: every array the run compared with left is here, holding the same values.
        budget_result results_result(const report& r, const report* baseline)
        {
            budget_result b;
            b.metric = "results";
            b.exceeded = true;
            const nlohmann::json* before = baseline ? recorded_results(*baseline) : nullptr;
            const nlohmann::json* after = recorded_results(r);
            if (!baseline)
            {
                b.message = "results: no run to compare with (results=same is judged against --compare RUN): counted as not met";
                return b;
            }
            if (!before || !after)
            {
                b.message = std::string("results: ") + (!before ? "the run compared with" : "this run")
                            + " recorded no arrays (only a %%warp_probe cell's are recorded, by a good sample): "
                              "counted as not met";
                return b;
            }
            std::vector<std::string> differences;
            int skipped = 0;
            for (const auto& [name, want] : before->items())
            {
                if (!want.is_object() || !after->value(name, nlohmann::json::object()).is_object())
                {
                    differences.push_back(name + " is not recorded as an array's figures");
                    continue;
                }
                if (want.contains("skipped"))
                {
                    ++skipped;
                    continue;
                }
                if (!after->contains(name))
                {
                    differences.push_back(name + " is gone");
                    continue;
                }
                if (std::string d = array_difference(name, want, (*after)[name]); !d.empty())
                {
                    differences.push_back(d);
                }
            }
            const std::size_t compared = before->size() - static_cast<std::size_t>(skipped);
            if (compared == 0)
            {
                b.message = "results: the run compared with left no array to compare: counted as not met";
                return b;
            }
            b.exceeded = !differences.empty();
            if (!b.exceeded)
            {
                b.message = "results same: the " + std::to_string(compared) + " array(s) the run compared with left "
                            "hold the same values here";
                return b;
            }
            b.message = "results differ:";
            for (std::size_t i = 0; i < differences.size() && i < 3; ++i)
            {
                b.message += std::string(i ? ";" : "") + " " + differences[i];
            }
            if (differences.size() > 3)
            {
                b.message += "; and " + std::to_string(differences.size() - 3) + " more";
            }
            return b;
        }

        // Whether a load's module held the kernel named `name` (its key, or the last part of its
        // qualified name: a kernel in a module="unique" module keeps its own name there).
        bool holds_kernel(const module_load& ld, const std::string& name)
        {
            for (const auto& k : ld.snapshot->kernels)
            {
                const std::string qualname = k.qualname.str();
                const auto dot = qualname.rfind('.');
                if (k.key == name || qualname == name || (dot != std::string::npos && qualname.substr(dot + 1) == name))
                {
                    return true;
                }
            }
            return false;
        }

        // option:MODULE.KEY=VALUE: the module's last cold load (first good sample) carried it;
        // option:@KERNEL.KEY=VALUE: the last cold load of the module that held the kernel did.
        budget_result option_result(const report& r, const budget_limit& l)
        {
            budget_result b;
            b.metric = "option";
            b.module = l.module;
            b.exceeded = true;
            const bool by_kernel = !l.module.empty() && l.module[0] == '@';
            const std::string kernel = by_kernel ? l.module.substr(1) : std::string();
            const std::string what = "option " + l.module + "." + l.option;
            const module_load* last = nullptr;
            for (const auto& smp : r.samples)
            {
                if (!smp.ok())
                {
                    continue;
                }
                for (const auto& ld : smp.cold.module_loads)
                {
                    if (ld.snapshot && (by_kernel ? holds_kernel(ld, kernel) : ld.module == l.module))
                    {
                        last = &ld;
                    }
                }
                break;
            }
            if (!last)
            {
                b.message = what + ": "
                            + (by_kernel ? "no module holding the kernel " + kernel + " was loaded"
                                         : "the module " + l.module + " was never loaded")
                            + " with its options recorded: counted as not met";
                return b;
            }
            if (by_kernel)
            {
                b.module = last->module.str();
            }
            const nlohmann::json& options = *last->snapshot->options;
            const nlohmann::json want = nlohmann::json::parse(l.value_json);
            if (!options.contains(l.option))
            {
                b.message = what + ": not among the options the module loaded with: counted as not met";
                return b;
            }
            const nlohmann::json& got = options[l.option];
            b.exceeded = !(got == want || (got.is_number() && want.is_number() && got.get<double>() == want.get<double>()));
            b.message = what + " " + got.dump() + (b.exceeded ? ", expected " + want.dump() : std::string(" as expected"))
                        + (by_kernel ? " (the last cold load of " + last->module.str() + ", which holds " + kernel + ")"
                                     : std::string(" (the module's last cold load)"));
            return b;
        }
    }

    namespace
    {
        // Why a pass did not start cold, or "": a kernel cache outside the probe's that a
        // sample's pass used, or a module folder in the probe's own cache that no recorded build
        // of the cold pass made.
        std::string not_cold_because(const report& r)
        {
            for (const auto& s : r.samples)
            {
                for (const run_result* pass : {&s.cold, s.warm ? &*s.warm : nullptr})
                {
                    if (pass && !pass->caches_outside.empty())
                    {
                        return "a process used the kernel cache " + pass->caches_outside.front()
                               + ", outside the probe's private one (the program chose it: wp.config.kernel_cache_dir or "
                                 "WARP_CACHE_PATH)";
                    }
                }
                if (!s.cold.built_outside.empty())
                {
                    return "the cold pass's private kernel cache held " + std::to_string(s.cold.built_outside.size())
                           + " module folder(s) no recorded build of the pass made (first: " + s.cold.built_outside.front()
                           + "): built outside the probe";
                }
            }
            return {};
        }

        // A measured value against its limit, in one line; a value that cannot be known is not met.
        void judge(budget_result& b, const std::string& detail)
        {
            if (!b.value)
            {
                b.exceeded = true;
                b.message = b.metric + ": not known for this report"
                            + (detail.empty() ? std::string() : " (" + detail + ")") + ": counted as not met";
                return;
            }
            b.exceeded = b.at_least ? *b.value < b.limit : *b.value > b.limit;
            const char* relation = b.at_least ? (b.exceeded ? " < " : " >= ") : (b.exceeded ? " > " : " <= ");
            b.message = b.metric + " " + number_text(b.metric, *b.value) + relation + number_text(b.metric, b.limit)
                        + (detail.empty() ? "" : ": " + detail);
        }
    }

    std::vector<budget_result> check_budget(const report& r, const std::vector<budget_limit>& limits,
                                            const compared_run& against)
    {
        const workload_check* workload = against.workload;
        const summary& s = r.result;
        const bool measured = s.cold_wall_ms.median.has_value();
        // The heaviest module, and the one with the most builds (module totals come heaviest first).
        const module_total* heaviest = s.modules.empty() ? nullptr : &s.modules.front();
        const module_total* most_ids = heaviest;
        for (const auto& m : s.modules)
        {
            if (most_ids && m.identities > most_ids->identities)
            {
                most_ids = &m;
            }
        }
        std::vector<budget_result> out;
        if (const std::string outside = not_cold_because(r); !outside.empty())
        {
            // A cache the program chose holds builds from before (or keeps this run's for the
            // next): a limit met on it says nothing about this program's cold start.
            for (const auto& l : limits)
            {
                budget_result b;
                b.kind = l.kind;
                b.metric = l.metric;
                b.limit = l.limit;
                b.at_least = l.at_least;
                b.exceeded = true;
                b.judged = false;
                b.message = l.metric + ": not judged: " + outside
                            + ", so what it built is not this program's cold start: counted as not met";
                out.push_back(b);
            }
            return out;
        }
        for (const auto& l : limits)
        {
            if (l.kind != limit_kind::metric)
            {
                budget_result judged = l.kind == limit_kind::workload  ? workload_result(workload)
                                       : l.kind == limit_kind::kernels ? kernels_result(workload)
                                       : l.kind == limit_kind::results ? results_result(r, against.baseline)
                                                                       : option_result(r, l);
                judged.kind = l.kind;
                out.push_back(std::move(judged));
                continue;
            }
            budget_result b;
            b.metric = l.metric;
            b.limit = l.limit;
            b.at_least = l.at_least;
            std::string detail;
            if (!measured)
            {
                b.exceeded = true;
                b.message = l.metric + ": not measured (no good sample): counted as exceeded";
                out.push_back(b);
                continue;
            }
            const auto& metrics = budget_parts::metric_registry();
            const auto metric = std::find_if(metrics.begin(), metrics.end(), [&](const auto* m) { return l.metric == m->name; });
            if (metric == metrics.end())
            {
                // parse_budget knows only the registry's names: a limit built elsewhere
                b.exceeded = true;
                b.message = l.metric + ": not a budget metric: counted as not met";
                out.push_back(b);
                continue;
            }
            budget_parts::metric_reading reading = (*metric)->measure({r, l, heaviest, most_ids});
            b.value = reading.value;
            b.module = std::move(reading.module);
            detail = std::move(reading.detail);
            judge(b, detail);
            out.push_back(b);
        }
        return out;
    }

    bool needs_compared_run(const std::vector<budget_limit>& limits)
    {
        return std::any_of(limits.begin(), limits.end(), [](const budget_limit& l)
                           { return judged_against_a_run(l.kind); });
    }

    bool budget_exceeded(const std::vector<budget_result>& results)
    {
        for (const auto& b : results)
        {
            if (b.exceeded)
            {
                return true;
            }
        }
        return false;
    }
}
