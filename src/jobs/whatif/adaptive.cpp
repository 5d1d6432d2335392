#include "xwarp/jobs/whatif/adaptive.hpp"

#include <algorithm>

#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/compare.hpp"
#include "xwarp/analysis/summarize.hpp"

namespace xwarp
{
    report measure_until_settled(sampler& source, int max_samples, run_observer* observer, const cancel_check& cancelled)
    {
        max_samples = std::max(2, max_samples);
        std::vector<sample> samples;
        std::string why;
        for (int i = 1; i <= max_samples; ++i)
        {
            samples.push_back(source.run(i, {}, "", observer, cancelled));
            if (stop_sampling(samples.back(), cancelled))
            {
                why = "interrupted";
                break;
            }
            why = sampling_settled(samples);
            if (!why.empty())
            {
                break;
            }
            if (observer && i < max_samples)
            {
                observer->sample_finished(i, max_samples, source.report_of(samples));
            }
        }
        if (why.empty())
        {
            why = "reached --max-samples " + std::to_string(max_samples) + " without settling (the identities "
                  "differ between samples, or the median is not yet known to within compare's band)";
        }
        report r = source.report_of(std::move(samples));
        r.run_settings.sampling = "auto (2 to " + std::to_string(max_samples) + ")";
        r.run_settings.stopped_because = why;
        analyze(r);
        return r;
    }

    report measure_until_settled(const measure_options& options,
                                 int max_samples,
                                 run_observer* observer,
                                 const cancel_check& cancelled,
                                 const sampler_factory& make_sampler)
    {
        measure_options opts = options;
        opts.samples = std::max(2, max_samples);  // what the observer shows as "of N": the most it may take
        const std::unique_ptr<sampler> source = make_sampler(opts);
        return measure_until_settled(*source, max_samples, observer, cancelled);
    }

    measure_options rerun_settings(const report& saved)
    {
        measure_options o;
        o.command = saved.command;
        o.cwd = saved.cwd;
        o.samples = std::max(1, saved.run_settings.samples);
        o.python = saved.run_settings.python;
        o.label = saved.label;
        o.timeout_s = saved.run_settings.timeout_s;
        o.nvrtc_trace = saved.run_settings.nvrtc_trace;
        return o;
    }

    comparison compare_until_settled(report& before, report& after, sampler& before_source, sampler& after_source,
                                     int max_samples, const std::string& before_name, const std::string& after_name,
                                     run_observer* observer, const cancel_check& cancelled)
    {
        max_samples = std::max(2, max_samples);
        comparison c = compare_reports(before, after, before_name, after_name);
        settling s;
        s.max_samples = max_samples;
        s.stopped_because = settled_because(c, max_samples);
        bool interrupted = false;
        while (s.stopped_because.empty() && !interrupted)
        {
            const int n_before = static_cast<int>(before.samples.size());
            const int n_after = static_cast<int>(after.samples.size());
            if (n_before >= max_samples && n_after >= max_samples)
            {
                break;
            }
            // before then after, so a slow stretch of the machine lands on both sides
            const int target = std::min(max_samples, std::min(n_before, n_after) + 1);
            for (auto* side : {&before, &after})
            {
                if (interrupted || static_cast<int>(side->samples.size()) >= target)
                {
                    continue;
                }
                const bool is_before = side == &before;
                side->samples.push_back((is_before ? before_source : after_source)
                                            .run(static_cast<int>(side->samples.size()) + 1, {}, "", observer, cancelled));
                ++(is_before ? s.added_before : s.added_after);
                interrupted = stop_sampling(side->samples.back(), cancelled);
            }
            if (!interrupted)
            {
                c = compare_reports(before, after, before_name, after_name);
                s.stopped_because = settled_because(c, max_samples);
            }
        }
        s.settled = !s.stopped_because.empty();
        if (interrupted)
        {
            s.interrupted = true;
            s.stopped_because = "interrupted";
        }
        else if (!s.settled)
        {
            s.stopped_because = "reached --max-samples " + std::to_string(max_samples) + " a side without settling";
        }
        c.until_settled = s;
        return c;
    }

    comparison compare_until_settled(report& before,
                                     report& after,
                                     const measure_options& before_options,
                                     const measure_options& after_options,
                                     int max_samples,
                                     const std::string& before_name,
                                     const std::string& after_name,
                                     run_observer* observer,
                                     const cancel_check& cancelled,
                                     const sampler_factory& make_sampler)
    {
        // Both commands are checked before anything runs: a missing folder fails at once.
        const std::unique_ptr<sampler> before_source = make_sampler(before_options);
        const std::unique_ptr<sampler> after_source = make_sampler(after_options);
        return compare_until_settled(before, after, *before_source, *after_source, max_samples, before_name, after_name,
                                     observer, cancelled);
    }
}
