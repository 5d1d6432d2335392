// warp-probe warmup: the warm-up file of a measured run (analysis plans it, render writes it)
// and, with verify, the proof: in fresh private caches the warm-up runs, then the program on
// the cache it filled; every covered identity the program still builds is a failure, named.
#ifndef XWARP_WARMUP_WARMUP_JOB_HPP
#define XWARP_WARMUP_WARMUP_JOB_HPP

#include <stdexcept>
#include <string>

#include "xwarp/analysis/warmup_plan.hpp"
#include "xwarp/model/warmup.hpp"
#include "xwarp/engine/runner/runner.hpp"
#include "xwarp/engine/runner/sampler.hpp"

namespace xwarp
{
    // A request that cannot be carried out, before anything runs (a report with no good
    // sample, a file that cannot be written).
    class warmup_error : public std::runtime_error
    {
    public:
        explicit warmup_error(const std::string& message, bool io = false) : std::runtime_error(message), cannot_write(io) {}
        bool cannot_write;  // the file could not be written (not a bad request)
    };

    // The plan of the saved report, its file written to out_path, and with verify the check.
    // `rerun` re-runs the report's command as it was measured (the use cases' rerun of it). An
    // interrupted check says so in its verdict.
    // The samples come from make_sampler (the real command, or --replay-streams' recordings).
    // `source` names the report in the file's header.
    warmup_plan warmup(const report& saved, const std::string& source, const measure_options& rerun,
                       const warmup_request& request, run_observer* observer,
                       const cancel_check& cancelled, const sampler_factory& make_sampler = command_samplers());
}

#endif
