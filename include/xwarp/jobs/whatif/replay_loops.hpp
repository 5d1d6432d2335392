// What-if replays, the runs: the unmodified command measured with one lever at a time applied
// by the shim, lever samples interleaved with baseline samples one by one (so a slow stretch
// of the machine lands on both), then judged by the analysis (analysis/replay_plans.hpp).
#ifndef XWARP_WHATIF_REPLAY_LOOPS_HPP
#define XWARP_WHATIF_REPLAY_LOOPS_HPP

#include <optional>
#include <string>
#include <vector>

#include "xwarp/model/report.hpp"
#include "xwarp/model/run_request.hpp"
#include "xwarp/engine/runner/runner.hpp"
#include "xwarp/engine/runner/sampler.hpp"

namespace xwarp
{
    // Default budget: this many cold runs of the command.
    inline constexpr double default_budget_cold_runs = 6.0;

    // measure --whatif: the baseline's first sample decides the plans; its other samples then
    // interleave with each lever's samples (as many as the baseline's; with until_settled, two,
    // and the rounds add the rest up to max_samples). Returns the analysed
    // baseline report with whatif[] filled. Throws probe_error and unknown_lever before running.
    report measure_with_whatif(const measure_options& options,
                               const replay_request& request,
                               run_observer* observer,
                               const cancel_check& cancelled,
                               const sampler_factory& make_sampler = command_samplers());

    // The loop itself, on any sampler: `samples` a side planned (two with until_settled).
    report measure_with_whatif(sampler& command, int samples, const replay_request& request, run_observer* observer,
                               const cancel_check& cancelled);

    // warp-probe whatif REPORT: replays the levers on a saved report's command, with fresh
    // baseline samples interleaved (the saved samples were taken at another time), or against
    // the saved samples themselves with request.reuse_baseline. Returns the saved report,
    // re-analysed, with whatif[] filled.
    report replay_saved(const report& saved,
                        const measure_options& options,
                        const replay_request& request,
                        run_observer* observer,
                        const cancel_check& cancelled,
                        const sampler_factory& make_sampler = command_samplers());
    report replay_saved(const report& saved, sampler& command, int samples, const replay_request& request,
                        run_observer* observer, const cancel_check& cancelled);
}

#endif
