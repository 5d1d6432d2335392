// Budgets: the assertions a project puts in CI ("no module builds twice", "at most 12
// identities", "cold module work under 20 s"), checked against an analysed report.
//
// Grammar: LIMIT[,LIMIT...], LIMIT = METRIC<=NUMBER (a ceiling) or METRIC>=NUMBER (a floor),
// METRIC one of
//   identities          module identities the cold passes loaded
//   modules             modules (per device) the cold passes loaded
//   builds-per-module   compiled loads of one module (per device) in a cold pass, all processes
//   warm-builds         compiled loads in a warm pass (on the cache the cold pass filled): 0 when
//                       the kernel cache is reused
//   cold-module-ms      median cold module work (Warp's module timers)
//   cold-wall-ms        median cold wall time
//   compile-elapsed-ms  median cold wall - warm wall
//   backward-modules    modules (per device) a cold pass loaded with backward (adjoint) code, the
//                       most of any good sample: 0 is a forward-only build
//   build-overlap       median over the cold passes of summed build time / time with a build
//                       running: 1 is one build after another; needs the shim's build spans
// and one clause that is not a number:
//   workload=same       the run launched what the run it is compared with launched (compare's
//                       launch gate): judged only where a front has that run (%%warp_probe
//                       --compare RUN --expect ...), so that an answer cannot meet a limit by
//                       deleting work
#ifndef XWARP_ANALYSIS_BUDGET_HPP
#define XWARP_ANALYSIS_BUDGET_HPP

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "xwarp/model/budget.hpp"
#include "xwarp/model/comparison.hpp"
#include "xwarp/model/report.hpp"

namespace xwarp
{
    class budget_error : public std::invalid_argument
    {
    public:
        using std::invalid_argument::invalid_argument;
    };

    // Throws budget_error with the offending part in words.
    std::vector<budget_limit> parse_budget(const std::string& spec);

    // The metrics the grammar knows, for --help and errors.
    const std::vector<std::string>& budget_metrics();

    // One result per limit, in the order given. A limit whose value cannot be known (every
    // sample failed) counts as exceeded: a gate must not pass on a run that measured nothing.
    // `workload`: compare's judgement of r against the run it is compared with, for workload=same
    // (without one, that clause is not met and says why).
    std::vector<budget_result> check_budget(const report& r, const std::vector<budget_limit>& limits,
                                            const workload_check* workload = nullptr);

    // Whether the limits hold the workload=same clause (it needs a run to compare with).
    bool judges_workload(const std::vector<budget_limit>& limits);

    // Whether any limit was exceeded.
    bool budget_exceeded(const std::vector<budget_result>& results);
}

#endif
