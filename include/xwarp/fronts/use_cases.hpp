// The use cases both fronts offer, each decided here once: the CLI and the magics parse their
// options, call one of these and show what it returns. A front never calls the runner itself.
#ifndef XWARP_FRONTS_USE_CASES_HPP
#define XWARP_FRONTS_USE_CASES_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "xwarp/fix/fix.hpp"
#include "xwarp/fronts/probe_options.hpp"
#include "xwarp/history/store.hpp"
#include "xwarp/model/comparison.hpp"
#include "xwarp/model/report.hpp"
#include "xwarp/runner/runner.hpp"
#include "xwarp/warmup/warmup.hpp"

namespace xwarp::fronts
{
    // measure, %%warp_probe, %warp_probe: the command measured as the request says (fixed
    // samples, until the measurement settles, or with what-if replays), analysed. Throws
    // probe_error and unknown_lever before anything runs.
    report probe(measure_options options, const probe_request& request, run_observer* observer,
                 const cancel_check& cancelled);

    // whatif, %warp_whatif: the levers replayed on a run's command (options: how to re-run it,
    // made by rerun_settings and adjusted by the front), analysed with whatif[] filled.
    report replay(const report& saved, measure_options options, const replay_request& request, run_observer* observer,
                  const cancel_check& cancelled);

    // fix, %warp_fix: each finding's code form as a patch, verified on a copy of the project with
    // verify (options: how to re-run the command, as for replay). Throws fix_error.
    report fix(const report& saved, const measure_options& options, const fix_request& request, run_observer* observer,
               const cancel_check& cancelled);

    // warmup, %warp_warmup: the warm-up file of a run (every identity it built that an import
    // can reach), written where the job says, and with verify measured on fresh caches
    // (options: how to re-run the command, as for replay). Throws warmup_error.
    warmup_plan warm_up(const report& saved, const measure_options& options, const warmup_job& job,
                        run_observer* observer, const cancel_check& cancelled);

    // How a saved report was measured (its command, folder, samples, Python, timeout), to run it
    // again; the front sets the shim and, for a notebook cell, the command.
    measure_options rerun_settings(const report& saved);
    // The same, refusing a report that holds no command to re-run (a notebook cell's, or none).
    measure_options rerun_options(const report& saved, const std::string& which);

    // compare --until-settled, %warp_compare --until-settled: samples added to both sides,
    // before then after, until the verdict is settled or each side has max_samples.
    comparison compare_until_settled(report& before, report& after, const measure_options& before_options,
                                     const measure_options& after_options, int max_samples,
                                     const std::string& before_name, const std::string& after_name,
                                     run_observer* observer, const cancel_check& cancelled);

    // history list, %warp_history: the stored runs that pass the filter, newest first, and the
    // store's path. nullopt when there is no store to read (off, or not made yet: `why` says).
    struct stored_runs
    {
        std::string path;
        std::vector<history_run> runs;
    };
    std::optional<stored_runs> history_runs(const std::string& history_option, const history_filter& filter,
                                            std::string& why, std::vector<std::string>& notes);
}

#endif
