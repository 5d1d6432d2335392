#include "xwarp/analysis/warmup_verdicts.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "xwarp/analysis/stats.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp
{
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

        void add_wall_reasons(warmup_check& c)
        {
            if (!c.covered_built.empty())
            {
                c.reasons.push_back(std::to_string(c.covered_built.size())
                                    + " identity(ies) the warm-up covers still built at run time: the warm-up built "
                                      "another form of them (a hash that differs)");
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
                              std::optional<double> timeout_s, std::optional<double> serial_cold_build_ms)
    {
        warmup_check c;
        std::optional<warmup_verdict> decided;
        std::vector<double> warmup_wall, warmup_build, primed_wall, warm_wall;
        std::set<std::tuple<std::string, std::string, std::string, int>> seen;  // each identity once over the samples
        for (std::size_t i = 0; i < samples.size() && !decided; ++i)
        {
            const primed_sample& s = samples[i];
            ++c.samples;
            if (!s.prime.ok())
            {
                decided = warmup_verdict::failed;
                c.reasons.push_back("the warm-up failed (" + describe_failure(s.prime, timeout_s) + "): "
                                    + (s.prime.error_line.empty() ? s.prime.stdout_tail + s.prime.stderr_tail : s.prime.error_line));
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
                (!t ? c.new_built : t->covered ? c.covered_built : c.uncovered_built).push_back(built_words(l));
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
        if (!decided)
        {
            c.verdict = c.covered_built.empty() ? warmup_verdict::verified : warmup_verdict::failed;
            add_wall_reasons(c);
        }
        else
        {
            c.verdict = *decided;
        }
        return c;
    }
}
