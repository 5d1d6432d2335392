// What the history store holds and what a trend over it says: plain data, filled by the
// history layer (store) and the analysis (trend, steps), drawn by the renderers.
#ifndef XWARP_MODEL_HISTORY_HPP
#define XWARP_MODEL_HISTORY_HPP

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "xwarp/model/verdicts.hpp"

namespace xwarp
{
    // The facts that make two runs comparable, or that explain why they differ. Runs of one
    // series share machine and command; the rest changing between runs is what a step names.
    struct fingerprint
    {
        std::string machine;     // host name
        std::string cpu;
        std::string gpu;         // device names, comma separated; empty on a CPU-only host
        std::string driver;
        std::string toolkit;
        std::string warp;
        std::string python;
        std::string probe;
        std::string command;     // the command as one line, or "notebook cell NAME"
        std::string label;
        std::string git_commit;  // of the measured project, when it is a git checkout
    };

    // What stored a run in the history: the front or job that made it. The store keeps the word
    // (a run of a newer xwarp's kind is listed with its word as stored).
    enum class run_kind
    {
        measure,
        whatif,
        fix,
        magic,
        compare,
        import,
    };

    template <>
    struct enum_words<run_kind>
    {
        static constexpr std::array<std::string_view, 6> words{"measure", "whatif", "fix", "magic", "compare", "import"};
    };

    // One stored run (a measure, a magic probe, a replay's baseline, an imported report).
    struct history_run
    {
        std::int64_t id = 0;
        std::string created_utc;  // when it was measured
        std::string stored_utc;   // when it entered the store
        std::string kind;         // a run_kind's word, as the store holds it
        fingerprint fp;
        std::string status;
        int samples = 0;
        std::optional<double> cold_module_ms;
        std::optional<double> cold_module_mad_ms;
        std::optional<double> cold_wall_ms;
        int identities = 0;
        int builds = 0;
        std::string whatif;  // "lever verdict, ..." when the run carried replays
    };

    // One identity of a stored run.
    struct history_identity
    {
        std::string module;
        std::string hash;
        std::string device;
        std::optional<int> block_dim;
        int builds = 0;
        double ms = 0.0;
        int kernels = -1;
        std::int64_t source_bytes = -1;
    };

    // A stored run's what-if replay: its saving on the clock it was judged on.
    struct history_replay
    {
        std::string lever;
        xwarp::verdict verdict = xwarp::verdict::not_run;
        std::optional<double> saving_ms;
        std::optional<xwarp::clock> clock;  // none for a row whose clock cannot be told
        int samples = 0;
    };

    // A stored comparison (warp-probe compare, %warp_compare).
    struct history_comparison
    {
        std::int64_t id = 0;
        std::int64_t before_run = 0;
        std::int64_t after_run = 0;
        std::string verdict;
        std::string stored_utc;
    };

    // What a series of the history counts: the identities built (a count, exact) or their cold
    // build time (a time, told from noise only by the runs after it).
    enum class series_measure
    {
        identities,
        cold_ms,
    };
    template <>
    struct enum_words<series_measure>
    {
        static constexpr std::array<std::string_view, 2> words{"identities", "cold ms"};
    };

    // A change that persisted: from run `at_run` on, the series stayed beyond the noise band
    // of the runs before it.
    struct trend_step
    {
        std::int64_t at_run = 0;
        int index = 0;                  // position in the series, 0-based
        series_measure measure = series_measure::cold_ms;
        double before = 0.0;            // level of the runs before
        double after = 0.0;             // level from the step on
        double band = 0.0;              // the noise band it was judged against (cold ms)
        bool confirmed = true;          // false when the step is the last run (not yet seen to persist)
        std::vector<std::string> changed;  // fingerprint fields that changed at the step: "Warp 1.18.1 -> 1.19.0"
        // What was built differently there: "new sim 4f0c2aa on cpu", "gone ..." (a module's or a
        // test's identities; empty when the store does not know)
        std::vector<std::string> built;
        // a time step where the same identities were built: the time moved, not what was built
        bool same_builds = false;
    };

    struct trend_point
    {
        std::int64_t run = 0;
        double cold_ms = 0.0;  // the module's identities' build ms (medians over samples), summed
        int identities = 0;
        int builds = 0;
    };

    // One module (on one device) over the runs of a series, oldest first.
    struct module_trend
    {
        std::string module;
        std::string device;
        std::vector<trend_point> points;
        std::vector<trend_step> steps;
    };

    // One test of a suite over the runs of a series, oldest first: the build time it paid in
    // each run (nullopt where the run did not list it: not run, or stored before per-test rows).
    struct test_trend
    {
        std::string test;
        std::vector<std::optional<double>> build_ms;
        std::vector<int> builds;
        std::vector<trend_step> steps;
    };

    // The runs of one series (same machine, same command) and its modules over them.
    struct history_trend
    {
        std::string machine;
        std::string command;
        std::vector<history_run> runs;  // oldest first
        std::vector<trend_point> total;  // every module together
        std::vector<trend_step> total_steps;
        std::vector<module_trend> modules;  // heaviest latest first
        std::vector<test_trend> tests;      // a suite's tests, costliest latest first
    };

    // Which stored runs a listing shows.
    struct history_filter
    {
        std::string label;     // exact
        std::string command;   // substring of the series command
        std::string machine;   // exact
        std::optional<run_kind> kind;  // none: every kind
        int limit = 50;        // newest first, at most this many (0: all)
    };

    // What a rendered report shows of the stored runs: the series its run belongs to, and where
    // the run stands in it.
    struct run_series
    {
        std::string store;          // the store's path
        std::int64_t this_run = 0;  // 0 when the report is not in the store
        history_trend trend;
    };

    // Two stored runs side by side: what changed in the fingerprint, and per module.
    struct history_diff
    {
        history_run a;
        history_run b;
        std::vector<std::string> changed;
        struct module_change
        {
            std::string module;
            std::string device;
            double a_ms = 0.0;
            double b_ms = 0.0;
            double delta_ms = 0.0;  // b - a
            int a_identities = 0;
            int b_identities = 0;
            std::vector<std::string> added;    // hashes (7 hex) only in b
            std::vector<std::string> removed;  // hashes only in a
            // per hash new in b: the tests of b that built it (a suite stored with its tests),
            // the tests a cache from a pays this identity in; "" is collection or set-up
            std::map<std::string, std::vector<std::string>> paid_by;
        };
        std::vector<module_change> modules;  // largest |delta| first; unchanged modules left out
        int unchanged = 0;                   // modules with the same hashes on both
    };

    // module x machine: the latest run of a command on each machine.
    struct machine_table
    {
        std::string command;
        std::vector<std::string> machines;
        std::vector<std::int64_t> runs;  // the run shown per machine
        struct row
        {
            std::string module;
            std::string device;
            std::vector<std::optional<double>> ms;  // per machine
            std::vector<int> identities;            // per machine (0: not loaded there)
        };
        std::vector<row> rows;
    };
}

#endif
