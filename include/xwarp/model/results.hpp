// What analysis makes of the records: the summary (statistics, identities, rebuilt modules,
// the build timeline, flags), the findings, the what-if replays' results and the levers
// considered and declined. Renderers read these and compute nothing more.
#ifndef XWARP_MODEL_RESULTS_HPP
#define XWARP_MODEL_RESULTS_HPP

#include <map>

#include "xwarp/model/ownership.hpp"
#include "xwarp/model/records.hpp"
#include "xwarp/model/verdicts.hpp"

namespace xwarp
{
    // Which clock decided a verdict, and why that one.
    struct judged_on
    {
        xwarp::clock by = xwarp::clock::cold_module_work;
        std::string why;

        std::string sentence() const { return why.empty() ? clock_name(by) : clock_name(by) + ": " + why; }
    };

    struct stat
    {
        std::optional<double> median;
        std::optional<double> mad;  // median absolute deviation, unscaled
        std::vector<double> values;  // one per good sample
    };

    // A distinct (module, hash, device, block_dim) seen in the cold passes.
    struct identity
    {
        shared_text module;  // its first load's (shared)
        shared_text hash;
        shared_text device;
        std::optional<int> block_dim;
        double ms = 0.0;       // median over the samples that built it
        int builds = 0;        // compiled loads in the first good sample
        int samples_seen = 0;  // good samples whose cold pass loaded it
        load_status status = load_status::unknown;  // of its first load
        int kernels = -1;      // unique kernels in its snapshot, -1 unknown
        // Why its first load failed (status error): Warp's first line of the error, and the test
        // it failed in when a suite ran, so that a build a test expects to fail reads as one.
        std::string failure;
    };

    // A module (per device) that loaded under more than one identity in one cold pass.
    struct rebuild_group
    {
        shared_text module;
        shared_text device;
        rebuild_kind kind = rebuild_kind::hash_churn;
        std::vector<shared_text> hashes;  // in load order, its identities' (shared)
        std::vector<int> block_dims;
        int builds = 0;
        double ms = 0.0;
        bool kernel_sets_known = true;  // false when the loads came from log lines
        // hash-churn: why each hash gave way to the next, in words (hashes.size() - 1 entries,
        // "" where it cannot be told): "kernel second added", "option mode: 'release' -> 'debug'".
        std::vector<std::string> moves;
    };

    // Per (module, device): how many identities it loaded and what they cost, heaviest first
    // (reports summarise the modules beyond their first rows with these).
    struct module_total
    {
        shared_text module;
        shared_text device;
        int identities = 0;
        int builds = 0;
        double ms = 0.0;
    };

    // Launches per kernel in the first good sample's cold pass (for reading, not for compare).
    struct launch_kernel_count
    {
        std::string kernel;
        shared_text module;  // its launches' (shared)
        shared_text device;
        std::int64_t count = 0;
        std::vector<int> block_dims;
        bool adjoint = false;
    };

    // When each build ran in one pass, for the timeline and the Chrome trace: one span per
    // load and per phase inside it, in ms since the pass's first process started.
    //
    // The texts every span of a pass repeats (its thread, device, status, the launch that waited,
    // NVRTC's phase names) are shared_text: a span is one per load and phase, 100,000 and more in
    // a large report, and these texts were most of its bytes.
    struct timeline_span
    {
        std::int64_t pid = 0;
        shared_text thread;
        span_kind kind = span_kind::load;
        shared_text module;  // its load's (shared)
        shared_text hash;
        shared_text device;
        std::optional<int> block_dim;
        load_status status = load_status::unknown;  // of the load
        shared_text triggered_by;  // the launch that waited for the load
        shared_text detail;        // nvrtc: NVRTC's name for the phase, and its detail
        double start_ms = 0.0;
        double ms = 0.0;
    };

    struct build_timeline
    {
        int sample = 0;            // the sample drawn: the one whose cold wall is the median
        std::string pass = "cold";
        double wall_ms = 0.0;
        std::vector<std::string> lanes;  // "pid N / thread", in order of first build
        std::vector<timeline_span> spans;
    };

    // What a summary's flag warns of: a condition that weakens what the run shows.
    enum class flag_id
    {
        all_samples_failed,
        cache_not_reused,
        builds_overlapped,
        no_warp_process,
        no_launches,
        compile_small_share,
        link_dominated,
        samples_disagree,
    };
    template <>
    struct enum_words<flag_id>
    {
        static constexpr std::array<std::string_view, 8> words{"ALL_SAMPLES_FAILED", "CACHE_NOT_REUSED", "BUILDS_OVERLAPPED", "NO_WARP_PROCESS", "NO_LAUNCHES", "COMPILE_SMALL_SHARE", "LINK_DOMINATED", "SAMPLES_DISAGREE"};
    };
    inline void to_json(nlohmann::json& j, flag_id value)
    {
        j = word_of(value);
    }
    inline void from_json(const nlohmann::json& j, flag_id& value)
    {
        value = parse_member<flag_id>(j.get_ref<const std::string&>());
    }

    struct flag
    {
        flag_id id = flag_id::samples_disagree;
        std::string message;
    };

    // A test of a suite and the builds it paid: the loads the shim attributed to the test that
    // was running (pytest's node id, a unittest id), in the first good sample's cold pass.
    // An identity a test built, and its build's module work.
    struct built_identity
    {
        shared_text module;
        std::string hash;  // full
        shared_text device;
        std::optional<int> block_dim;
        double ms = 0.0;
        int reused_by = 0;  // later tests of its process that launched the module while this build was current

        // "module hash7 on device [block_dim N] (ms)", as the renderers print it
        std::string words() const;
    };

    struct test_cost
    {
        std::string test;            // "" for collection and set-up outside any test
        int builds = 0;              // identities it compiled
        double build_ms = 0.0;       // their module work
        std::vector<built_identity> identities;  // in load order
        bool identities_known = true;  // false for a test a store kept before it kept what tests built
        bool failed = false;         // the runner said it failed (the pass's failed_tests)
        std::vector<std::int64_t> pids;       // the processes it ran in (xdist workers, subprocesses)
        // Paid by the first: the later tests of the same process that launched a module this one
        // built, while that build was its current identity (the shim's test_use records)
        int reused_by = 0;
        std::vector<std::string> reusers;  // every one of them, in order (the renderers show the first few)
    };

    // One process of a suite's cold pass: its wall and the part its builds took.
    struct worker_share
    {
        std::int64_t pid = 0;
        std::optional<double> wall_ms;  // from its shim's start to its exit record
        double build_ms = 0.0;          // module work of the identities it compiled
        int builds = 0;
        int tests = 0;                  // distinct tests that loaded a module in it
    };

    struct summary
    {
        bool valid = false;  // false when no sample succeeded: no statistic is meaningful
        int samples_total = 0;
        int samples_ok = 0;
        stat cold_wall_ms;
        stat warm_wall_ms;
        stat compile_elapsed_ms;  // cold wall - warm wall, per sample
        stat cold_module_ms;
        stat warm_module_ms;
        // The loading threads' CPU time summed over the pass's loads: build work on a clock the
        // machine's load moves less than a wall, though not never (shared cores, their caches and
        // clock speed): cpu_under_load says how far it moved in this run. Empty unless every good
        // pass recorded it for every load.
        stat cold_module_cpu_ms;
        stat warm_module_cpu_ms;
        // The clock the findings' estimates are on: cold module CPU where it was recorded.
        xwarp::clock module_clock = xwarp::clock::cold_module_work;
        // How many CPUs the machine's other processes kept busy, on average, during each good
        // sample's cold pass (its load); empty where the load was not measured.
        stat busy_cpus;
        // How far the cold module CPU moved across the good samples ((most - least) / median, in
        // percent) and the least and most CPUs other processes kept busy meanwhile: what load did
        // to that clock in this run, measured, never assumed. Absent on fewer than 2 samples.
        struct clock_under_load
        {
            double moved_pct = 0.0;
            double busy_least = 0.0;
            double busy_most = 0.0;
            int samples = 0;
        };
        std::optional<clock_under_load> cpu_under_load;
        stat native_ms;
        stat overlap_factor;        // summed build time / time with a build running (build spans)
        std::string overlap_note;   // why the overlap factor is not available, when it is not
        stat identity_count;
        stat source_bytes;
        stat lto_artifacts;
        stat cache_binaries;  // binaries the cold pass wrote into its (empty) kernel cache
        stat cache_bytes;     // and the cache's size after it: sources, binaries, LTO artifacts
        stat launch_count;
        stat compile_share;  // compile elapsed / cold wall
        std::vector<identity> identities;
        bool identities_consistent = true;
        std::vector<int> identities_per_sample;
        std::vector<rebuild_group> rebuilt;
        std::vector<module_total> modules;
        std::vector<launch_kernel_count> launch_kernels;
        std::vector<test_cost> tests;        // a test suite's: by build time paid; empty for other programs
        std::vector<worker_share> workers;   // a test suite's processes that built anything
        std::vector<flag> flags;
        build_timeline timeline;
        figure_source load_source = figure_source::unrecorded;       // hook, log, mixed, none
        figure_source module_ms_source = figure_source::unrecorded;  // warp-timer, wrapper, log, mixed
        figure_source native_ms_source = figure_source::unrecorded;  // hook, log, mixed, none
        std::vector<std::string> warnings;
    };

    // A diagnosed mechanism (filled by analysis/diagnose).
    struct source_location
    {
        std::string file;
        int line = 0;
    };

    // One of the places that caused a finding, with what happened there.
    struct cause_location
    {
        std::string file;
        int line = 0;
        std::string what;
    };

    // What a finding's lever measured when its what-if replay ran: the replay's verdict and the
    // saving on the clock it was judged on.
    struct replay_measurement
    {
        std::string lever;
        xwarp::verdict verdict = xwarp::verdict::not_run;
        std::optional<double> saving_ms;   // on `clock`: baseline - replay medians (positive: it saved)
        std::optional<xwarp::clock> clock;  // the clock the saving is on (none: nothing quoted)
        // Beside a saving on a CPU clock (summed over threads and processes), the same replay's
        // saving on the wall the job waited for (compile elapsed; the suite's cold wall when that
        // was judged): each figure names its clock, and CPU is not read as time waited.
        std::optional<double> wall_saving_ms;
        std::optional<xwarp::clock> wall_clock;
        std::optional<double> band_ms;
        int samples = 0;
        std::string judged_on;  // the sentence: which clock decided and why
        std::string reason;
        std::string needs;      // what else the fix needs, when the replay's records show it
        // One replay measures every finding of its lever at once: the findings it measured (their
        // numbers in the report's order) when there are several, and whether this one shows the
        // number (the first of them); the others point at it, so that no reader adds it twice.
        std::vector<int> together;
        bool shows_number = true;

        // Improved or regressed on fewer than 3 samples a side: said beside the verdict.
        bool indicative() const
        {
            return (verdict == xwarp::verdict::improved || verdict == xwarp::verdict::regressed) && samples > 0 && samples < 3;
        }
    };

    struct finding
    {
        shared_text mechanism;  // CS-1..CS-13, option-not-arrived, ...
        shared_text title;
        shared_text module;  // a churning module's is its loads' (shared); a list of modules for some
        shared_text device;
        std::string evidence;
        json_text cause;  // an object: what the detector saw, for readers of the JSON
        std::optional<source_location> location;  // the primary place (the first of locations)
        std::vector<cause_location> locations;     // every place that caused it
        shared_text recommendation;
        std::optional<double> savings_ms;
        finding_kind kind = finding_kind::diagnosis;
        shared_text guide;               // references/mechanisms.md anchor
        shared_text lever;               // the run-time lever that would fix it ("" when none)
        std::optional<replay_measurement> measured;  // its lever's what-if replay, when one ran
        // The clock savings_ms is on: the loading threads' CPU time where every load of the
        // report recorded it (load does not move it), else Warp's module timers.
        xwarp::clock savings_clock = xwarp::clock::cold_module_work;
        // Whose code the place that caused it is (the report's ownership table; the path rules
        // alone for a report written before it had one).
        std::optional<file_owner> owner;
        // That place is library code (an installed distribution, the standard library or Warp):
        // not the user's to edit, and never patched by warp-probe fix.
        bool library = false;
        // In a test suite: the tests during which its modules were built (the first good
        // sample's cold pass), "collection / set-up" outside any test.
        std::vector<std::string> tests;

        // What a finding's headline rests on, decided here once for every renderer: the
        // replay's measured gain once its lever was measured and paid; no saving at all when the
        // replay regressed, was inconclusive or invalid (the estimate is then shown only as
        // the estimate, never as "saves"); the estimate when nothing was measured.
        enum class headline_source
        {
            none,
            estimate,
            measured_gain,
            measured_no_gain,
        };
        headline_source headline() const
        {
            if (measured)
            {
                const auto v = measured->verdict;
                if (v == xwarp::verdict::improved)
                {
                    return headline_source::measured_gain;
                }
                if (v == xwarp::verdict::regressed || v == xwarp::verdict::inconclusive || v == xwarp::verdict::invalid)
                {
                    return headline_source::measured_no_gain;
                }
            }
            return savings_ms ? headline_source::estimate : headline_source::none;
        }

        // Why an estimate stands as the headline, unmeasured: its lever's replay did not apply
        // or did not run, no replay was asked for, or no lever replays it. "" when the headline
        // is not an estimate.
        std::string estimate_why() const
        {
            if (headline() != headline_source::estimate)
            {
                return {};
            }
            const auto v = measured ? std::optional<xwarp::verdict>(measured->verdict) : std::nullopt;
            if (v == xwarp::verdict::not_applied)
            {
                return "its replay did not apply";
            }
            if (v == xwarp::verdict::not_run)
            {
                return "not replayed";
            }
            if (v == xwarp::verdict::unverified || v == xwarp::verdict::not_comparable)
            {
                return "its replay could not be judged";
            }
            return lever.empty() ? "no lever replays it" : "not replayed: --whatif measures it";
        }
    };

    // Samples added until a verdict settled (compare --until-settled, what-if replays with
    // --until-settled / --samples auto), and why adding stopped.
    struct settling
    {
        int added_before = 0;
        int added_after = 0;
        int max_samples = 0;
        bool settled = false;          // false: it stopped at max_samples (or was interrupted)
        std::string stopped_because;
        bool interrupted = false;      // the user stopped it before it settled
    };

    // One what-if replay: the unmodified command run with a lever applied by the shim, its
    // samples interleaved with baseline samples and judged as compare judges two reports.
    struct whatif_result
    {
        std::string lever;
        std::string mechanism;             // the finding it measures (the first, when several)
        std::vector<std::string> mechanisms;  // every finding that names this lever
        std::vector<std::string> modules;
        nlohmann::json params = nlohmann::json::object();   // what the shim was asked to do
        nlohmann::json applied = nlohmann::json::object();  // what it did, with counts
        xwarp::verdict verdict = xwarp::verdict::not_run;
        // baseline - replay medians on each clock judged (positive: it saved)
        std::map<xwarp::clock, double> savings;
        std::optional<double> band_ms;   // the noise band of the clock it was judged on
        xwarp::judged_on judged_on;      // that clock, and why
        int samples = 0;                 // replay samples (as many baseline samples, interleaved)
        std::optional<double> estimate_ms;  // the findings' estimate, kept for calibration
        // Builds the baseline's and the replay's first good samples made, cold and warm: the
        // counted part of the replay, which the time verdict's noise cannot move.
        std::optional<int> cold_builds_baseline, cold_builds_replay, warm_builds_baseline, warm_builds_replay;
        // Those counts in words, the same in the text and the HTML; "" when the replay counted none.
        std::string counted_builds_words() const
        {
            if (!cold_builds_baseline || !cold_builds_replay)
            {
                return {};
            }
            std::string words = "counted: the cold pass built " + std::to_string(*cold_builds_baseline) + " -> "
                                + std::to_string(*cold_builds_replay);
            if (warm_builds_baseline && warm_builds_replay)
            {
                words += ", the warm pass " + std::to_string(*warm_builds_baseline) + " -> " + std::to_string(*warm_builds_replay);
            }
            return words + " (baseline -> replay, first good sample)";
        }
        // The conditions its samples ran in, beside the baseline's (interleaved, so alike unless
        // something else ran between them): the median CPUs other processes kept busy during the
        // cold passes, and the caches the replay's cold passes started from that were not empty
        // (the lever's own kept cache among them). None when a side recorded no load.
        std::optional<double> busy_cpus_baseline;
        std::optional<double> busy_cpus_replay;
        std::vector<std::string> caches_not_empty_at_start;
        // Those conditions in words, the same in the text and the HTML; "" when none were recorded.
        std::string conditions_words() const;
        std::string reason;
        nlohmann::json steady_state = nlohmann::json::object();  // mathdx-off: kernel -> {baseline_ms, replay_ms}
        std::optional<settling> until_settled;  // added_before: baseline samples (shared by the levers)
        // What else the fix needs, when the replay's own records show it (a shared module that
        // rebuilt as its kernels were created between launches); "" otherwise.
        std::string needs;

        // The saving a replay is quoted with: the one on the clock it was judged on. Decided
        // here once, for the findings, the text and the HTML alike.
        std::optional<double> saving_on(xwarp::clock c) const
        {
            const auto it = savings.find(c);
            return it == savings.end() ? std::nullopt : std::optional<double>(it->second);
        }
        std::optional<double> quoted_saving() const { return saving_on(judged_on.by); }
    };

    // One finding's code form, written as a patch against the program's own files by warp-probe
    // fix, and, with --verify, measured on a copy of the project against the unpatched program.
    struct fix_result
    {
        std::string finding;     // the finding's mechanism and position ("CS-1 #2")
        std::string mechanism;
        std::string lever;       // the lever whose code form it is, or the form's name (hoist)
        std::string module;
        std::vector<std::string> files;  // relative to the project root
        std::string patch;       // a unified diff (git apply, patch -p1); "" when there is none
        std::string patch_file;  // where it was written
        // verified (improved beyond the band, or fewer builds counted; same launches), no-gain (inside the band or not
        // significant), regressed, invalid (the program failed or its launches changed),
        // not-verified (no --verify), no-patch (no mechanical form, or library code: reason says)
        fix_verdict verdict = fix_verdict::no_patch;
        std::optional<double> saving_ms;  // on the clock compare decided on
        std::optional<xwarp::clock> clock;  // that clock; none when nothing was measured
        std::optional<double> band_ms;
        int samples = 0;                  // a side
        std::string reason;
        std::vector<std::string> notes;
        together_status together_step = together_status::not_measured_together;  // --all: decides --apply
        std::string together;  // --all: how it did with the verified patches before it applied, in words
        bool applied = false;  // --apply wrote it into the program's files
        // What the patch did, counted rather than timed (noise cannot move these): the modules
        // the cold pass built (compiled loads) unpatched and patched (first good sample of each), and
        // whether the finding it fixes is gone from the patched run.
        std::optional<int> cold_builds_before;
        std::optional<int> cold_builds_after;
        std::optional<int> warm_builds_before;  // the same in the warm pass (on the cache the cold one filled)
        std::optional<int> warm_builds_after;
        std::optional<bool> finding_gone;
        // what a verified verdict rests on: "time" (the clock beyond its band) or "builds" (fewer
        // builds for the same launches, counted); "" when not verified
        std::string verified_by;
    };

    // A lever the analysis considered for what it saw and rejected, with the numbers that
    // decided it: shown so that a missing recommendation is never a silent one.
    struct declined_lever
    {
        std::string mechanism;
        std::string lever;
        std::string module;
        std::string device;
        std::string reason;
        nlohmann::json numbers = nlohmann::json::object();
        std::string recommendation;  // what it would have said: used if a what-if replay measures a gain
    };
}

#endif
