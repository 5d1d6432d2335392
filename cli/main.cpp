// warp-probe: the command-line front. It parses options, calls the engine and prints.
#include <atomic>
#include <csignal>
#include <filesystem>
#include <cstdio>
#include <iostream>
#include <system_error>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <set>

#include "history_commands.hpp"
#include "xwarp/analysis/budget.hpp"
#include "xwarp/analysis/compare.hpp"
#include "xwarp/analysis/mechanisms.hpp"
#include "xwarp/analysis/whatif.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/doctor/doctor.hpp"
#include "xwarp/history/store.hpp"
#include "xwarp/fronts/exit_codes.hpp"
#include "xwarp/fronts/options.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/model/release.hpp"
#include "xwarp/render/html.hpp"
#include "xwarp/render/printable.hpp"
#include "xwarp/render/text.hpp"
#include "xwarp/render/trace.hpp"
#include "xwarp/install/layout.hpp"
#include "xwarp/runner/runner.hpp"
#include "xwarp/version.hpp"
#include "xwarp/whatif/adaptive.hpp"
#include "xwarp/whatif/whatif.hpp"

namespace
{
    using xwarp::cli::fail;

    volatile std::sig_atomic_t g_signal = 0;

    extern "C" void on_signal(int sig)
    {
        g_signal = sig;
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

    // Progress on stderr: rewritten in place on a terminal, one line per pass otherwise.
    class progress : public xwarp::run_observer
    {
    public:
        explicit progress(bool quiet) : m_quiet(quiet), m_tty(::isatty(STDERR_FILENO) == 1) {}

        void pass_started(int sample, int samples, const std::string& phase) override
        {
            if (!m_quiet && m_tty)
            {
                std::fprintf(stderr, "\r\033[K[%d/%d] %s pass ...", sample, samples, phase.c_str());
                std::fflush(stderr);
            }
        }

        void pass_running(int sample, int samples, const std::string& phase, double elapsed_ms) override
        {
            if (!m_quiet && m_tty)
            {
                std::fprintf(stderr, "\r\033[K[%d/%d] %s pass %.1f s", sample, samples, phase.c_str(), elapsed_ms / 1000.0);
                std::fflush(stderr);
            }
        }

        void pass_finished(int sample, int samples, const std::string& phase, const xwarp::run_result& pass) override
        {
            if (m_quiet)
            {
                return;
            }
            int compiled = 0;
            for (const auto& l : pass.module_loads)
            {
                compiled += l.status == xwarp::load_status::compiled;
            }
            std::fprintf(stderr,
                         "%s[%d/%d] %s pass %s, %s, %zu module load(s), %d compiled\n",
                         m_tty ? "\r\033[K" : "",
                         sample,
                         samples,
                         phase.c_str(),
                         xwarp::format_ms(pass.wall_ms).c_str(),
                         xwarp::one_line(xwarp::describe_failure(pass, std::nullopt)).c_str(),
                         pass.module_loads.size(),
                         compiled);
        }

        // The findings after the first sample, marked provisional: the answer before the last
        // sample (the final report follows on stdout).
        void sample_finished(int sample, int samples, const xwarp::report& so_far) override
        {
            if (m_quiet || sample != 1)
            {
                return;
            }
            xwarp::report r = so_far;
            xwarp::analyze(r);
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
                    text += "  [" + f.mechanism + "] " + f.title
                            + (f.module.empty() ? "" : " - " + xwarp::elide(f.module, 60))
                            + (f.savings_ms ? " - ~" + xwarp::format_ms(*f.savings_ms) : "") + "\n";
                }
            }
            std::fputs(xwarp::printable_block(text).c_str(), stderr);
            std::fflush(stderr);
        }

    private:
        bool m_quiet;
        bool m_tty;
    };

    int exit_code_of(const xwarp::probe_error& e)
    {
        using k = xwarp::probe_error::kind;
        switch (e.which())
        {
            case k::command_not_found:
                return xwarp::exit_code::command_not_found;
            case k::not_executable:
                return xwarp::exit_code::not_executable;
            case k::cwd_missing:
                return xwarp::exit_code::no_input;
            case k::usage:
                return xwarp::exit_code::usage;
            default:
                return xwarp::exit_code::software;
        }
    }

    // Takes measure's COMMAND out of the words before CLI11 sees them: after "measure" and its
    // options (and their values), the first word that is not an option, or everything after
    // "--", is the command.
    void split_command(std::vector<std::string>& words, std::vector<std::string>& command)
    {
        static const std::set<std::string> with_value = {"--samples", "-n", "--json", "--label", "--cwd", "--timeout",
                                                         "--python", "--keep-records", "--whatif", "--whatif-budget", "--trace", "--max-samples",
                                                         "--history", "--budget", "--machine"};
        std::size_t i = 1;
        while (i < words.size() && !words[i].empty() && words[i][0] == '-')
        {
            ++i;  // options before the subcommand (--help, --version)
        }
        if (i >= words.size() || words[i] != "measure")
        {
            return;
        }
        for (++i; i < words.size(); ++i)
        {
            const std::string& w = words[i];
            if (w == "--")
            {
                command.assign(words.begin() + static_cast<long>(i) + 1, words.end());
                words.resize(i);
                return;
            }
            if (w.empty() || w[0] != '-')
            {
                command.assign(words.begin() + static_cast<long>(i), words.end());
                words.resize(i);
                return;
            }
            if (with_value.count(w))
            {
                ++i;  // its value, whatever it looks like
            }
        }
    }

    // Runs a write: 0, or exit code 73 with its message.
    template <typename Write>
    int write_or_fail(Write write)
    {
        try
        {
            write();
        }
        catch (const std::exception& e)
        {
            return fail(xwarp::exit_code::cannot_write, e.what());
        }
        return 0;
    }

    int write_json_or_fail(const std::string& path, const nlohmann::json& j)
    {
        return write_or_fail([&] { xwarp::save_json(path, j); });
    }

    // A report, written a record at a time (its whole JSON tree is several times its text).
    int write_report_or_fail(const std::string& path, const xwarp::report& r)
    {
        return write_or_fail([&] { xwarp::save_report_json(path, r); });
    }

    // The command is done and the process exits next, which gives its memory back whole.
    // Freeing a large report record by record first took 6 % of `report` on 10,000 identities
    // (bench/render_scale.py) for nothing, so it is left to the exit, as compilers leave their
    // syntax trees. Only for what main itself holds at its last step.
    template <typename T>
    void leave_to_exit(T& value)
    {
        static_cast<void>(new T(std::move(value)));  // never deleted, on purpose
    }

    const char* exit_code_help = R"(Exit codes:
  measure   0 measured (some samples may have failed: see the warnings)
            1 every sample failed (the command failed or timed out)
  measure   8 with --budget: a limit was exceeded (the output names the module)
  check     0 within the budget, 8 a limit was exceeded (the output names the module)
  history   0 printed; import: 65/66 when a file could not be read (the others are stored)
  compare   0 improved, 1 regressed, 2 invalid (workload changed, errors or failed samples),
            3 unverified (no launches recorded), 4 inconclusive (inside the noise band or not
            significant), 5 not-comparable (different Warp version, device or command),
            65 also for a report file that changed between compare's two readings of it
  whatif    0 replayed (each lever's verdict is in the output, not in the exit code)
  report    0 rendered
  doctor    0 facts printed (a missing Python or Warp is reported, not an error)
  mechanisms 0 listed
  all       64 bad options, 65 unreadable report (not JSON, other schema, malformed),
            66 missing file or directory, 70 internal error, 73 output not writable,
            126 command not executable, 127 command not found, 130 interrupted (SIGINT),
            128+N killed by signal N)";
}

int main(int argc, char** argv)
{
    CLI::App app{"warp-probe: measure, explain and compare NVIDIA Warp's cold-start compile time"};
    app.set_version_flag("--version", std::string("warp-probe ") + XWARP_VERSION);
    app.require_subcommand(1);
    app.footer(exit_code_help);

    // measure
    xwarp::measure_options mo;
    std::string json_out;
    bool quiet = false;
    double timeout_s = 0.0;
    auto* measure = app.add_subcommand(
        "measure",
        "Run COMMAND in fresh subprocesses, each sample with private WARP_CACHE_PATH and CUDA_CACHE_PATH,\n"
        "cold then warm on the cache it just filled, and report every module Warp built.\n"
        "Usage: warp-probe measure [options] [--] COMMAND [ARGS...]");
    std::string samples_text = "3";
    int max_samples = xwarp::default_max_samples;
    measure->add_option("--samples,-n", samples_text,
                        "samples, each a cold and a warm pass: a number, or auto (until the measurement settles; with "
                        "--whatif, from two a side until each replay's verdict settles)")
        ->default_str("3")
        ->check(xwarp::sample_count(1, 1000));
    measure->add_option("--max-samples", max_samples, "with --samples auto: the most samples it takes (a side, with --whatif)")
        ->default_val(xwarp::default_max_samples)
        ->check(xwarp::whole_number(2, 1000));
    measure->add_option("--json", json_out, "also write the JSON report to this file");
    measure->add_option("--label", mo.label, "a name for this measurement (shown in reports and compare)");
    measure->add_option("--cwd", mo.cwd, "run the command in this directory (default: the current one)");
    measure->add_option("--timeout", timeout_s, "seconds each pass may run before its process group is killed")
        ->check(xwarp::positive_seconds());
    measure->add_option("--python", mo.python, "interpreter that replaces a leading python/python3 in COMMAND");
    measure->add_flag("--quiet,-q", quiet, "no progress lines on stderr");
    std::string trace_out;
    measure->add_option("--trace", trace_out,
                        "also write the build timeline (the median sample's cold pass) as Chrome trace-event JSON, "
                        "for Perfetto or chrome://tracing");
    measure->add_flag("--nvrtc-trace", mo.nvrtc_trace,
                      "turn Warp's compile_time_trace on in the measured processes (Warp 1.8+, CUDA builds through "
                      "NVRTC from CUDA 12.8) and merge NVRTC's per-module traces into --trace, under each module's "
                      "native compile; module hashes then differ from a run without it");
    measure->add_option("--keep-records", mo.keep_records_dir,
                        "copy every pass's raw shim records into this directory (to debug the probe, or to record "
                        "tests/fixtures/streams)");
    std::string whatif_spec;
    double whatif_budget = 0.0;
    std::string lever_list;
    for (const auto& l : xwarp::known_levers())
    {
        lever_list += (lever_list.empty() ? "" : ", ") + l;
    }
    measure->add_option("--whatif", whatif_spec,
                        "replay levers on the unmodified command and measure each: auto (the levers of the findings) "
                        "or LEVER[,LEVER...] (" + lever_list + ")");
    measure->add_option("--whatif-budget", whatif_budget, "seconds of replays allowed (default: 6 x one cold run)")
        ->check(xwarp::positive_seconds());
    std::string history_option;
    xwarp::cli::add_history_option(measure, history_option);
    std::string measure_budget;
    std::string machine_name;
    measure->add_option("--machine", machine_name,
                        "the name this machine goes by in the report and the history (default: its host name); a fleet of "
                        "ephemeral CI runners names its GPU kind here");
    std::string budget_metrics;
    for (const auto& m : xwarp::budget_metrics())
    {
        budget_metrics += (budget_metrics.empty() ? "" : ", ") + m;
    }
    measure->add_option("--budget", measure_budget,
                        "a CI gate: LIMIT[,LIMIT...], LIMIT = METRIC<=NUMBER or METRIC>=NUMBER (exit 8 when not met), METRIC: "
                            + budget_metrics);

    // report
    std::string report_in;
    std::string report_format = "text";
    std::string report_out;
    auto* rep = app.add_subcommand("report", "Re-analyse a saved JSON report and render it");
    rep->add_option("report", report_in,
                    "a JSON report written by measure --json, a stored run (@ID), or a run recorded with --keep-records")
        ->required();
    xwarp::cli::add_history_option(rep, history_option);
    rep->add_option("--format,-f", report_format,
                    "text, html (a self-contained page), json, or trace (the build timeline as Chrome trace-event JSON)")
        ->check(CLI::IsMember({"text", "html", "json", "trace"}));
    rep->add_option("--output,-o", report_out, "write to this file instead of stdout (beside it first, then renamed over it: a failed write leaves the old file; a device or pipe is written in place)");

    // compare
    std::string cmp_before;
    std::string cmp_after;
    std::string cmp_json;
    auto* cmp = app.add_subcommand(
        "compare",
        "Compare two reports: credit a compile-time change only when the launch workload is the same\n"
        "and the change is beyond the noise band (and significant with >= 5 samples a side)");
    cmp->add_option("before", cmp_before, "the baseline report (JSON, or a stored run @ID)")->required();
    cmp->add_option("after", cmp_after, "the report after the change (JSON, or a stored run @ID)")->required();
    xwarp::cli::add_history_option(cmp, history_option);
    cmp->add_option("--json", cmp_json, "also write the comparison as JSON");
    std::string cmp_html;
    cmp->add_option("--html", cmp_html, "also write the comparison as a self-contained HTML page");
    bool cmp_until_settled = false;
    int cmp_max_samples = xwarp::default_max_samples;
    bool cmp_quiet = false;
    cmp->add_flag("--until-settled", cmp_until_settled,
                  "re-run each side's command (from its report: argv, folder, python, timeout; in this shell's "
                  "environment), one sample a side at a time, until the verdict is settled or each side has "
                  "--max-samples; the reports given are never rewritten (the grown runs go to the history)");
    cmp->add_option("--max-samples", cmp_max_samples, "with --until-settled: the most samples a side (default 10)")
        ->check(CLI::Range(2, 1000));
    cmp->add_flag("--quiet,-q", cmp_quiet, "with --until-settled: no progress lines");

    // doctor
    std::string doctor_python = "python3";
    std::string doctor_json;
    auto* doc = app.add_subcommand("doctor",
                                   "What a measurement here would see: OS, CPU, Python, Warp and where its cache would "
                                   "go, the CUDA toolkit (NVRTC, cudart), devices and driver. Changes nothing.");
    doc->add_option("--python", doctor_python, "the interpreter to ask about Warp (default: python3 on PATH)");
    doc->add_option("--json", doctor_json, "also write the facts as JSON");

    // whatif
    std::string whatif_report;
    std::vector<std::string> whatif_levers;
    std::string whatif_json;
    int whatif_samples = 0;
    double whatif_replay_budget = 0.0;
    double whatif_timeout = 0.0;
    bool whatif_quiet = false;
    auto* wi = app.add_subcommand("whatif",
                                  "Replay levers on a saved report's command, unmodified, and measure each against fresh "
                                  "baseline samples interleaved with it.\nUsage: warp-probe whatif REPORT.json [LEVER...]");
    wi->add_option("report", whatif_report, "a JSON report written by measure --json, or a stored run (@ID)")->required();
    xwarp::cli::add_history_option(wi, history_option);
    wi->add_option("levers", whatif_levers, "levers to replay (default: auto, the levers of the report's findings): " + lever_list);
    wi->add_option("--samples,-n", whatif_samples, "samples a side (default: the report's)")->check(xwarp::whole_number(1, 1000));
    bool whatif_until_settled = false;
    int whatif_max_samples = xwarp::default_max_samples;
    wi->add_flag("--until-settled", whatif_until_settled,
                 "after --samples a side, add a baseline sample and one of each lever whose verdict could still "
                 "change, round by round, until every verdict settled, --max-samples or the budget (compare "
                 "--until-settled's rule; each lever's result says how many it added and why it stopped)");
    wi->add_option("--max-samples", whatif_max_samples, "with --until-settled: the most samples a side (default 10)")
        ->check(xwarp::whole_number(2, 1000));
    bool whatif_reuse_baseline = false;
    wi->add_flag("--reuse-baseline", whatif_reuse_baseline,
                 "judge the replays against the report's own samples, not fresh baseline samples (half the runs; "
                 "the machine may have changed since the report was measured)");
    wi->add_option("--budget", whatif_replay_budget, "seconds of replays allowed (default: 6 x one cold run)")
        ->check(xwarp::positive_seconds());
    wi->add_option("--timeout", whatif_timeout, "seconds each pass may run before its process group is killed")
        ->check(xwarp::positive_seconds());
    wi->add_option("--json", whatif_json, "write the report with its whatif[] results to this file");
    wi->add_flag("--quiet,-q", whatif_quiet, "no progress lines on stderr");

    // mechanisms
    bool mechanisms_json = false;
    auto* mech = app.add_subcommand("mechanisms",
                                    "List every mechanism the diagnoses can name: its id, kind, guide section and the "
                                    "what-if lever that would fix it (or why none can)");
    mech->add_flag("--json", mechanisms_json, "print the registry as JSON");

    // history, check
    xwarp::cli::history_commands history_commands;
    xwarp::cli::add_history_commands(app, history_commands);

    // measure's COMMAND starts at the first word that is not one of its options (or after
    // "--"): everything from there on is the command's, "-n" included.
    std::vector<std::string> words(argv, argv + argc);
    split_command(words, mo.command);
    std::vector<char*> cli_argv;
    for (auto& w : words)
    {
        cli_argv.push_back(w.data());
    }

    try
    {
        app.parse(static_cast<int>(cli_argv.size()), cli_argv.data());
    }
    catch (const CLI::CallForHelp& e)
    {
        return app.exit(e);
    }
    catch (const CLI::CallForAllHelp& e)
    {
        return app.exit(e);
    }
    catch (const CLI::CallForVersion& e)
    {
        return app.exit(e);
    }
    catch (const CLI::ParseError& e)
    {
        app.exit(e);
        return xwarp::exit_code::usage;
    }

    try
    {
        if (auto code = xwarp::cli::run_history_commands(history_commands))
        {
            return *code;
        }
        if (*measure)
        {
            if (mo.command.empty())
            {
                return fail(xwarp::exit_code::usage, "measure needs a command: warp-probe measure [options] [--] COMMAND...");
            }
            if (!measure_budget.empty())
            {
                try
                {
                    xwarp::parse_budget(measure_budget);
                }
                catch (const xwarp::budget_error& e)
                {
                    return fail(xwarp::exit_code::usage, e.what());
                }
            }
            if (timeout_s > 0)
            {
                mo.timeout_s = timeout_s;
            }
            const bool auto_samples = samples_text == "auto";
            mo.samples = auto_samples ? max_samples : std::stoi(samples_text);
            mo.shim_dir = xwarp::default_shim_dir();
            install_signal_handlers();
            progress observer(quiet);
            xwarp::report r;
            try
            {
                if (auto_samples && whatif_spec.empty())
                {
                    r = xwarp::measure_until_settled(mo, max_samples, &observer, [] { return g_signal != 0; });
                }
                else if (whatif_spec.empty())
                {
                    r = xwarp::measure(mo, &observer, [] { return g_signal != 0; });
                }
                else
                {
                    auto request = xwarp::parse_whatif_request(whatif_spec, whatif_budget);
                    request.until_settled_max = auto_samples ? max_samples : 0;
                    r = xwarp::measure_with_whatif(mo, request, &observer, [] { return g_signal != 0; });
                }
            }
            catch (const xwarp::unknown_lever& e)
            {
                return fail(xwarp::exit_code::usage, e.what());
            }
            catch (const xwarp::probe_error& e)
            {
                return fail(exit_code_of(e), e.what());
            }
            if (whatif_spec.empty() && !auto_samples)
            {
                xwarp::analyze(r);
            }
            if (!machine_name.empty())
            {
                r.env.host = machine_name;
            }
            if (!json_out.empty())
            {
                if (int rc = write_report_or_fail(json_out, r))
                {
                    return rc;
                }
            }
            if (!trace_out.empty())
            {
                if (int rc = write_json_or_fail(trace_out, xwarp::render_trace(r)))
                {
                    return rc;
                }
            }
            if (r.status == "interrupted")
            {
                std::cerr << "warp-probe: interrupted; temporary caches removed\n";
                return 128 + (g_signal ? static_cast<int>(g_signal) : SIGINT);
            }
            xwarp::cli::store_run(history_option, r, whatif_spec.empty() ? "measure" : "whatif", quiet);
            std::cout << xwarp::render_text(r);
            if (!r.result.valid)
            {
                return xwarp::exit_code::all_samples_failed;
            }
            return measure_budget.empty() ? xwarp::exit_code::ok : xwarp::cli::print_budget(r, measure_budget);
        }
        if (*wi)
        {
            xwarp::report saved;
            if (int code = xwarp::cli::load_report_arg(whatif_report, history_option, saved))
            {
                return code;
            }
            // as it was measured (--nvrtc-trace too: it changes the hashes the replays are judged on)
            xwarp::measure_options replay_options = xwarp::rerun_settings(saved);
            if (whatif_samples > 0)
            {
                replay_options.samples = whatif_samples;
            }
            if (whatif_timeout > 0)
            {
                replay_options.timeout_s = whatif_timeout;
            }
            replay_options.shim_dir = xwarp::default_shim_dir();
            xwarp::whatif_request request;
            for (const auto& l : whatif_levers)
            {
                if (l == "auto")
                {
                    request.automatic = true;
                }
                else
                {
                    request.levers.push_back(l);
                }
            }
            request.automatic = request.automatic || request.levers.empty();
            request.reuse_baseline = whatif_reuse_baseline;
            request.until_settled_max = whatif_until_settled ? whatif_max_samples : 0;
            if (whatif_replay_budget > 0)
            {
                request.budget_s = whatif_replay_budget;
            }
            install_signal_handlers();
            progress observer(whatif_quiet);
            xwarp::report r;
            try
            {
                r = xwarp::replay_saved(saved, replay_options, request, &observer, [] { return g_signal != 0; });
            }
            catch (const xwarp::unknown_lever& e)
            {
                return fail(xwarp::exit_code::usage, e.what());
            }
            catch (const xwarp::probe_error& e)
            {
                return fail(exit_code_of(e), e.what());
            }
            if (!whatif_json.empty())
            {
                if (int rc = write_report_or_fail(whatif_json, r))
                {
                    return rc;
                }
            }
            if (r.status == "interrupted")
            {
                std::cerr << "warp-probe: interrupted; temporary caches removed\n";
                return 128 + (g_signal ? static_cast<int>(g_signal) : SIGINT);
            }
            xwarp::cli::store_run(history_option, r, "whatif", whatif_quiet);
            std::cout << xwarp::render_whatif_text(r);
            return xwarp::exit_code::ok;
        }
        if (*mech)
        {
            if (mechanisms_json)
            {
                std::cout << nlohmann::json{{"mechanisms", xwarp::mechanisms_to_json()}, {"levers", xwarp::levers_to_json()}}.dump(2)
                          << "\n";
                return xwarp::exit_code::ok;
            }
            std::cout << "Mechanisms (references/mechanisms.md has a section for each)\n";
            for (const auto& m : xwarp::mechanism_registry())
            {
                std::string id = m.id;
                id.resize(std::max<std::size_t>(id.size() + 1, 21), ' ');
                std::string kind = m.kind;
                kind.resize(10, ' ');
                std::string lever = m.lever.empty() ? "-" : m.lever;
                lever.resize(std::max<std::size_t>(lever.size() + 1, 22), ' ');
                std::cout << "  " << id << kind << lever << m.title << "\n";
            }
            std::cout << "\nA lever is what `--whatif` would apply at run time; '-' has none:\n";
            for (const auto& m : xwarp::mechanism_registry())
            {
                if (m.lever.empty())
                {
                    std::cout << "  " << m.id << ": " << m.no_lever << "\n";
                }
            }
            return xwarp::exit_code::ok;
        }
        if (*doc)
        {
            auto d = xwarp::run_doctor(doctor_python, xwarp::default_shim_dir());
            if (!doctor_json.empty())
            {
                if (int rc = write_json_or_fail(doctor_json, xwarp::doctor_to_json(d)))
                {
                    return rc;
                }
            }
            std::cout << xwarp::render_doctor_text(d);
            return xwarp::exit_code::ok;
        }
        if (*cmp)
        {
            xwarp::report before;
            xwarp::report after;
            xwarp::comparison c;
            // each side's id in the history, once stored
            std::optional<std::int64_t> before_id;
            std::optional<std::int64_t> after_id;
            try
            {
                if (cmp_until_settled)
                {
                    if (int code = xwarp::cli::load_report_arg(cmp_before, history_option, before))
                    {
                        return code;
                    }
                    if (int code = xwarp::cli::load_report_arg(cmp_after, history_option, after))
                    {
                        return code;
                    }
                    auto before_options = xwarp::rerun_options(before, "the before report (" + cmp_before + ")");
                    auto after_options = xwarp::rerun_options(after, "the after report (" + cmp_after + ")");
                    before_options.shim_dir = after_options.shim_dir = xwarp::default_shim_dir();
                    install_signal_handlers();
                    progress observer(cmp_quiet);
                    c = xwarp::compare_until_settled(before, after, before_options, after_options, cmp_max_samples,
                                                     cmp_before, cmp_after, &observer, [] { return g_signal != 0; });
                    if (c.until_settled && c.until_settled->stopped_because == "interrupted")
                    {
                        std::cerr << "warp-probe: interrupted; temporary caches removed\n";
                        return 128 + (g_signal ? static_cast<int>(g_signal) : SIGINT);
                    }
                    // both sides, with the samples added, go to the history; a side already
                    // stored keeps its id
                    before_id = xwarp::cli::store_run(history_option, before, "compare", true);
                    after_id = xwarp::cli::store_run(history_option, after, "compare", true);
                }
                else
                {
                    // One report at a time. With the history on, each side is first read,
                    // analysed, stored (a side already stored keeps its id) and dropped; the
                    // comparison then reads each side again for its figures only, as with the
                    // history off, keeping the first only as far as it reads it while the second
                    // is read. An analysed side kept beside the other was what put compare over
                    // 4 x a 10k file. Standard input or a pipe can be read once only: then each
                    // side is analysed, stored and kept as far as the comparison reads it.
                    const bool stored = !xwarp::locate_history(history_option).off;
                    xwarp::keep_large_blocks_mapped();  // the second side's records, after the first's are freed
                    const auto before_stamp = xwarp::cli::stamp_report_arg(cmp_before);
                    const auto after_stamp = xwarp::cli::stamp_report_arg(cmp_after);
                    const bool stored_first = stored && before_stamp && after_stamp;
                    // Analysed whole and stored, or its figures only: all a comparison reads of
                    // a side (its findings are made only for the report the history keeps).
                    const auto analyse_side = [&](const std::string& arg, xwarp::report& side, bool to_store,
                                                  std::optional<std::int64_t>& id)
                    {
                        if (to_store)
                        {
                            xwarp::analyze(side);
                        }
                        else
                        {
                            xwarp::summarize_figures(side, xwarp::summary_scope::figures);
                        }
                        xwarp::require_comparable(side, arg);
                        if (to_store)
                        {
                            id = xwarp::cli::store_run(history_option, side, "compare", true);
                        }
                    };
                    if (stored_first)
                    {
                        for (auto [arg, id] : {std::pair(&cmp_before, &before_id), std::pair(&cmp_after, &after_id)})
                        {
                            xwarp::report side;
                            if (int code = xwarp::cli::load_report_arg(*arg, history_option, side))
                            {
                                return code;
                            }
                            analyse_side(*arg, side, true, *id);
                            side = xwarp::report{};  // dropped, and its pages handed back before the next is read
                            xwarp::give_back_freed_pages();
                        }
                    }
                    const auto take_side = [&](const std::string& arg, const std::optional<xwarp::file_stamp>& stamp,
                                               xwarp::report& side, std::optional<std::int64_t>& id) -> int
                    {
                        if (int code = xwarp::cli::load_report_arg(arg, history_option, side))
                        {
                            return code;
                        }
                        if (stored_first && xwarp::cli::stamp_report_arg(arg) != stamp)
                        {
                            return fail(xwarp::exit_code::bad_input,
                                        arg + ": changed between compare's two readings of it; run compare again");
                        }
                        analyse_side(arg, side, stored && !stored_first, id);
                        xwarp::keep_what_compare_reads(side);  // the page shows its figures only
                        return 0;
                    };
                    if (int code = take_side(cmp_before, before_stamp, before, before_id))
                    {
                        return code;
                    }
                    if (int code = take_side(cmp_after, after_stamp, after, after_id))
                    {
                        return code;
                    }
                    c = xwarp::compare_analyzed(before, after, cmp_before, cmp_after);
                }
                c.exit_code = xwarp::exit_code_for(c.verdict);
            }
            catch (const xwarp::compare_input_error& e)
            {
                return fail(xwarp::exit_code::bad_input, e.what());
            }
            catch (const xwarp::probe_error& e)
            {
                return fail(exit_code_of(e), e.what());
            }
            if (!cmp_json.empty())
            {
                if (int rc = write_json_or_fail(cmp_json, xwarp::comparison_to_json(c)))
                {
                    return rc;
                }
            }
            if (before_id && after_id && cmp_html.empty())
            {
                // only the HTML page reads the sides again: the comparison's text and its
                // insert below take their place
                before = xwarp::report{};
                after = xwarp::report{};
            }
            if (before_id && after_id)
            {
                // the text first: a temporary tree would live through the insert, beside SQLite's record
                const std::string comparison_text =
                    xwarp::comparison_to_json(c).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
                xwarp::cli::store_comparison(history_option, *before_id, *after_id, c.verdict, comparison_text);
            }
            if (!cmp_html.empty())
            {
                std::string page = xwarp::html_page("warp-probe compare", xwarp::render_compare_html(c, &before, &after));
                FILE* f = std::fopen(cmp_html.c_str(), "wb");
                if (!f || std::fwrite(page.data(), 1, page.size(), f) != page.size() || std::fclose(f) != 0)
                {
                    return fail(xwarp::exit_code::cannot_write, "cannot write " + cmp_html);
                }
            }
            std::cout << xwarp::render_compare_text(c);
            leave_to_exit(before);
            leave_to_exit(after);
            leave_to_exit(c);
            return c.exit_code;
        }
        if (*rep)
        {
            xwarp::report r;
            std::error_code ec;
            if (std::filesystem::is_directory(report_in, ec))
            {
                // a run recorded with measure --keep-records reads back like a report
                if (!std::filesystem::exists(std::filesystem::path(report_in) / "run.json", ec))
                {
                    return fail(xwarp::exit_code::no_input, report_in + ": is a directory, not a report (nor a run "
                                                                        "recorded with --keep-records)");
                }
                try
                {
                    r = xwarp::load_recorded_run(report_in);
                }
                catch (const std::exception& e)
                {
                    return fail(xwarp::exit_code::bad_input, report_in + ": " + e.what());
                }
            }
            else if (int code = xwarp::cli::load_report_arg(report_in, history_option, r))
            {
                return code;
            }
            xwarp::analyze(r);
            // Streamed: the pretty-printed JSON of a large report is several times its model,
            // and a page or a text held whole was held twice or more as it grew.
            std::optional<xwarp::history_view> history;
            xwarp::guide_sections guide;
            if (report_format == "html")
            {
                guide = xwarp::parse_guide(xwarp::installed_guide_text());
                // The report's series in the history, when there is one: sparklines and its step.
                std::vector<std::string> notes;
                history = xwarp::history_for(xwarp::locate_history(history_option), r, notes);
                for (const auto& n : notes)
                {
                    std::cerr << "warp-probe: " << xwarp::one_line(n) << "\n";
                }
            }
            const auto write = [&](std::ostream& out)
            {
                if (report_format == "json")
                {
                    xwarp::write_report_json(out, r, 2);
                    out << '\n';
                }
                else if (report_format == "text")
                {
                    xwarp::render_text(out, r);
                }
                else if (report_format == "trace")
                {
                    out << xwarp::render_trace(r).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
                }
                else
                {
                    xwarp::write_html_page(out, "warp-probe report " + r.label, [&](std::ostream& page)
                                           { xwarp::render_html(page, r, guide, history ? &*history : nullptr); });
                }
            };
            if (report_out.empty())
            {
                write(std::cout);
                std::cout.flush();
            }
            else
            {
                // beside the file, then renamed over it: a failure leaves the old file whole
                try
                {
                    xwarp::save_streamed(report_out, write);
                }
                catch (const std::system_error& e)
                {
                    return fail(xwarp::exit_code::cannot_write, e.what());
                }
            }
            leave_to_exit(r);
            return xwarp::exit_code::ok;
        }
    }
    catch (const std::exception& e)
    {
        return fail(xwarp::exit_code::software, std::string("internal error: ") + e.what());
    }
    return xwarp::exit_code::usage;
}
