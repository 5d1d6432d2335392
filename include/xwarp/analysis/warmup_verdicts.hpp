// What warmup --verify's primed samples mean: the rules, beside judge_replay's and the fix
// verdicts. The warm-up layer runs the samples; this reads them.
#ifndef XWARP_ANALYSIS_WARMUP_VERDICTS_HPP
#define XWARP_ANALYSIS_WARMUP_VERDICTS_HPP

#include <optional>
#include <vector>

#include "xwarp/model/report.hpp"
#include "xwarp/model/warmup.hpp"

namespace xwarp
{
    // The check of a warm-up from its primed samples, in the order they ran (the run stops at
    // the first that failed). What the file built is what it said it did (its results, the prime
    // pass's own_results: built as measured, under another hash, or not, with why); what it covers
    // is what the program then did not build. Verified when the file built every identity it
    // covers and the program built none of them in any sample; partial when the file could not
    // build some (a target fails alone) and the program built none of those it did; failed when
    // one it built was built again, or the file or the program failed; interrupted when the user
    // stopped it. The walls, the builds left (covered, uncovered, new), the band of the primed
    // wall against the warm wall and a cold run of the program timed beside the warm-up
    // (`cold_beside`: a sample on fresh private caches before each primed one, interleaved, so both
    // ran under the same load and started from the same empty caches) are filled for the fronts.
    // workers_per_sample: the worker processes each sample's warm-up ran with, when they were
    // tried against each other (the lowest median wall is picked; a tie keeps the fewer).
    warmup_check judge_warmup(const warmup_plan& plan, const std::vector<primed_sample>& samples, bool interrupted,
                              std::optional<double> timeout_s, std::optional<double> serial_cold_build_ms,
                              const std::vector<sample>& cold_beside = {},
                              const std::vector<int>& workers_per_sample = {});
}

#endif
