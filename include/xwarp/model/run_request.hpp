// What a front asks the engine to run and how it hears back: the command and its settings
// (measure_options), progress (run_observer) and the question the engine polls to stop
// (cancel_check). Plain data and one interface, so that the fronts describe a run without
// seeing the runner that carries it out.
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

    // measure and %%warp_probe: how many samples, for how long, with which replays. The one
    // request of a probe, from the front's options to the job.
    struct probe_request
    {
        int samples = 3;
        bool until_settled = false;  // --samples auto: sample until the measurement settles, up to max_samples
        int max_samples = default_max_samples;
        double timeout_s = 0.0;      // 0: none
        std::optional<lever_choice> whatif;  // none: no replays
        double whatif_budget = 0.0;  // 0: the default
        bool nvrtc_trace = false;
        std::string keep_records;    // --keep-records DIR: every pass's raw records kept there ("" none)
    };

    // whatif REPORT and %warp_whatif RUN: the levers and how their replays are sampled. The one
    // request of a replay, from the front's options to the engine's loops.
    struct replay_request
    {
        lever_choice levers;              // none named: the levers of the findings
        int samples = 0;                  // a side; 0: the run's own
        double budget_s = 0.0;            // 0: the default
        double timeout_s = 0.0;           // per pass; 0: the run's own
        bool reuse_baseline = false;
        bool until_settled = false;
        int max_samples = default_max_samples;
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
