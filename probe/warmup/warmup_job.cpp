// warp-probe warmup: plan, file, and the verification on fresh private caches.
#include "xwarp/warmup/warmup_job.hpp"

#include "xwarp/model/json_io.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <tuple>

#include "xwarp/analysis/summarize.hpp"
#include "xwarp/analysis/warmup_verdicts.hpp"
#include "xwarp/model/format.hpp"
#include "xwarp/os/tempdir.hpp"
#include "xwarp/render/warmup_file.hpp"

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

        // warmup --verify: in fresh private caches per sample, the warm-up, then the program on
        // the cache it filled; stops at the first sample that failed or an interrupt, and hands
        // the samples to the analysis's rules.
        warmup_check verify(const report& saved, const warmup_plan& plan, const measure_options& rerun, int samples,
                            const sampler_factory& make_sampler, run_observer* observer, const cancel_check& cancelled)
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
            const std::unique_ptr<sampler> program = make_sampler(program_options);

            std::vector<primed_sample> taken;
            bool interrupted = false;
            for (int i = 1; i <= samples; ++i)
            {
                primed_sample s = program->run_primed(i, prime_options, observer, cancelled);
                if (s.prime.interrupted || s.program.cold.interrupted || (s.program.warm && s.program.warm->interrupted)
                    || (cancelled && cancelled()))
                {
                    interrupted = true;
                    break;
                }
                const bool failed = !s.prime.ok() || !s.program.ok();
                taken.push_back(std::move(s));
                if (failed)
                {
                    break;
                }
            }
            return judge_warmup(plan, taken, interrupted, rerun.timeout_s, saved.result.cold_module_ms.median);
        }
    }

    warmup_plan warmup(const report& saved, const measure_options& rerun, const warmup_job& job, run_observer* observer,
                       const cancel_check& cancelled, const sampler_factory& make_sampler)
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
            plan.check = verify(analysed, plan, rerun, std::max(1, job.samples), make_sampler, observer, cancelled);
        }
        return plan;
    }
}
