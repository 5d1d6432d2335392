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
#include "xwarp/model/run_request.hpp"
#include "xwarp/engine/os/process.hpp"

namespace xwarp
{
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

    // A lever that keeps caches (keep-cuda-cache, keep-lto-cache): a cold pass of the command on
    // fresh private caches fills them ("fill", not part of the sample), every cache but the kept
    // ones is emptied, and the sample's cold and warm passes run on what is left. A fill pass
    // that failed leaves the sample to run on empty caches, its notes saying so.
    sample run_sample_on_kept_caches(const prepared_command& command,
                                     int index,
                                     const std::vector<cache_kind>& keeps,
                                     const std::map<std::string, std::string>& extra_env,
                                     const std::string& variant,
                                     run_observer* observer,
                                     const cancel_check& cancelled);

    // warmup --verify: a sample whose private caches a prime command (the warm-up file) filled
    // first, in a pass of its own ("warmup", with the shim: its builds are recorded); then the
    // command's cold pass, on the primed cache, and its warm pass. The cold pass runs only when
    // the prime succeeded.
    primed_sample run_primed_sample(const prepared_command& command,
                                    const prepared_command& prime,
                                    int index,
                                    run_observer* observer,
                                    const cancel_check& cancelled);

    // True when no further sample should run: interrupted, or the command could not start.
    bool stop_sampling(const sample& s, const cancel_check& cancelled);

    // The report around measured samples: the run's facts, environment and status.
    report make_report(const prepared_command& command, std::vector<sample> samples);

    // The report's status from its samples: interrupted, failed (none good), partial or ok.
    void settle_status(report& r, bool interrupted);

    // Where --keep-records puts sample `index` of a variant ("" the program as measured; a
    // what-if lever, a patched copy's finding, "primed": DIR/variants/<name>/), and where
    // --replay-streams reads it back.
    std::string recorded_sample_dir(const std::string& dir, const std::string& variant, int index);

    // One pass recorded with --keep-records (a sample's cold/, warm/ or warmup/ folder), read
    // back by the code that reads a live pass. Throws std::runtime_error when it is not one.
    run_result load_recorded_pass(const std::string& dir);

    // A run recorded with measure's keep_records_dir, read back into a report (samples and
    // the run's facts) by the same code that reads a live pass: analysis is tested on real
    // shim streams (tests/fixtures/streams) without running Warp. Throws std::runtime_error
    // when the directory is not such a recording.
    report load_recorded_run(const std::string& dir);
}

#endif
