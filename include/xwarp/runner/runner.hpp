// The probe engine: runs a command in fresh subprocesses, each sample with private Warp and
// CUDA caches, cold then warm against the cache the cold pass filled, and returns the
// measured report (samples and environment; analysis fills the rest).
#ifndef XWARP_RUNNER_RUNNER_HPP
#define XWARP_RUNNER_RUNNER_HPP

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "xwarp/model/report.hpp"
#include "xwarp/os/process.hpp"

namespace xwarp
{
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
        std::string keep_records_dir;      // copy each pass's raw shim records here (run.json + sample-N/PHASE/)
        bool nvrtc_trace = false;          // turn Warp's compile_time_trace on and keep NVRTC's traces
    };

    // Problems with the request itself, found before anything runs.
    class probe_error : public std::runtime_error
    {
    public:
        enum class kind
        {
            usage,
            command_not_found,
            not_executable,
            cwd_missing,
            shim_missing,
            io
        };
        probe_error(kind k, const std::string& msg) : std::runtime_error(msg), m_kind(k) {}
        kind which() const noexcept { return m_kind; }

    private:
        kind m_kind;
    };

    // Progress callbacks; all are called from the thread that called measure().
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

    // Throws probe_error before running anything when the request is unusable. Otherwise
    // returns a report whose status says what happened: ok, partial, failed or interrupted.
    // It is prepare_command, run_sample per sample, then make_report.
    report measure(const measure_options& options, run_observer* observer, const cancel_check& cancelled);

    // Leaving its scope, by return or by exception, waits until the host-facts query that
    // prepare_command starts in the background has finished (at once when a pass already read
    // them): cudart tears itself down at exit, and a thread still inside the driver's start
    // then crashes the process.
    struct host_facts_wait
    {
        ~host_facts_wait();
    };

    // A command checked and resolved, ready to run samples (the what-if replays interleave
    // samples of several variants of one command).
    struct prepared_command
    {
        measure_options options;
        std::string exe;
        std::vector<std::string> argv;  // argv[0] as given (or replaced by options.python)
        std::map<std::string, std::string> base_env;
        std::string cwd;
        std::vector<std::string> notes;  // for the report's warnings (e.g. what a killed probe left)
        host_facts_wait host_facts_finished;  // a command that fails before any pass waits here, not at exit
    };

    // Throws probe_error when the request is unusable.
    prepared_command prepare_command(const measure_options& options);

    // One sample: a cold pass on fresh private caches, then, when it succeeded, a warm pass on
    // the cache it filled. extra_env reaches both passes (a what-if lever); variant names the
    // passes for the observer.
    sample run_sample(const prepared_command& command,
                      int index,
                      const std::map<std::string, std::string>& extra_env,
                      const std::string& variant,
                      run_observer* observer,
                      const cancel_check& cancelled);

    // warmup --verify: a sample whose private caches a prime command (the warm-up file) filled
    // first, in a pass of its own ("warmup", with the shim: its builds are recorded); then the
    // command's cold pass, on the primed cache, and its warm pass. The cold pass runs only when
    // the prime succeeded.
    struct primed_sample
    {
        run_result prime;
        sample program;
    };
    primed_sample run_primed_sample(const prepared_command& command,
                                    const prepared_command& prime,
                                    int index,
                                    run_observer* observer,
                                    const cancel_check& cancelled);

    // True when no further sample should run: interrupted, or the command could not start.
    bool stop_sampling(const sample& s, const cancel_check& cancelled);

    // The report around measured samples: the run's facts, environment and status.
    report make_report(const prepared_command& command, std::vector<sample> samples);

    // A run recorded with measure's keep_records_dir, read back into a report (samples and
    // the run's facts) by the same code that reads a live pass: analysis is tested on real
    // shim streams (tests/fixtures/streams) without running Warp. Throws std::runtime_error
    // when the directory is not such a recording.
    report load_recorded_run(const std::string& dir);
}

#endif
