// What warmup --verify's primed samples mean: the rules, beside judge_replay's and the fix
// verdicts. The warm-up layer runs the samples; this reads them.
#ifndef XWARP_ANALYSIS_WARMUP_VERDICTS_HPP
#define XWARP_ANALYSIS_WARMUP_VERDICTS_HPP

#include <optional>
#include <vector>

#include "xwarp/model/warmup.hpp"

namespace xwarp
{
    // The check of a warm-up from its primed samples, in the order they ran (the run stops at
    // the first that failed): verified when every identity the warm-up covers loaded from its
    // cache in every sample; failed when one still built or a run failed; interrupted when the
    // user stopped it. The walls, the builds left (covered, uncovered, new) and the band of the
    // primed wall against the warm wall are filled for the fronts.
    warmup_check judge_warmup(const warmup_plan& plan, const std::vector<primed_sample>& samples, bool interrupted,
                              std::optional<double> timeout_s, std::optional<double> serial_cold_build_ms);
}

#endif
