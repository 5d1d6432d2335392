// warp-probe warmup: plan, file, and the verification on fresh private caches.
#include "xwarp/warmup/warmup.hpp"

#include "xwarp/model/json_io.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <tuple>

#include "xwarp/analysis/stats.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/model/format.hpp"
#include "xwarp/os/tempdir.hpp"
#include "xwarp/render/warmup.hpp"

namespace xwarp
{
    namespace
    {
        // Beside the target, renamed over it: a symlink planted at the name is replaced, never
        // followed; a FIFO nobody reads is refused.
        void write_file(const std::string& path, const std::string& text)
        {
            try
            {
                save_streamed(path, [&](std::ostream& out) { out << text; });
            }
            catch (const std::exception& e)
            {
                throw warmup_error("cannot write the warm-up file " + path + " (" + e.what() + ")", true);
            }
        }

        // The Python that ran the program: the warm-up needs its Warp.
        std::string program_python(const report& saved, const measure_options& rerun)
        {
            if (!rerun.python.empty())
            {
                return rerun.python;
            }
            if (!saved.env.python_executable.empty())
            {
                return saved.env.python_executable;
            }
            return "python3";
        }

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

        warmup_check verify(const report& saved, const warmup_plan& plan, const measure_options& rerun, int samples,
                            run_observer* observer, const cancel_check& cancelled)
        {
            scoped_temp_dir files("xwarp-warmup-");
            const std::string script = files.path() + "/warp_warmup.py";
            write_file(script, plan.script);
            measure_options prime_options = rerun;
            prime_options.python.clear();
            prime_options.command = {program_python(saved, rerun), script, "--root", plan.import_root,
                                     "--workers", std::to_string(plan.workers)};
            prime_options.samples = samples;
            measure_options program_options = rerun;
            program_options.samples = samples;
            const prepared_command prime = prepare_command(prime_options);
            const prepared_command program = prepare_command(program_options);

            warmup_check c;
            std::vector<double> warmup_wall, warmup_build, primed_wall, warm_wall;
            std::set<std::tuple<std::string, std::string, std::string, int>> seen;  // each identity once over the samples
            for (int i = 1; i <= samples; ++i)
            {
                primed_sample s = run_primed_sample(program, prime, i, observer, cancelled);
                if (s.prime.interrupted || s.program.cold.interrupted || (s.program.warm && s.program.warm->interrupted)
                    || (cancelled && cancelled()))
                {
                    c.verdict = "interrupted";
                    c.reasons.push_back("interrupted at sample " + std::to_string(i));
                    break;
                }
                ++c.samples;
                if (!s.prime.ok())
                {
                    c.verdict = "failed";
                    c.reasons.push_back("the warm-up failed (" + describe_failure(s.prime, rerun.timeout_s) + "): "
                                        + (s.prime.error_line.empty() ? s.prime.stdout_tail + s.prime.stderr_tail : s.prime.error_line));
                    break;
                }
                warmup_wall.push_back(s.prime.wall_ms);
                int builds = 0;
                if (auto span = build_span(s.prime, builds))
                {
                    warmup_build.push_back(*span);
                }
                if (i == 1)
                {
                    c.warmup_builds = builds;
                }
                if (!s.program.ok())
                {
                    c.verdict = "failed";
                    c.reasons.push_back("the program failed on the primed cache (" + describe_failure(s.program.cold, rerun.timeout_s) + ")");
                    break;
                }
                primed_wall.push_back(s.program.cold.wall_ms);
                warm_wall.push_back(s.program.warm->wall_ms);
                for (const auto& l : s.program.cold.module_loads)
                {
                    if (l.status != load_status::compiled)
                    {
                        continue;
                    }
                    if (!seen.insert({l.module.str(), l.hash.str(), l.device.str(), l.block_dim.value_or(-1)}).second)
                    {
                        continue;
                    }
                    const warmup_target* t = target_of(plan, l);
                    (!t ? c.new_built : t->covered ? c.covered_built : c.uncovered_built).push_back(built_words(l));
                }
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
            if (saved.result.cold_module_ms.median)
            {
                c.serial_cold_build_ms = saved.result.cold_module_ms.median;
            }
            if (c.verdict.empty())
            {
                c.verdict = c.covered_built.empty() ? "verified" : "failed";
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
            return c;
        }
    }

    warmup_plan warmup(const report& saved, const measure_options& rerun, const warmup_job& job, run_observer* observer,
                       const cancel_check& cancelled)
    {
        report analysed = saved;
        analyze(analysed);
        warmup_plan plan;
        try
        {
            plan = plan_warmup(analysed, job.plan);
        }
        catch (const std::invalid_argument& e)
        {
            throw warmup_error(e.what());
        }
        plan.script = render_warmup_script(plan);
        if (!job.out_path.empty())
        {
            write_file(job.out_path, plan.script);
            plan.script_path = job.out_path;
        }
        if (job.verify)
        {
            if (plan.covered == 0)
            {
                throw warmup_error("the warm-up covers no identity of this run: there is nothing to verify");
            }
            plan.check = verify(analysed, plan, rerun, std::max(1, job.samples), observer, cancelled);
        }
        return plan;
    }
}
