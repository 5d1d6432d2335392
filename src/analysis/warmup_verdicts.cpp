#include "xwarp/analysis/warmup_verdicts.hpp"

#include <algorithm>
#include <map>
#include <cmath>
#include <set>
#include <tuple>

#include "xwarp/analysis/stats.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/model/format.hpp"
#include "xwarp/model/values.hpp"

namespace xwarp
{
    namespace
    {
        // Whether the step (the warm-up, then the program on its cache) costs less than the cold
        // run timed beside it: judged only on a warm-up that built what it covers, and with the
        // cold run's samples enough to call a difference more than noise.
        void judge_cost(warmup_check& c, const warmup_plan& plan)
        {
            const int cold_samples = static_cast<int>(c.cold_wall_beside_ms.values.size());
            // what the file says it built where it said so (--results), else what its pass compiled
            const int built = c.results_read ? c.file_built : c.warmup_builds;
            if (built == 0)
            {
                c.cost = warmup_cost::not_judged;
                c.cost_why = "the warm-up built none of the " + std::to_string(plan.covered)
                             + " identities it covers: its time is no warm-up's, and the program after it ran cold";
                return;
            }
            if (!c.of_cold || !c.of_cold_band)
            {
                c.cost = warmup_cost::not_judged;
                c.cost_why = "no cold run was timed beside it";
                return;
            }
            c.cost = *c.of_cold < 1.0 - *c.of_cold_band   ? warmup_cost::less_than_one_cold_run
                     : *c.of_cold > 1.0 + *c.of_cold_band ? warmup_cost::more_than_one_cold_run
                                                          : warmup_cost::about_one_cold_run;
            c.cost_indicative = cold_samples < 3;
            if (c.cost_indicative)
            {
                c.cost_why = "indicative: " + std::to_string(cold_samples)
                             + " cold sample(s) beside it, whose spread cannot be told from one run's; --samples 3 or "
                               "more judges it";
            }
            if (built < plan.covered)
            {
                c.cost_why += std::string(c.cost_why.empty() ? "" : "; ") + "the warm-up built " + std::to_string(built)
                              + " of the " + std::to_string(plan.covered) + " identities it covers: the ratio is for those";
            }
        }
    }

    namespace
    {
        std::string built_words(const module_load& l)
        {
            return l.module.str() + " " + l.short_hash() + " on " + l.device.str()
                   + (l.block_dim ? " block_dim " + std::to_string(*l.block_dim) : std::string()) + " ("
                   + format_ms(l.work_ms()) + ")";
        }

        const warmup_target* target_of(const warmup_plan& plan, const module_load& l)
        {
            for (const auto& t : plan.targets)
            {
                const bool same_device = t.device == l.device.str()
                                         || (!plan.device.empty() && t.device.rfind("cuda", 0) == 0 && l.device.str() == plan.device);
                if (t.module == l.module.str() && t.hash == l.hash.str() && same_device && t.block_dim == l.block_dim)
                {
                    return &t;
                }
            }
            return nullptr;
        }

        // The warm-up's builds, first start to last end, in ms.
        std::optional<double> build_span(const run_result& prime, int& builds)
        {
            double first = 0.0;
            double last = 0.0;
            builds = 0;
            for (const auto& l : prime.module_loads)
            {
                if (l.status != load_status::compiled)
                {
                    continue;
                }
                first = builds == 0 ? l.t_start_ms : std::min(first, l.t_start_ms);
                last = builds == 0 ? l.t_start_ms + l.work_ms() : std::max(last, l.t_start_ms + l.work_ms());
                ++builds;
            }
            return builds > 0 ? std::optional<double>(last - first) : std::nullopt;
        }

        std::string target_words(const warmup_target& t)
        {
            return t.module + " " + t.hash.substr(0, 7) + " on " + t.device
                   + (t.block_dim ? " block_dim " + std::to_string(*t.block_dim) : std::string());
        }

        const warmup_target* planned(const warmup_plan& plan, const nlohmann::json& o)
        {
            const std::string module = field_or(o, "warp_module", std::string());
            const std::string hash = field_or(o, "hash", std::string());
            const std::string device = field_or(o, "device", std::string());
            const nlohmann::json bd = o.value("block_dim", nlohmann::json());
            for (const auto& t : plan.targets)
            {
                if (t.covered && t.module == module && t.hash == hash && t.device == device
                    && (bd.is_number_integer() ? t.block_dim == bd.get<int>() : !t.block_dim))
                {
                    return &t;
                }
            }
            return nullptr;
        }

        // The file's own account of the first sample (its --results): which covered targets it
        // built as measured, under another hash, or not at all. Those it did not build as measured
        // are returned: their builds at run time are the file's failures, already named, not a
        // verification's.
        std::set<const warmup_target*> read_file_results(warmup_check& c, const warmup_plan& plan, const run_result& prime)
        {
            std::set<const warmup_target*> not_as_measured;
            const nlohmann::json& r = prime.own_results;
            if (!r.is_object() || !r.contains("outcomes") || !r["outcomes"].is_array())
            {
                return not_as_measured;
            }
            c.results_read = true;
            for (const auto& o : r["outcomes"])
            {
                if (!o.is_object())
                {
                    continue;
                }
                const warmup_target* t = planned(plan, o);
                const std::string words = t ? target_words(*t) : field_or(o, "warp_module", std::string("a target"));
                const std::string built_hash = field_or(o, "built_hash", std::string());
                if (!o.value("built", false))
                {
                    c.file_failed.push_back(words + ": " + field_or(o, "error", std::string("not built")));
                }
                else if (!built_hash.empty() && t && built_hash != t->hash)
                {
                    c.file_other.push_back(words + " (built as " + built_hash.substr(0, 7) + ")");
                }
                else
                {
                    ++c.file_built;
                    continue;
                }
                if (t)
                {
                    not_as_measured.insert(t);
                }
            }
            return not_as_measured;
        }

        // The warm-up's wall at each number of workers the samples tried, and the fastest.
        void pick_workers(warmup_check& c, const std::vector<primed_sample>& samples, const std::vector<int>& workers)
        {
            std::map<int, std::vector<double>> walls;
            for (std::size_t i = 0; i < samples.size() && i < workers.size(); ++i)
            {
                if (samples[i].prime.ok())
                {
                    walls[workers[i]].push_back(samples[i].prime.wall_ms);
                }
            }
            if (walls.size() < 2)
            {
                return;
            }
            for (const auto& [n, w] : walls)
            {
                c.worker_trials.push_back({n, make_stat(w)});
                const auto& best = c.worker_trials;
                if (!c.workers_picked
                    || *c.worker_trials.back().wall_ms.median
                           < *std::find_if(best.begin(), best.end(), [&](const warmup_check::worker_trial& t)
                                           { return t.workers == *c.workers_picked; })->wall_ms.median)
                {
                    c.workers_picked = n;
                }
            }
        }

        void add_wall_reasons(warmup_check& c)
        {
            if (!c.covered_built.empty())
            {
                c.reasons.push_back(std::to_string(c.covered_built.size())
                                    + " identity(ies) the warm-up built still built at run time: the program built "
                                      "another form of them (a hash that differs)");
            }
            if (!c.file_failed.empty() || !c.file_other.empty())
            {
                c.reasons.push_back(std::to_string(c.file_failed.size() + c.file_other.size())
                                    + " identity(ies) the file could not build as measured (named above): each failed "
                                      "alone, and the program built it at run time");
            }
            if (c.wall_gap_ms && c.band_ms)
            {
                c.reasons.push_back(std::abs(*c.wall_gap_ms) <= *c.band_ms
                                        ? "the program's wall on the primed cache is within the band of its warm wall"
                                        : "the program's wall on the primed cache is outside the band of its warm wall ("
                                              + format_ms(*c.wall_gap_ms) + ")");
            }
        }
    }

    warmup_check judge_warmup(const warmup_plan& plan, const std::vector<primed_sample>& samples, bool interrupted,
                              std::optional<double> timeout_s, std::optional<double> serial_cold_build_ms,
                              const std::vector<sample>& cold_beside, const std::vector<int>& workers_per_sample)
    {
        warmup_check c;
        std::vector<double> cold_walls;
        for (const auto& s : cold_beside)
        {
            if (s.cold.ok())
            {
                cold_walls.push_back(s.cold.wall_ms);
            }
        }
        c.cold_wall_beside_ms = make_stat(cold_walls);
        std::set<const warmup_target*> not_as_measured;
        int program_built_first = 0;  // the run's identities the program built in the first sample
        std::optional<warmup_verdict> decided;
        std::vector<double> warmup_wall, warmup_build, primed_wall, warm_wall;
        std::set<std::tuple<std::string, std::string, std::string, int>> seen;  // each identity once over the samples
        for (std::size_t i = 0; i < samples.size() && !decided; ++i)
        {
            const primed_sample& s = samples[i];
            ++c.samples;
            if (i == 0)
            {
                not_as_measured = read_file_results(c, plan, s.prime);
            }
            if (!s.prime.ok())
            {
                decided = warmup_verdict::failed;
                c.reasons.push_back("the warm-up file failed (" + describe_failure(s.prime, timeout_s) + ")"
                                    + (s.prime.error_line.empty() ? std::string() : ": " + s.prime.error_line));
                break;
            }
            warmup_wall.push_back(s.prime.wall_ms);
            int builds = 0;
            if (auto span = build_span(s.prime, builds))
            {
                warmup_build.push_back(*span);
            }
            if (i == 0)
            {
                c.warmup_builds = builds;
            }
            if (!s.program.ok())
            {
                decided = warmup_verdict::failed;
                c.reasons.push_back("the program failed on the primed cache (" + describe_failure(s.program.cold, timeout_s) + ")");
                break;
            }
            c.program_ran = true;
            primed_wall.push_back(s.program.cold.wall_ms);
            warm_wall.push_back(s.program.warm->wall_ms);
            for (const auto& l : s.program.cold.module_loads)
            {
                if (l.status != load_status::compiled
                    || !seen.insert({l.module.str(), l.hash.str(), l.device.str(), l.block_dim.value_or(-1)}).second)
                {
                    continue;
                }
                const warmup_target* t = target_of(plan, l);
                program_built_first += t && i == 0 ? 1 : 0;
                const bool built_by_file = t && t->covered && !not_as_measured.count(t);
                (!t ? c.new_built : built_by_file ? c.covered_built : c.uncovered_built).push_back(built_words(l));
            }
            if (i == 0)
            {
                c.covered_measured = static_cast<int>(plan.targets.size()) - program_built_first;
            }
        }
        if (interrupted && !decided)
        {
            decided = warmup_verdict::interrupted;
            c.reasons.push_back("interrupted at sample " + std::to_string(samples.size() + 1));
        }
        c.warmup_wall_ms = make_stat(warmup_wall);
        c.warmup_build_ms = make_stat(warmup_build);
        c.primed_wall_ms = make_stat(primed_wall);
        c.warm_wall_ms = make_stat(warm_wall);
        if (c.primed_wall_ms.median && c.warm_wall_ms.median)
        {
            c.wall_gap_ms = *c.primed_wall_ms.median - *c.warm_wall_ms.median;
            c.band_ms = std::max(0.01 * *c.warm_wall_ms.median,
                                 2.0 * std::max(c.primed_wall_ms.mad.value_or(0.0), c.warm_wall_ms.mad.value_or(0.0)));
        }
        c.serial_cold_build_ms = serial_cold_build_ms;
        if (c.warmup_wall_ms.median && c.primed_wall_ms.median)
        {
            c.warmup_and_primed_ms = *c.warmup_wall_ms.median + *c.primed_wall_ms.median;
            if (c.cold_wall_beside_ms.median && *c.cold_wall_beside_ms.median > 0)
            {
                // a step before the program pays for itself on one run only when the two together
                // take less than the cold run beside them, beyond both sides' spread
                const double cold = *c.cold_wall_beside_ms.median;
                const double spread = 2.0 * std::max({c.cold_wall_beside_ms.mad.value_or(0.0), c.warmup_wall_ms.mad.value_or(0.0),
                                                      c.primed_wall_ms.mad.value_or(0.0)});
                c.of_cold = *c.warmup_and_primed_ms / cold;
                c.of_cold_band = std::max(0.01, spread / cold);
            }
        }
        judge_cost(c, plan);
        pick_workers(c, samples, workers_per_sample);
        if (!decided)
        {
            c.verdict = !c.covered_built.empty()                              ? warmup_verdict::failed
                        : !c.file_failed.empty() || !c.file_other.empty()      ? warmup_verdict::partial
                                                                               : warmup_verdict::verified;
            add_wall_reasons(c);
        }
        else
        {
            c.verdict = *decided;
        }
        return c;
    }
}
