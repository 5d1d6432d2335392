#include "verification.hpp"

#include <memory>

#include "helper_tools.hpp"
#include "project_copy.hpp"
#include "xwarp/analysis/fix_verdicts.hpp"
#include "xwarp/engine/os/tempdir.hpp"

namespace xwarp::fix_parts
{
    namespace
    {
        // One patched copy of the project, sampled beside the baseline.
        struct patched_copy
        {
            std::string name;
            std::unique_ptr<scoped_temp_dir> tmp;
            std::unique_ptr<sampler> source;
            std::vector<sample> samples;
            std::string failed;  // why it could not be measured
        };

        measure_options with_samples(measure_options o, int samples)
        {
            o.samples = samples;
            return o;
        }

        patched_copy make_copy(const std::string& name, const std::string& patch, const verify_context& in)
        {
            patched_copy c;
            c.name = name;
            c.tmp = std::make_unique<scoped_temp_dir>("xwarp-fixcopy-");
            const std::string dest = c.tmp->path() + "/project";
            try
            {
                copy_project(in.root, dest, in.cancelled);
                write_file(c.tmp->path() + "/fix.patch", patch);
                const tool_run applied = run_tool("git", {"apply", "--whitespace=nowarn", c.tmp->path() + "/fix.patch"}, dest,
                                                  in.cancelled);
                if (!applied.ok)
                {
                    c.failed = "the patch did not apply to a clean copy of the project: " + trimmed(applied.err).substr(0, 500);
                    return c;
                }
                c.source = in.make_sampler(with_samples(in_copy(in.rerun, in.root, dest), in.request.samples));
            }
            catch (const std::exception& e)
            {
                c.failed = std::string("the patched copy could not be prepared: ") + e.what();
            }
            return c;
        }

        patched_copy not_made(const std::string& name, const std::string& why)
        {
            patched_copy c;
            c.name = name;
            c.failed = why;
            return c;
        }

        bool interrupted(const sample& s, const cancel_check& cancelled)
        {
            return s.cold.interrupted || (s.warm && s.warm->interrupted) || (cancelled && cancelled());
        }

        // The baseline and each copy, a sample at a time, round by round (baseline i, then each
        // copy's i): a slow stretch of the machine lands on all. A copy that cannot start stops
        // its own sampling (it is judged invalid, saying why); the baseline's stops them all
        // (the comparisons then say it failed). False when interrupted.
        bool sample_interleaved(sampler& baseline, std::vector<sample>& baseline_samples, std::vector<patched_copy>& copies,
                                const verify_context& in)
        {
            for (int i = 1; i <= in.request.samples; ++i)
            {
                baseline_samples.push_back(baseline.run(i, {}, "", in.observer, in.cancelled));
                if (interrupted(baseline_samples.back(), in.cancelled))
                {
                    return false;
                }
                if (!baseline_samples.back().cold.spawn_error.empty())
                {
                    return true;
                }
                for (auto& c : copies)
                {
                    if (!c.source || !c.failed.empty())
                    {
                        continue;
                    }
                    c.samples.push_back(c.source->run(i, {}, c.name, in.observer, in.cancelled));
                    if (interrupted(c.samples.back(), in.cancelled))
                    {
                        return false;
                    }
                    if (const std::string& why = c.samples.back().cold.spawn_error; !why.empty())
                    {
                        c.failed = "the patched program could not start: " + why;
                    }
                }
            }
            return true;
        }
    }

    bool verify_each(std::vector<fix_result>& results, const verify_context& in)
    {
        std::vector<patched_copy> copies;
        std::vector<fix_result*> of_copy;
        for (auto& f : results)
        {
            if (!f.patch.empty())
            {
                copies.push_back(make_copy(f.finding, f.patch, in));
                of_copy.push_back(&f);
            }
        }
        if (copies.empty())
        {
            return true;
        }
        const std::unique_ptr<sampler> baseline = in.make_sampler(with_samples(in.rerun, in.request.samples));
        std::vector<sample> baseline_samples;
        if (!sample_interleaved(*baseline, baseline_samples, copies, in))
        {
            return false;
        }
        const report base = baseline->report_of(std::move(baseline_samples));
        for (std::size_t i = 0; i < copies.size(); ++i)
        {
            if (!copies[i].source || !copies[i].failed.empty())
            {
                of_copy[i]->verdict = fix_verdict::invalid;
                of_copy[i]->reason = copies[i].failed;
                continue;
            }
            judge_patch(*of_copy[i], base, copies[i].source->report_of(std::move(copies[i].samples)));
        }
        return true;
    }

    bool verify_together(std::vector<fix_result*>& verified,
                         const std::function<std::string(std::size_t k, std::string& why)>& patch_of,
                         const verify_context& in)
    {
        if (verified.size() < 2)
        {
            return true;
        }
        std::vector<patched_copy> steps;
        for (std::size_t k = 0; k < verified.size(); ++k)
        {
            std::string why;
            const std::string patch = patch_of(k, why);
            steps.push_back(patch.empty() ? not_made(verified[k]->finding, "they do not combine: " + why)
                                          : make_copy(verified[k]->finding, patch, in));
        }
        const std::unique_ptr<sampler> baseline = in.make_sampler(with_samples(in.rerun, in.request.samples));
        std::vector<sample> baseline_samples;
        if (!sample_interleaved(*baseline, baseline_samples, steps, in))
        {
            return false;
        }
        report before = baseline->report_of(std::move(baseline_samples));
        for (std::size_t k = 0; k < steps.size(); ++k)
        {
            if (!steps[k].source || !steps[k].failed.empty())
            {
                not_combined(*verified[k], steps[k].failed);
                continue;
            }
            report after = steps[k].source->report_of(std::move(steps[k].samples));
            judge_together_step(*verified[k], k, before, after);
            before = std::move(after);
        }
        return true;
    }
}
