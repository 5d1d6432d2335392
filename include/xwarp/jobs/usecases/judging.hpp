// The use cases that judge runs already measured: analyse a report as this xwarp reads it,
// compare two (compare, %warp_compare, %%warp_probe --compare), check one against limits
// (check, measure --budget, %%warp_probe --expect). Each outcome carries its exit code, decided
// here (fronts/exit_codes.hpp) and nowhere in a front; a front parses, shows and exits with it.
// This header names the model's types only, so a front that includes it sees no analysis.
#ifndef XWARP_FRONTS_JUDGING_HPP
#define XWARP_FRONTS_JUDGING_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "xwarp/model/budget.hpp"
#include "xwarp/model/comparison.hpp"
#include "xwarp/model/report.hpp"

namespace xwarp::fronts
{
    // A report's findings, summary and timeline made again by this xwarp (a report read from a
    // file, a run so far for the provisional display).
    void analyse(report& r);

    // A failed pass in one line (why it failed: its exit, signal or timeout).
    std::string failure_words(const run_result& pass, std::optional<double> timeout_s);

    // ---- compare ---------------------------------------------------------------------------

    // Two runs compared: both analysed in place (a front renders them beside the verdict), the
    // verdict's exit code set. Throws job_error (bad_input) when a side has no good sample.
    comparison compare(report& before, report& after, const std::string& before_name, const std::string& after_name);

    // compare of two files, a side at a time (a large report is freed before the next is read):
    // the side analysed whole when it is to be stored, else its figures only, then checked
    // comparable. Throws job_error (bad_input) naming the side.
    void ready_side(report& side, const std::string& name, bool whole);
    // What compare reads of a ready side, the rest freed.
    void trim_side(report& side);
    // Two ready sides compared, the exit code set.
    comparison compare_ready(const report& before, const report& after, const std::string& before_name,
                             const std::string& after_name);

    // A comparison of two stored runs, kept in the history (never throws: a store that cannot
    // take it is a note).
    void store_comparison(const std::string& history_option, std::int64_t before_run, std::int64_t after_run,
                          const comparison& c, std::vector<std::string>& notes);

    // ---- check -----------------------------------------------------------------------------

    // The limits' metric names, for --help and errors.
    const std::vector<std::string>& limit_metrics();

    // A spec the job can judge: throws job_error (usage) for a malformed limit, or for
    // workload=, kernels= or results=same without a run to judge them against.
    void validate_limits(const std::string& spec, bool against_a_run);

    struct check_request
    {
        std::string spec;                   // LIMIT[,LIMIT...]
        const report* baseline = nullptr;   // workload/kernels/results=same: the run whose launches must stay
        std::string baseline_name;
        std::string run_name;
    };

    struct check_outcome
    {
        std::vector<budget_result> results;  // one per limit, in the order given
        bool met = true;
        std::string first_not_met;           // the first limit's message that was not met, or ""
        int exit_code = 0;                   // ok, or over_budget
    };

    // An analysed run judged against the limits. Throws job_error (usage) as validate_limits does.
    check_outcome check(const report& analysed, const check_request& request);
}

#endif
