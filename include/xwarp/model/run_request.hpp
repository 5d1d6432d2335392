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
