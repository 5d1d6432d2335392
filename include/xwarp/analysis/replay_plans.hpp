// What-if replays, the analysis half: which levers to replay for a report's findings and with
// what parameters (planned from what the baseline recorded), and how a replay is judged
// against its interleaved baseline samples. The runs themselves are the whatif layer's.
#ifndef XWARP_ANALYSIS_REPLAY_PLANS_HPP
#define XWARP_ANALYSIS_REPLAY_PLANS_HPP

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xwarp/analysis/levers.hpp"
#include "xwarp/model/comparison.hpp"
#include "xwarp/model/report.hpp"

namespace xwarp
{
    // A lever name that is not one of known_levers(): one line for the user.
    class unknown_lever : public std::invalid_argument
    {
    public:
        using std::invalid_argument::invalid_argument;
    };

    // One lever to replay: what the shim is asked to do ($XWARP_WHATIF), for which findings.
    struct lever_plan
    {
        std::string lever;
        std::vector<std::string> mechanisms;  // findings that name the lever (may be none when asked by name)
        std::vector<std::string> modules;
        nlohmann::json params = nlohmann::json::object();
        std::optional<double> estimate_ms;
        double stake_ms = 0.0;      // what the budget ranks it by: the estimate, or the build time it touches
        std::string stake_source;   // which of the two
        std::string not_applicable;  // non-empty: nothing for the lever to move (no replay runs)
        bool time_launches = false;  // mathdx-off: steady-state launch times on both sides

        // The environment the replayed processes get.
        std::map<std::string, std::string> environment() const;

        // The caches each replayed sample's cold pass starts with, filled by a cold pass of the
        // program just before (the contract's x-keeps); empty for a lever that changes the process.
        std::vector<cache_kind> keeps() const;

        // The kernels whose steady-state launches both sides time ($XWARP_TIME_LAUNCHES).
        std::string timed_kernels() const;
    };

    // Plans for the levers asked for, then with `automatic` for the levers of the report's
    // findings, the most time at stake first (the estimate, or for an unestimated lever the
    // build time it touches). Needs an analysed report. Throws unknown_lever for a name that is
    // no lever.
    std::vector<lever_plan> plan_levers(const report& baseline, const std::vector<std::string>& levers, bool automatic);

    // A lever that did not run, with its reason (not applicable, or over the budget).
    whatif_result unrun_lever(const lever_plan& plan, verdict unrun, const std::string& reason);

    // Judges a replay (samples with the lever) against the baseline samples interleaved with it:
    // compare's workload gate, clocks, band and rank test, then what the lever itself requires
    // (backward-off: no adjoint launch and no tape; keep-cache: a warm pass that compiles
    // nothing; mathdx-off: the steady-state launch time beside the build time).
    // compared, when given, receives the comparison the verdict rests on (left as it was when a
    // side had no successful sample: the verdict is invalid then).
    whatif_result judge_replay(const lever_plan& plan, const report& baseline, const report& replay,
                               comparison* compared = nullptr);

    // Why adding samples to this replay (and its baseline) cannot change its verdict: the lever
    // made it invalid, or compare's settled_because for the two sides; "" when more samples
    // could still change it.
    std::string replay_settled_because(const lever_plan& plan, const report& baseline, const report& replay,
                                       int max_samples);

    // Writes each replay's measurement into the findings that name its lever; an advisory whose
    // lever did not pay moves to the declined ledger with its numbers (never recommended).
    void apply_whatif(report& r);
}

#endif
