#include "xwarp/whatif/adaptive.hpp"

#include <algorithm>

#include "xwarp/analysis/summarize.hpp"

namespace xwarp
{
    report measure_until_settled(const measure_options& options,
                                 int max_samples,
                                 run_observer* observer,
                                 const cancel_check& cancelled)
    {
        max_samples = std::max(2, max_samples);
        measure_options opts = options;
        opts.samples = max_samples;  // what the observer shows as "of N": the most it may take
        const prepared_command command = prepare_command(opts);
        std::vector<sample> samples;
        std::string why;
        for (int i = 1; i <= max_samples; ++i)
        {
            samples.push_back(run_sample(command, i, {}, "", observer, cancelled));
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
                observer->sample_finished(i, max_samples, make_report(command, samples));
            }
        }
        if (why.empty())
        {
            why = "reached --max-samples " + std::to_string(max_samples) + " without settling (the identities "
                  "differ between samples, or the median is not yet known to within compare's band)";
        }
        report r = make_report(command, std::move(samples));
        r.run_settings.sampling = "auto (2 to " + std::to_string(max_samples) + ")";
        r.run_settings.stopped_because = why;
        analyze(r);
        return r;
    }
}
