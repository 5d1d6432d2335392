// What a front asks for and how it hears back: one request per job (probe, replay, fix,
// warm-up), each holding every field a front sets, with its default where the option is
// declared; the engine's own settings of a run (measure_options), which the jobs make from a
// request; progress (run_observer) and the question the engine polls to stop (cancel_check).
// Plain data and one interface, so that the fronts describe a run without seeing the runner.
#ifndef XWARP_MODEL_RUN_REQUEST_HPP
#define XWARP_MODEL_RUN_REQUEST_HPP

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "xwarp/model/report.hpp"

namespace xwarp
{
    // The most samples a side that --until-settled and --samples auto take unless told.
    inline constexpr int default_max_samples = 10;

    // True when the user asked to stop (an interrupt): the engine kills what runs and cleans up.
    using cancel_check = std::function<bool()>;

    // The engine's settings of one run, made by a job from its request (no front sets them).
    struct measure_options
    {
        std::vector<std::string> command;  // argv of the target
        std::string cwd;                   // empty: the current directory
        int samples = 3;
        std::optional<double> timeout_s;   // per pass
        std::string python;                // replaces a leading python/python3/pythonX.Y token
        std::string label;
        std::string shim_dir;              // directory holding the shim's sitecustomize.py
        std::map<std::string, std::string> extra_env;
        // copy each pass's raw shim records here (run.json + sample-N/PHASE/, a variant's under
        // variants/NAME/): what --replay-streams reads back
        std::string keep_records_dir;
        bool nvrtc_trace = false;          // turn Warp's compile_time_trace on and keep NVRTC's traces
        // A file the command writes an account of its own work to, as JSON (the warm-up file's
        // --results): read after each pass into run_result::own_results, then removed; kept as
        // results.json with --keep-records.
        std::string results_file;
    };

    // Which levers replays run: those of the findings present, and/or these by name (the
    // fronts read "auto", "LEVER[,LEVER...]" or both into it).
    struct lever_choice
    {
        bool automatic = false;
        std::vector<std::string> levers;
    };

    // The one request of a replay, from the front's options to the engine's loops: whatif REPORT
    // and %warp_whatif RUN read it from their options, and a probe with --whatif makes it from its
    // own (probe_request::replays).
    struct replay_request
    {
        lever_choice levers;    // a saved run's replay with none named: the levers of its findings
        int samples = 0;        // a side; 0: the run's own (a probe's: its --samples)
        double budget_s = 0.0;  // replay time allowed; 0: the default (6 x one cold run)
        double timeout_s = 0.0; // per pass; 0: the run's own
        // a saved run's replay only: judge the replays against its own samples instead of fresh
        // baseline samples (half the runs, for a lesson or a quick look; the machine may have
        // changed since the run was measured, which fresh interleaved samples would see)
        bool reuse_baseline = false;
        // after the planned samples, add a baseline sample and one of each lever whose verdict is
        // not yet settled (compare --until-settled's rule), round by round, until every lever
        // settled, reached max_samples a side, or the budget ran out. Not with reuse_baseline:
        // the saved samples cannot grow.
        bool until_settled = false;
        int max_samples = default_max_samples;
    };

    // measure and %%warp_probe: how many samples, for how long, with which replays. The one
    // request of a probe, from the front's options to the job.
    struct probe_request
    {
        // What runs: a command, or a notebook cell (after the session's setup code) written to a
        // private temporary script and run with the notebook's Python.
        std::vector<std::string> command;
        std::optional<std::string> cell_code;
        std::string setup_code;
        std::string cwd;      // "" the current directory
        std::string python;   // replaces a leading python/python3/pythonX.Y token of the command
        std::string label;    // the run's name in reports and compare
        std::string machine;  // the host name the report and the history group the run under ("" this host's)

        int samples = 3;
        bool until_settled = false;  // --samples auto: sample until the measurement settles, up to max_samples
        int max_samples = default_max_samples;
        double timeout_s = 0.0;      // 0: none
        std::optional<lever_choice> whatif;  // none: no replays
        double whatif_budget = 0.0;  // 0: the default
        bool nvrtc_trace = false;
        std::string keep_records;    // --keep-records DIR: every pass's raw records kept there ("" none)

        // The replays --whatif asks for, sampled as the probe is.
        replay_request replays() const
        {
            replay_request r;
            r.levers = whatif.value_or(lever_choice{});
            r.samples = samples;
            r.budget_s = whatif_budget;
            r.until_settled = until_settled;
            r.max_samples = max_samples;
            return r;
        }
    };

    // fix and %warp_fix: which findings, where the patches go, and how they are proved. The one
    // request of a fix, from the front's options to the engine.
    struct fix_request
    {
        std::string finding;   // a finding's position ("2") or mechanism ("CS-9"); "" all
        std::string lever;     // only the findings of this lever; "" all
        std::string out_dir;   // where DIR/<id>.patch go; "" writes none
        bool verify = false;   // measure each patch on a copy of the project
        bool all = false;      // then the verified patches together, in ranked order
        bool apply = false;    // then apply the verified patches to the program's files
        int samples = 2;       // a side, when verifying
        double timeout_s = 0;  // per pass when verifying; 0: the run's own
        std::string keep_records;  // --keep-records DIR: the passes' raw records kept there ("" none)
    };

    // warmup and %warp_warmup: the file, how it builds, and its proof. The one request of a
    // warm-up, from the front's options through the plan to the file.
    struct warmup_request
    {
        std::string out;        // the file to write; "" writes none
        int workers = 0;        // 0: the measured machine's CPU count, at most 16
        std::string device;     // replaces each CUDA device ("cuda:1"); "" keeps the measured ones
        std::vector<int> arch;  // CUDA architectures to build ahead of time as well (compile_aot_module)
        bool verify = false;
        int samples = 2;        // when verifying
        double timeout_s = 0;   // per pass when verifying; 0: the run's own
        std::string keep_records;  // --keep-records DIR: the passes' raw records kept there ("" none)
    };

    // Progress callbacks; all are called from the thread that started the run.
    class run_observer
    {
    public:
        virtual ~run_observer() = default;
        virtual void pass_started(int /*sample*/, int /*samples*/, const std::string& /*phase*/) {}
        virtual void pass_running(int /*sample*/, int /*samples*/, const std::string& /*phase*/, double /*elapsed_ms*/) {}
        virtual void pass_finished(int /*sample*/, int /*samples*/, const std::string& /*phase*/, const run_result& /*pass*/) {}
        // After each baseline sample, the report so far (not analysed): fronts show provisional
        // findings from it while the other samples run.
        virtual void sample_finished(int /*sample*/, int /*samples*/, const report& /*so_far*/) {}
    };
}

#endif
