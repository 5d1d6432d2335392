// What-if replays, the runs: the unmodified command measured with one lever at a time applied
// by the shim, lever samples interleaved with baseline samples one by one (so a slow stretch
// of the machine lands on both), then judged by the analysis (analysis/replay_plans.hpp).
#ifndef XWARP_WHATIF_REPLAY_LOOPS_HPP
#define XWARP_WHATIF_REPLAY_LOOPS_HPP

#include <optional>
#include <string>
#include <vector>

#include "xwarp/model/report.hpp"
#include "xwarp/engine/runner/runner.hpp"
#include "xwarp/engine/runner/sampler.hpp"

namespace xwarp
{
    struct whatif_request
    {
        bool automatic = false;            // the levers of the findings present
        std::vector<std::string> levers;   // and/or these, by name
        std::optional<double> budget_s;    // replay time allowed; default 6 x one cold run
        // replay_saved only: judge the replays against the saved run's own samples instead of
        // fresh baseline samples (half the runs, for a lesson or a quick look; the machine may
        // have changed since the run was measured, which fresh interleaved samples would see)
        bool reuse_baseline = false;
        // > 0: after the planned samples, add a baseline sample and a sample of each lever whose
        // verdict is not yet settled (compare --until-settled's rule), round by round, until
        // every lever settled, reached this many samples, or the budget ran out. Not with
        // reuse_baseline: the saved samples cannot grow.
        int until_settled_max = 0;
    };

    // The engine's request from the front's: budget_s <= 0 keeps the default; until_settled_max
    // > 0 adds rounds until the verdicts settle.
    whatif_request whatif_request_of(const lever_choice& levers, double budget_s, int until_settled_max);

    // Default budget: this many cold runs of the command.
    inline constexpr double default_budget_cold_runs = 6.0;

    // measure --whatif: the baseline's first sample decides the plans; its other samples then
    // interleave with each lever's samples (as many as the baseline's; with until_settled_max,
    // options.samples is where the rounds start). Returns the analysed
    // baseline report with whatif[] filled. Throws probe_error and unknown_lever before running.
    report measure_with_whatif(const measure_options& options,
                               const whatif_request& request,
                               run_observer* observer,
                               const cancel_check& cancelled,
                               const sampler_factory& make_sampler = command_samplers());

    // The loop itself, on any sampler: `samples` a side planned (two with until_settled_max).
    report measure_with_whatif(sampler& command, int samples, const whatif_request& request, run_observer* observer,
                               const cancel_check& cancelled);

    // warp-probe whatif REPORT: replays the levers on a saved report's command, with fresh
    // baseline samples interleaved (the saved samples were taken at another time), or against
    // the saved samples themselves with request.reuse_baseline. Returns the saved report,
    // re-analysed, with whatif[] filled.
    report replay_saved(const report& saved,
                        const measure_options& options,
                        const whatif_request& request,
                        run_observer* observer,
                        const cancel_check& cancelled,
                        const sampler_factory& make_sampler = command_samplers());
    report replay_saved(const report& saved, sampler& command, int samples, const whatif_request& request,
                        run_observer* observer, const cancel_check& cancelled);
}

#endif
