// What warp-probe's subcommands share: printing an error with its exit code, --history and the
// runs it stores, reading "@ID" where a report path goes, progress on stderr, interrupts, and
// writing an output file. The engine lives below, behind src/jobs/usecases/use_cases.hpp.
#ifndef XWARP_CLI_SHARED_HPP
#define XWARP_CLI_SHARED_HPP

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "xwarp/jobs/usecases/use_cases.hpp"
#include "xwarp/model/report.hpp"
#include "xwarp/model/run_request.hpp"
#include "xwarp/engine/os/file_stamp.hpp"
#include "xwarp/render/view.hpp"

namespace xwarp::cli
{
    // Prints "warp-probe: MESSAGE" (one line) on stderr and returns `code`: every front error.
    int fail(int code, const std::string& message);

    // What the command is doing with which input ("reading after.json (212 MB)"), for the one
    // message an allocation that fails can still give: out of memory while doing that.
    void note_activity(const std::string& what);
    const std::string& current_activity();

    // Prints each note as "warp-probe: NOTE" on stderr.
    void print_notes(const std::vector<std::string>& notes);

    // A job's error printed, its exit code (exit_codes.hpp's exit_code_for_refusal) returned.
    int fail(const fronts::job_error& e);

    // Adds --history PATH|off to a subcommand.
    void add_history_option(CLI::App* sub, std::string& target);

    // A run by what the user calls it (a report file, "@ID", a label of the history): 0, or
    // the exit code after printing the error.
    int resolve_arg(const std::string& arg, const std::string& history_option, fronts::resolved_run& out);
    // The same, the report only.
    int load_report_arg(const std::string& arg, const std::string& history_option, report& out);

    // What tells a second reading of `arg` whether it is still what load_report_arg read the
    // first time: a regular file's stamp, or an empty one for "@ID" (a stored run does not
    // change). nullopt for what can be read only once (standard input, a pipe) or not at all.
    std::optional<file_stamp> stamp_report_arg(const std::string& arg);

    // A report is data. Before a replay (whatif, fix --verify, warmup --verify, compare
    // --until-settled) runs the command a run holds: when this user did not run it here, shows
    // what would run and goes on only with --run (`run_flag`) or a "y" typed at a terminal, and
    // then says so in `consented` (the job refuses otherwise). Returns 0 to go on, or
    // exit_code::not_permitted after saying why.
    int consent_to_replay(const fronts::resolved_run& run, bool run_flag, bool& consented);
    // Adds --run to a subcommand that replays a report's command.
    void add_run_option(CLI::App* sub, bool& target);

    // Stores an analysed run (compare's sides). Notes (a store moved aside, a store that could
    // not be written) always go to stderr; "stored as @N" unless quiet.
    std::optional<std::int64_t> store_run(const std::string& history_option, const report& r, run_kind kind,
                                          bool quiet);
    // What a job stored, said the same way.
    void say_stored(const fronts::job_outcome& outcome, bool quiet);

    // Adds the hidden --replay-streams DIR (recorded passes served instead of runs; for tests)
    // and, where `keep` is given, the hidden --keep-records DIR that records them.
    void add_replay_streams_option(CLI::App* sub, std::string& target, std::string* keep = nullptr);

    // 0 for a budget the CLI can check, else exit_code::usage after saying why (a malformed
    // limit, or workload=same without a run to judge it against).
    int refuse_bad_budget(const std::string& spec, bool against_a_run);

    // Checks a budget against an analysed report (and, for workload/kernels/results=same, the
    // baseline) and prints one line per limit. Returns the check's exit code (0, or over_budget).
    int print_budget(const report& r, const std::string& spec, const report* baseline = nullptr,
                     const std::string& baseline_name = "", const std::string& run_name = "");

    // SIGINT, SIGTERM and SIGHUP set a flag the engine polls (its processes are then killed and
    // its temporary files removed); interrupted_exit() says so and returns 128 + the signal.
    void install_signal_handlers();
    cancel_check interrupt_check();
    int interrupted_exit();

    // Progress on stderr: rewritten in place on a terminal, one line per pass otherwise; after
    // the first sample, the findings so far, marked provisional.
    class progress : public run_observer
    {
    public:
        explicit progress(bool quiet);
        void pass_started(int sample, int samples, const std::string& phase) override;
        void pass_running(int sample, int samples, const std::string& phase, double elapsed_ms) override;
        void pass_finished(int sample, int samples, const std::string& phase, const run_result& pass) override;
        void sample_finished(int sample, int samples, const report& so_far) override;

    private:
        bool m_quiet;
        bool m_tty;
    };

    // What a subcommand's job runs with: its history, the hidden replay switches and --run, the
    // consent a replay of a report needs, then progress on stderr and the interrupt (wired only
    // at start(): a terminal's y/N is asked before the handlers take SIGINT).
    class cli_job
    {
    public:
        cli_job(const std::string& history, const std::string& replay_streams, bool run_flag, bool quiet);
        // consent_to_replay for each run: 0, or the exit code after saying why.
        int consent(std::initializer_list<const fronts::resolved_run*> runs);
        const fronts::job_context& start();

    private:
        fronts::job_context m_context;
        bool m_run_flag;
        progress m_progress;
    };

    // What fix and warmup take alike, over one stored run: the run and the history it is looked
    // up in, the JSON and HTML outputs, --quiet, --run (consent to run a report from elsewhere)
    // and the recorded streams to replay from. add() declares them around the subcommand's own
    // options (added by `own`, after the run and the history).
    struct stored_run_args
    {
        std::string report;
        std::string history;
        std::string json;
        std::string html;
        bool quiet = false;
        bool run = false;
        std::string replay_streams;

        // `keep_records`: the request's field --keep-records writes
        void add(CLI::App* sub, const std::string& json_help, const std::string& html_help, std::string& keep_records,
                 const std::function<void()>& own);
        // The run the report names: 0, or the exit code after saying why not.
        int resolve(fronts::resolved_run& out) const { return resolve_arg(report, history, out); }
        cli_job job() const { return cli_job(history, replay_streams, run, quiet); }
        // The run resolved and, where the job runs its command again, consent asked: 0, or the
        // exit code after saying why not.
        int resolve_with_consent(fronts::resolved_run& out, cli_job& job, bool runs_again) const
        {
            if (int code = resolve(out))
            {
                return code;
            }
            return runs_again ? job.consent({&out}) : 0;
        }
    };

    // Runs a write: 0, or exit code 73 with its message.
    int write_or_fail(const std::function<void()>& write);
    // 0 when every non-empty path is a place to write an output (model's output_path_refused),
    // else the cannot-write exit after naming the first that is not: checked before the work, so
    // that a run is not lost to an output it could never write.
    int outputs_writable(const std::vector<std::string>& paths);
    int write_json_or_fail(const std::string& path, const nlohmann::json& j);
    // A report, written a record at a time (its whole JSON tree is several times its text).
    // `own`: a report this probe measured here (or replayed from one that was): the SHA-256 of the
    // bytes written goes to the run store, and the file reads back as the user's own.
    int write_report_or_fail(const std::string& path, const report& r, const std::string& history, bool own);
    // Text to a file, or to stdout when path is empty.
    int write_text(const std::string& path, const std::string& text);
    // A part of a view to a file (written beside it, then renamed over it: a failure leaves the
    // old file whole), or to stdout when path is empty. Every output flag of a subcommand writes
    // through here: --json the data, --html the page, -o the part --format names.
    int write_view_part(const std::string& path, const view& v, view_part part);
    // The files a subcommand's flags name (an empty path: none): its data to `json_path`, its
    // page to `html_path`. 0, or the exit code after saying why.
    int write_view_files(const view& v, const std::string& json_path, const std::string& html_path);

    // The command is done and the process exits next, which gives its memory back whole.
    // Freeing a large report record by record first took 6 % of `report` on 10,000 identities
    // (bench/render_scale.py) for nothing, so it is left to the exit, as compilers leave their
    // syntax trees. Only for what a subcommand itself holds at its last step.
    template <typename T>
    void leave_to_exit(T& value)
    {
        static_cast<void>(new T(std::move(value)));  // never deleted, on purpose
    }
}

#endif
