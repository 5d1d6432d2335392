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
//   launch-builds       compiled loads in a cold pass that a launch waited for (not a preload's),
//                       the most of any good sample: 0 when a preload built every module
// and clauses that are not numbers. Three are judged against the run a front compares with
// (%%warp_probe --compare RUN --expect ...), so that an answer cannot meet a limit by deleting
// work, swapping it for other work, or computing something else:
//   workload=same       the run launched what RUN launched: the same dims, devices, dtypes,
//                       block_dims and adjoint flags in the same order (compare's launch gate,
//                       which lets a kernel be renamed)
//   kernels=same        and the same kernels: workload=same with no kernel renamed
//   results=same        the Warp arrays the cell leaves in its namespace hold what RUN's held
//                       (count, sum, sum of magnitudes, least and largest finite value, to a
//                       relative 1e-4; recorded by the shim for notebook cells)
// and one judged on the run alone:
//   option:MODULE.KEY=VALUE  the module's last cold load carried the option at that value (true,
//                       false, a number or a word), from the options the shim records
//   option:@KERNEL.KEY=VALUE the same for the module that held the kernel (a module="unique"
//                       kernel's, whose module is named by a hash)
#ifndef XWARP_ANALYSIS_BUDGET_CHECK_HPP
#define XWARP_ANALYSIS_BUDGET_CHECK_HPP

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

    // What the clauses judged against another run need: compare's judgement of the launches, and
    // that run's report (for results=same). Without them those clauses are not met and say why.
    struct compared_run
    {
        const workload_check* workload = nullptr;
        const report* baseline = nullptr;
    };

    // One result per limit, in the order given. A limit whose value cannot be known (every
    // sample failed) counts as exceeded: a gate must not pass on a run that measured nothing.
    std::vector<budget_result> check_budget(const report& r, const std::vector<budget_limit>& limits,
                                            const compared_run& against = {});

    // Whether the limits hold a clause judged against another run (workload, kernels, results).
    bool needs_compared_run(const std::vector<budget_limit>& limits);

    // Whether any limit was exceeded.
    bool budget_exceeded(const std::vector<budget_result>& results);
}

#endif
