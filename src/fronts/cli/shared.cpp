#include "shared.hpp"

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <unistd.h>

#include "xwarp/jobs/usecases/exit_codes.hpp"
#include "xwarp/jobs/usecases/history_jobs.hpp"
#include "xwarp/jobs/usecases/judging.hpp"
#include "xwarp/jobs/usecases/replay_trust.hpp"
#include "xwarp/model/format.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/render/printable.hpp"
#include "xwarp/render/text.hpp"

namespace xwarp::cli
{
    namespace
    {
        volatile std::sig_atomic_t g_signal = 0;

        extern "C" void on_signal(int sig)
        {
            g_signal = sig;
        }
    }

    namespace
    {
        std::string& activity()
        {
            static std::string* text = new std::string;  // never freed: read while memory runs out
            return *text;
        }
    }

    void note_activity(const std::string& what)
    {
        activity() = what;
    }

    const std::string& current_activity()
    {
        return activity();
    }

    int fail(int code, const std::string& message)
    {
        std::cerr << "warp-probe: " << one_line(message) << "\n";
        return code;
    }

    void print_notes(const std::vector<std::string>& notes)
    {
        for (const auto& n : notes)
        {
            std::cerr << "warp-probe: " << one_line(n) << "\n";
        }
    }

    int fail(const fronts::job_error& e)
    {
        return fail(exit_code_for_refusal(e), e.what());
    }

    void add_replay_streams_option(CLI::App* sub, std::string& target, std::string* keep)
    {
        sub->add_option("--replay-streams", target,
                        "serve the passes recorded in DIR (--keep-records) instead of running anything")
            ->group("");  // hidden: a test harness's switch, as hyperfine's debug mode
        if (keep)
        {
            sub->add_option("--keep-records", *keep, "keep every pass's raw records in DIR (variants under variants/NAME)")
                ->group("");
        }
    }

    void say_stored(const fronts::job_outcome& outcome, bool quiet)
    {
        print_notes(outcome.notes);
        if (outcome.stored_id && !quiet)
        {
            std::cerr << "warp-probe: stored as @" << *outcome.stored_id << " in " << one_line(outcome.stored_in) << "\n";
        }
    }

    void add_history_option(CLI::App* sub, std::string& target)
    {
        sub->add_option("--history", target,
                        "the history store: a SQLite file, or off (default: $XWARP_HISTORY, else "
                        "$XDG_DATA_HOME/xwarp/history.sqlite3)");
    }

    void add_run_option(CLI::App* sub, bool& target)
    {
        sub->add_flag("--run", target,
                      "run the report's command even though your history does not show you ran it on this machine "
                      "(a report is data: one from elsewhere is shown and not run without this, or a yes at a terminal)");
    }

    int refuse_bad_budget(const std::string& spec, bool against_a_run)
    {
        try
        {
            fronts::validate_limits(spec, against_a_run);
        }
        catch (const fronts::job_error& e)
        {
            return fail(exit_code::usage, "--budget: " + std::string(e.what())
                                              + (against_a_run ? "" : " (check REPORT --budget ... --compare BASELINE, or "
                                                                      "warp-probe compare BEFORE AFTER)"));
        }
        return 0;
    }

    int consent_to_replay(const fronts::resolved_run& run, bool run_flag, bool& consented)
    {
        if (run.ran_here || run_flag)
        {
            consented = consented || run_flag;
            return 0;
        }
        std::cerr << "warp-probe: " << one_line(run.ref) << " asks to run what you have not run here ("
                  << one_line(run.why_not_here) << "):\n"
                  << what_a_replay_runs(run.saved);
        if (::isatty(STDIN_FILENO) && ::isatty(STDERR_FILENO))
        {
            std::cerr << "Run it? [y/N] " << std::flush;
            std::string answer;
            if (std::getline(std::cin, answer) && (answer == "y" || answer == "Y" || answer == "yes"))
            {
                consented = true;
                return 0;
            }
        }
        return fail(fronts::job_error(fronts::job_error::kind::not_permitted,
                                      "not run: a report is data, and this one's command is not yours until you say so; "
                                      "add --run to run it"));
    }

    int resolve_arg(const std::string& arg, const std::string& history_option, fronts::resolved_run& out)
    {
        std::error_code ec;
        const auto size = std::filesystem::file_size(arg, ec);
        note_activity("reading " + arg + (ec ? std::string() : " (" + format_fixed(static_cast<double>(size) / 1e6, 1) + " MB)"));
        try
        {
            out = fronts::resolve(arg, history_option);
            return exit_code::ok;
        }
        catch (const fronts::job_error& e)
        {
            return fail(e);
        }
    }

    int load_report_arg(const std::string& arg, const std::string& history_option, report& out)
    {
        fronts::resolved_run run;
        if (int code = resolve_arg(arg, history_option, run))
        {
            return code;
        }
        out = std::move(run.saved);
        return exit_code::ok;
    }

    std::optional<file_stamp> stamp_report_arg(const std::string& arg)
    {
        if (!arg.empty() && arg[0] == '@' && fronts::run_id_of(arg))
        {
            return file_stamp{};
        }
        return stamp_regular_file(arg);
    }

    std::optional<std::int64_t> store_run(const std::string& history_option, const report& r, run_kind kind,
                                          bool quiet)
    {
        std::vector<std::string> notes;
        const auto id = fronts::store(r, kind, history_option, notes);
        print_notes(notes);
        if (id && !quiet)
        {
            std::cerr << "warp-probe: stored as @" << *id << " in " << one_line(fronts::history_path(history_option)) << "\n";
        }
        return id;
    }

    int print_budget(const report& r, const std::string& spec, const report* baseline, const std::string& baseline_name,
                     const std::string& run_name)
    {
        fronts::check_outcome outcome;
        try
        {
            outcome = fronts::check(r, {spec, baseline, baseline_name, run_name});
        }
        catch (const fronts::job_error& e)
        {
            return fail(exit_code::usage, "--budget: " + std::string(e.what()));
        }
        write_view(std::cout, budget_view(outcome.results, "Budget", outcome.met, spec), view_part::text);
        return outcome.exit_code;
    }

    void install_signal_handlers()
    {
        struct sigaction sa{};
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, nullptr);
        sigaction(SIGTERM, &sa, nullptr);
        sigaction(SIGHUP, &sa, nullptr);
    }

    cancel_check interrupt_check()
    {
        return [] { return g_signal != 0; };
    }

    int interrupted_exit()
    {
        std::cerr << "warp-probe: interrupted; temporary caches removed\n";
        return 128 + (g_signal ? static_cast<int>(g_signal) : SIGINT);
    }

    progress::progress(bool quiet) : m_quiet(quiet), m_tty(::isatty(STDERR_FILENO) == 1) {}

    void progress::pass_started(int sample, int samples, const std::string& phase)
    {
        if (!m_quiet && m_tty)
        {
            std::fprintf(stderr, "\r\033[K[%d/%d] %s pass ...", sample, samples, phase.c_str());
            std::fflush(stderr);
        }
    }

    void progress::pass_running(int sample, int samples, const std::string& phase, double elapsed_ms)
    {
        if (!m_quiet && m_tty)
        {
            std::fprintf(stderr, "\r\033[K[%d/%d] %s pass %.1f s", sample, samples, phase.c_str(), elapsed_ms / 1000.0);
            std::fflush(stderr);
        }
    }

    void progress::pass_finished(int sample, int samples, const std::string& phase, const run_result& pass)
    {
        if (m_quiet)
        {
            return;
        }
        int compiled = 0;
        for (const auto& l : pass.module_loads)
        {
            compiled += l.status == load_status::compiled;
        }
        std::fprintf(stderr, "%s[%d/%d] %s pass %s, %s, %zu module load(s), %d compiled\n", m_tty ? "\r\033[K" : "",
                     sample, samples, phase.c_str(), format_ms(pass.wall_ms).c_str(),
                     one_line(fronts::failure_words(pass, std::nullopt)).c_str(), pass.module_loads.size(), compiled);
    }

    // The findings after the first sample, marked provisional: the answer before the last
    // sample (the final report follows on stdout).
    void progress::sample_finished(int sample, int samples, const report& so_far)
    {
        if (m_quiet || sample != 1)
        {
            return;
        }
        report r = so_far;
        fronts::analyse(r);
        std::string text = std::string(m_tty ? "\r\033[K" : "") + "[provisional after sample 1 of "
                           + std::to_string(samples) + "] ";
        if (r.findings.empty())
        {
            text += "no finding so far\n";
        }
        else
        {
            text += std::to_string(r.findings.size()) + " finding(s):\n";
            for (std::size_t i = 0; i < r.findings.size() && i < 5; ++i)
            {
                const auto& f = r.findings[i];
                // a figure says what it is: an estimate, on its clock, from this one sample
                text += "  [" + f.mechanism + "] " + f.title + (f.module.empty() ? "" : " - " + elide(f.module, 60))
                        + (f.savings_ms ? " - estimate ~" + format_ms(*f.savings_ms) + " " + clock_name(f.savings_clock)
                                              + " from sample 1 (the report's figure is the median of all)"
                                        : "")
                        + "\n";
            }
        }
        std::fputs(printable_block(text).c_str(), stderr);
        std::fflush(stderr);
    }

    cli_job::cli_job(const std::string& history, const std::string& replay_streams, bool run_flag, bool quiet)
        : m_run_flag(run_flag), m_progress(quiet)
    {
        m_context.history_option = history;
        m_context.replay_streams = replay_streams;
        m_context.consented = run_flag;
    }

    int cli_job::consent(std::initializer_list<const fronts::resolved_run*> runs)
    {
        for (const auto* run : runs)
        {
            if (int code = consent_to_replay(*run, m_run_flag, m_context.consented))
            {
                return code;
            }
        }
        return 0;
    }

    const fronts::job_context& cli_job::start()
    {
        install_signal_handlers();
        m_context.observer = &m_progress;
        m_context.cancelled = interrupt_check();
        return m_context;
    }

    int write_or_fail(const std::function<void()>& write)
    {
        try
        {
            write();
        }
        catch (const std::exception& e)
        {
            return fail(exit_code::cannot_write, e.what());
        }
        return 0;
    }

    int outputs_writable(const std::vector<std::string>& paths)
    {
        for (const auto& path : paths)
        {
            if (path.empty())
            {
                continue;
            }
            if (const std::string why = output_path_refused(path); !why.empty())
            {
                return fail(exit_code::cannot_write, "cannot write " + path + ": " + why);
            }
        }
        return exit_code::ok;
    }

    int write_json_or_fail(const std::string& path, const nlohmann::json& j)
    {
        return write_or_fail([&] { save_json(path, j); });
    }

    int write_report_or_fail(const std::string& path, const report& r, const std::string& history, bool own)
    {
        return write_or_fail(
            [&]
            {
                if (!own)
                {
                    save_report_json(path, r);
                    return;
                }
                std::vector<std::string> notes;
                fronts::write_own_report(path, r, history, notes);
                for (const auto& n : notes)
                {
                    std::cerr << "warp-probe: " << one_line(n) << "\n";
                }
            });
    }

    int write_text(const std::string& path, const std::string& text)
    {
        if (path.empty())
        {
            std::cout << text;
            return exit_code::ok;
        }
        // beside the target, renamed over it (a symlink at the name is replaced, not followed;
        // a FIFO nobody reads is refused, not waited on)
        return write_or_fail([&] { save_streamed(path, [&](std::ostream& out) { out << text; }); });
    }

    int write_view_part(const std::string& path, const view& v, view_part part)
    {
        if (path.empty())
        {
            write_view(std::cout, v, part);
            std::cout.flush();
            return exit_code::ok;
        }
        return write_or_fail([&] { save_streamed(path, [&](std::ostream& out) { write_view(out, v, part); }); });
    }

    int write_view_files(const view& v, const std::string& json_path, const std::string& html_path)
    {
        for (const auto& [path, part] : {std::pair{&json_path, view_part::data}, std::pair{&html_path, view_part::page}})
        {
            if (!path->empty())
            {
                if (int rc = write_view_part(*path, v, part))
                {
                    return rc;
                }
            }
        }
        return 0;
    }

    void stored_run_args::add(CLI::App* sub, const std::string& json_help, const std::string& html_help,
                              std::string& keep_records, const std::function<void()>& own)
    {
        sub->add_option("report", report, "a JSON report written by measure --json, a stored run (@ID), or a label of the history")
            ->required();
        add_history_option(sub, history);
        own();
        sub->add_option("--json", json, json_help);
        sub->add_option("--html", html, html_help);
        sub->add_flag("--quiet,-q", quiet, "no progress lines on stderr");
        add_run_option(sub, run);
        add_replay_streams_option(sub, replay_streams, &keep_records);
    }
}
