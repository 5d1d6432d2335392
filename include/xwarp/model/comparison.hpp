// The result of comparing two reports: a verdict and every number behind it.
#ifndef XWARP_MODEL_COMPARISON_HPP
#define XWARP_MODEL_COMPARISON_HPP

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xwarp/model/report.hpp"

namespace xwarp
{
    inline constexpr int comparison_schema_version = 1;

    // One side of the comparison, as the reader needs to recognise it.
    struct compare_side
    {
        std::string path;
        std::string label;
        std::vector<std::string> command;
        std::string warp_version;
        std::vector<std::string> devices;  // devices the module loads and launches used
        int samples_ok = 0;
        int samples_total = 0;
        run_status status = run_status::ok;
    };

    // A launch position where the two workloads part ways.
    struct launch_divergence
    {
        std::int64_t index = 0;  // launch number (0-based) in the flattened sequence
        std::optional<launch_record> before;
        std::optional<launch_record> after;
    };

    struct kernel_rename
    {
        std::string before;
        std::string after;
    };

    struct count_change
    {
        std::string kernel;
        std::int64_t before = 0;
        std::int64_t after = 0;
    };

    struct workload_check
    {
        workload_status status = workload_status::unverified;
        std::string reason;
        std::int64_t before_launches = 0;
        std::int64_t after_launches = 0;
        std::vector<kernel_rename> renames;
        std::optional<launch_divergence> first_divergence;
        std::vector<count_change> moved_counts;
    };

    // One clock judged: module work, its CPU time, compile elapsed, the cold wall.
    struct clock_judgement
    {
        xwarp::clock clock = xwarp::clock::cold_module_work;
        std::optional<double> before_median;
        std::optional<double> after_median;
        std::optional<double> before_mad;
        std::optional<double> delta_ms;   // after - before
        std::optional<double> delta_pct;  // of before
        std::optional<double> band_ms;    // max(1% of before median, 2 x before MAD)
        std::optional<double> p_value;    // Mann-Whitney U, two-sided, when both sides have >= 5 samples
        std::string test;                 // "mann-whitney-exact", "mann-whitney-normal", "none (fewer than 5 samples a side)"
        int n_before = 0;
        int n_after = 0;
        clock_outcome outcome = clock_outcome::not_available;
        std::optional<int> samples_needed;  // per side, to settle an unsettled result
        // A wall clock: how much of the change the other processes' load could explain (the
        // after side's median load minus the before side's, on this clock); none on a CPU clock.
        std::optional<double> load_delta_ms;
        std::string note;  // how the values were taken, when it matters
    };

    // Its texts are the loads' own (shared): a report of 100,000 identities has a receipt per
    // module, and copies of their names and hashes were most of the comparison's allocations.
    struct hash_receipt
    {
        shared_text module;
        shared_text device;
        std::vector<shared_text> before;  // hashes in load order (first good sample, cold pass)
        std::vector<shared_text> after;
        bool changed = false;
    };

    struct structure_delta
    {
        std::string name;
        std::optional<double> before;
        std::optional<double> after;
        bool in_bytes = false;  // a size, shown as one; a count otherwise
    };

    // An option the user set in the after run whose module hash did not move.
    struct option_check
    {
        std::string option;
        std::string module;
        nlohmann::json intended;
        nlohmann::json module_value;
        std::optional<source_location> set_at;
        std::string message;
    };

    // A comparison but its hash receipts: what stays the same size however many modules the
    // program has (the text page copies this much to escape it, and prints the receipts, a
    // row per module, one at a time).
    struct comparison_outline
    {
        int schema_version = comparison_schema_version;
        std::string tool = "warp-probe compare";
        std::string created_utc;
        compare_side before;
        compare_side after;
        xwarp::verdict verdict = xwarp::verdict::inconclusive;  // improved, regressed, invalid, unverified, inconclusive, not-comparable
        int exit_code = 0;
        std::vector<std::string> reasons;  // why this verdict, most important first
        std::vector<std::string> notes;
        workload_check workload;
        std::vector<clock_judgement> clocks;
        xwarp::judged_on judged_on;  // which clock decided, and why
        // improved or regressed on fewer than 3 samples a side: two samples can fall either side of
        // the band by chance, so the verdict is said as indicative (the reasons say why)
        bool indicative = false;
        bool same_structure = false;  // identities, hashes and source bytes identical
        std::vector<structure_delta> structure;
        std::vector<option_check> option_checks;
        std::optional<settling> until_settled;
    };

    struct comparison : comparison_outline
    {
        std::vector<hash_receipt> receipts;  // one per (module, device) of either side
    };

    nlohmann::json comparison_to_json(const comparison& c);
    comparison comparison_from_json(const nlohmann::json& j);  // throws report_error
}

#endif
