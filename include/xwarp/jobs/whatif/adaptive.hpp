// Adaptive sampling. --samples auto: samples until the measurement settles (analysis/summarize.hpp
// says when), at least two and at most max_samples; the report says why it stopped.
// compare --until-settled: adds samples to both sides of a comparison, interleaved, until the
// verdict is settled (analysis/compare.hpp says when) or each side has max_samples.
#ifndef XWARP_WHATIF_ADAPTIVE_HPP
#define XWARP_WHATIF_ADAPTIVE_HPP

#include <string>

#include "xwarp/model/comparison.hpp"
#include "xwarp/model/report.hpp"
#include "xwarp/engine/runner/runner.hpp"
#include "xwarp/engine/runner/sampler.hpp"

namespace xwarp
{

    report measure_until_settled(const measure_options& options,
                                 int max_samples,
                                 run_observer* observer,
                                 const cancel_check& cancelled,
                                 const sampler_factory& make_sampler = command_samplers());
    // The loop itself, on any sampler (the unit tests script one from recorded samples).
    report measure_until_settled(sampler& source, int max_samples, run_observer* observer, const cancel_check& cancelled);

    // Re-runs each side's own command (before_options, after_options: its argv, cwd, python and
    // timeout) one sample at a time, before then after, appending to the reports, which are
    // analysed in place. Throws compare_input_error like compare_reports, probe_error when a
    // command cannot be prepared. The comparison's until_settled says what was added and why it
    // stopped.
    comparison compare_until_settled(report& before,
                                     report& after,
                                     const measure_options& before_options,
                                     const measure_options& after_options,
                                     int max_samples,
                                     const std::string& before_name,
                                     const std::string& after_name,
                                     run_observer* observer,
                                     const cancel_check& cancelled,
                                     const sampler_factory& make_sampler = command_samplers());

    // The loop itself, on any two samplers.
    comparison compare_until_settled(report& before, report& after, sampler& before_source, sampler& after_source,
                                     int max_samples, const std::string& before_name, const std::string& after_name,
                                     run_observer* observer, const cancel_check& cancelled);

    // How a saved report was measured: its command words, folder, samples, python, label,
    // timeout and --nvrtc-trace (the caller sets shim_dir, and for a notebook cell the command).
    measure_options rerun_settings(const report& saved);

}

#endif
