// History analysis: what a report contributes to the store (its fingerprint, its summary row,
// its identity rows), the trend of a series of stored runs with its steps, and the module x
// machine table. Pure functions of model data; the store (history layer) feeds them.
#ifndef XWARP_ANALYSIS_TREND_HPP
#define XWARP_ANALYSIS_TREND_HPP

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "xwarp/model/history.hpp"
#include "xwarp/model/report.hpp"

namespace xwarp
{
    // The command as the history groups it: a notebook cell by its run name (the cell's
    // script lives in a new temporary folder each time), anything else by its words.
    std::string series_command(const report& r);

    fingerprint fingerprint_of(const report& r);

    // The store's row for an analysed report (id and stored_utc left for the store).
    history_run run_row_of(const report& r, run_kind kind);

    // One row per identity, with the source bytes of its first load when the shim saw them
    // (-1 when not), handed to `take` one at a time in the summary's order: the store inserts
    // each before the next is made.
    void for_each_identity_row(const report& r, const std::function<void(const history_identity&)>& take);

    // Fingerprint fields that differ from `before` to `after`, in words ("Warp 1.18.1 -> 1.19.0").
    // Machine and command are the series' own and are never listed.
    std::vector<std::string> fingerprint_changes(const fingerprint& before, const fingerprint& after);

    // Steps in a series of values, oldest first. A step at i: the value at i differs from the
    // level before it (the median of up to `window` values since the last step) by more than
    // the band, and the value after it (when there is one) is beyond the band on the same side
    // (it persisted). A change at the last value is reported unconfirmed for counts
    // ("identities"), and not at all for times (only the next run tells it from noise). The band
    // also widens to the largest one-run excursion seen at the current level. bands[i] is the noise
    // band to judge value i by (0 for counts: any change counts).
    inline constexpr int step_window = 5;
    inline constexpr double trend_floor_fraction = 0.05;  // cold ms band >= 5% of the value
    std::vector<trend_step> detect_steps(const std::vector<double>& values,
                                         const std::vector<double>& bands,
                                         series_measure measure);

    // The trend of one series: runs (oldest first) with their identity rows (same order).
    // Steps carry the run id, and what changed in the fingerprint there.
    history_trend build_trend(const std::vector<history_run>& runs,
                              const std::vector<std::vector<history_identity>>& rows);

    // The series' tests added to its trend: rows[i] the tests of runs[i] (run_store::tests).
    void add_test_trends(history_trend& t, const std::vector<std::vector<test_cost>>& rows);

    // b_tests: the tests of b as the store keeps them (empty: not a suite), which name who pays
    // for each identity new in b.
    history_diff build_history_diff(const history_run& a, const std::vector<history_identity>& a_rows,
                                    const history_run& b, const std::vector<history_identity>& b_rows,
                                    const std::vector<test_cost>& b_tests = {});

    // The latest run of one command per machine, module by module.
    machine_table build_machine_table(const std::string& command,
                                      const std::vector<history_run>& latest_per_machine,
                                      const std::vector<std::vector<history_identity>>& rows);
}

#endif
