// fix --verify and --all: patched copies of the project sampled beside the unpatched program,
// round by round, their samples from the injected sampler factory (the real commands, or
// --replay-streams' recordings); the verdicts are the analysis's (analysis/fix_verdicts.hpp).
#ifndef XWARP_FIX_VERIFICATION_HPP
#define XWARP_FIX_VERIFICATION_HPP

#include <string>
#include <vector>

#include "xwarp/analysis/fixes.hpp"
#include "xwarp/jobs/fix/fix.hpp"
#include "xwarp/engine/runner/sampler.hpp"

namespace xwarp::fix_parts
{
    // What the verifications need besides the fixes: where the project is, how its command ran,
    // the request, and where samples come from. False from a step means interrupted.
    struct verify_context
    {
        const std::string& root;
        const measure_options& rerun;
        const fix_request& request;
        const sampler_factory& make_sampler;
        run_observer* observer;
        const cancel_check& cancelled;
    };

    // Each patch on a copy of its own, against fresh baseline samples interleaved with them.
    bool verify_each(std::vector<fix_result>& results, const verify_context& in);

    // The verified patches together, in ranked order: step k is patches 1..k applied together,
    // judged against step k - 1, so that a patch that stops paying once the others are in says so.
    // `patch_of(k)` is the fixer's combined patch of the first k + 1 (why, when it wrote none).
    bool verify_together(std::vector<fix_result*>& verified,
                         const std::function<std::string(std::size_t k, std::string& why)>& patch_of,
                         const verify_context& in);
}

#endif
