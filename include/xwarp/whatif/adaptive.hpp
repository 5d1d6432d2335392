// --samples auto: samples until the measurement settles (analysis/summarize.hpp says when),
// at least two and at most max_samples; the report says why it stopped.
#ifndef XWARP_WHATIF_ADAPTIVE_HPP
#define XWARP_WHATIF_ADAPTIVE_HPP

#include "xwarp/model/report.hpp"
#include "xwarp/runner/runner.hpp"

namespace xwarp
{
    inline constexpr int default_max_samples = 10;

    report measure_until_settled(const measure_options& options,
                                 int max_samples,
                                 run_observer* observer,
                                 const cancel_check& cancelled);
}

#endif
