// The warp magics. Each one parses its line with CLI11, calls the engine (runner, analysis,
// renderers) and hands MIME bundles to its host; none knows Python or xeus.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "xwarp/analysis/budget.hpp"
#include "xwarp/analysis/compare.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/analysis/whatif.hpp"
#include "xwarp/fronts/exit_codes.hpp"
#include "xwarp/fronts/options.hpp"
#include "xwarp/history/store.hpp"
#include "xwarp/magics/magics.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/render/budget.hpp"
#include "xwarp/render/history.hpp"
#include "xwarp/render/html.hpp"
#include "xwarp/render/printable.hpp"
#include "xwarp/render/text.hpp"
#include "xwarp/install/layout.hpp"
#include "xwarp/runner/runner.hpp"
#include "xwarp/whatif/adaptive.hpp"
#include "xwarp/whatif/whatif.hpp"
#include "xwarp/os/tempdir.hpp"

namespace xwarp
{
    void magic_registry::add(const std::string& name, std::shared_ptr<line_magic> magic)
    {
        m_line[name] = std::move(magic);
    }

    void magic_registry::add(const std::string& name, std::shared_ptr<cell_magic> magic)
    {
        m_cell[name] = std::move(magic);
    }

    const report* probe_session::find(const std::string& name) const
    {
        for (auto it = history.rbegin(); it != history.rend(); ++it)
        {
            if (it->first == name)
            {
                return &it->second;
            }
        }
        return nullptr;
    }

    void probe_session::store(const std::string& name, const report& r)
    {
        for (auto& [n, rep] : history)
        {
            if (n == name)
            {
                rep = r;
                return;
            }
        }
        history.emplace_back(name, r);
    }

    namespace
    {
        using nlohmann::json;
        using clock = std::chrono::steady_clock;

        json text_bundle(const std::string& text)
        {
            return {{"text/plain", text},
                    {"text/html", "<pre style=\"margin:0;font-family:ui-monospace,monospace;font-size:12px;white-space:pre-wrap;\">"
                                      + html_escape(text) + "</pre>"}};
        }

        // Options every probe magic shares.
        struct probe_options
        {
            std::string samples = "3";        // a number, or "auto" (until the measurement settles)
            int max_samples = default_max_samples;
            double timeout_s = 0.0;
            std::string name;
            std::string compare_with;
            std::string json_path;
            std::string variable;
            bool quiet = false;
            std::vector<std::string> command;  // %warp_probe only
            std::string whatif;                // "auto" or LEVER[,LEVER...]; empty: no replays
            double whatif_budget = 0.0;
            std::string expect;                // a budget (the CI gate's grammar) the run should meet
            bool strict = false;               // an expectation not met is an error reply
            bool nvrtc_trace = false;          // Warp's compile_time_trace on, NVRTC's traces kept
        };

        // Parses a magic's line; --help prints the usage as the magic's output.
        bool parse_line(CLI::App& app, const std::string& line, magic_host& host)
        {
            try
            {
                app.parse(line, false);
                return true;
            }
            catch (const CLI::CallForHelp&)
            {
                host.show(text_bundle(app.help()), "", false);
                return false;
            }
            catch (const CLI::ParseError& e)
            {
                throw magic_error(std::string(e.what()) + "\n\n" + app.help());
            }
        }

        void add_probe_options(CLI::App& app, probe_options& o)
        {
            app.add_option("--samples,-n", o.samples,
                           "samples, each a cold and a warm pass: a number, or auto (until the measurement settles; "
                           "with --whatif, from two a side until each replay's verdict settles; the report says why "
                           "it stopped)")
                ->check(sample_count(1, 1000));
            app.add_option("--max-samples", o.max_samples, "with --samples auto: the most samples it takes (default 10)")
                ->check(whole_number(2, 1000));
            app.add_option("--timeout", o.timeout_s, "seconds a pass may run before its processes are killed")
                ->check(positive_seconds());
            app.add_option("--name", o.name, "name this run (for %warp_compare, --compare, %warp_export)");
            app.add_option("--compare", o.compare_with, "compare with an earlier run (its name or a JSON report path)");
            app.add_option("--json", o.json_path, "also write the JSON report to this path");
            app.add_option("-o,--output", o.variable, "put the report in this variable (dict with _repr_html_)");
            app.add_flag("--quiet,-q", o.quiet, "no live progress and no report display (use with -o or --json)");
            app.add_option("--whatif", o.whatif,
                           "replay levers on the unmodified cell and measure each: auto (the default: the levers of "
                           "the findings) or LEVER[,LEVER...]")
                ->expected(0, 1)
                ->default_str("auto");
            app.add_option("--whatif-budget", o.whatif_budget, "seconds of replays allowed (default: 6 x one cold run)")
                ->check(positive_seconds());
            app.add_option("--expect", o.expect,
                           "what the run should meet, as warp-probe's --budget: LIMIT[,LIMIT...], e.g. "
                           "'identities<=1,builds-per-module<=1'; shows met or not met under the report");
            app.add_flag("--strict", o.strict, "with --expect: an expectation not met fails the cell (an error reply)");
            app.add_flag("--nvrtc-trace", o.nvrtc_trace,
                         "turn Warp's compile_time_trace on (CUDA builds through NVRTC, CUDA 12.8+) and keep NVRTC's "
                         "per-module traces (in the JSON and in warp-probe report --format trace)");
        }

        // Live progress, updated in place under one display id.
        class progress_display : public run_observer
        {
        public:
            progress_display(magic_host& host, bool quiet) : m_host(host), m_quiet(quiet)
            {
                static int counter = 0;
                m_id = "xwarp-progress-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
                m_provisional_id = "xwarp-provisional-" + std::to_string(::getpid()) + "-" + std::to_string(counter);
                m_t0 = clock::now();
            }

            void pass_started(int sample, int samples, const std::string& phase) override
            {
                publish("warp-probe: sample " + std::to_string(sample) + "/" + std::to_string(samples) + ", " + phase
                        + " pass starting");
            }

            void pass_running(int sample, int samples, const std::string& phase, double elapsed_ms) override
            {
                auto now = clock::now();
                if (now - m_last < std::chrono::milliseconds(500))
                {
                    return;
                }
                publish("warp-probe: sample " + std::to_string(sample) + "/" + std::to_string(samples) + ", " + phase
                        + " pass, " + format_ms(elapsed_ms));
            }

            void pass_finished(int sample, int samples, const std::string& phase, const run_result& pass) override
            {
                int compiled = 0;
                for (const auto& l : pass.module_loads)
                {
                    compiled += l.status == load_status::compiled;
                }
                publish("warp-probe: sample " + std::to_string(sample) + "/" + std::to_string(samples) + ", " + phase
                        + " pass " + one_line(describe_failure(pass, std::nullopt)) + " in " + format_ms(pass.wall_ms) + ", "
                        + std::to_string(compiled) + " module build(s)");
            }

            void finish(const std::string& text)
            {
                publish(text);
            }

            // After each sample but the last, the findings so far, marked provisional, in one
            // display that each sample updates; the final report replaces it.
            void sample_finished(int sample, int samples, const report& so_far) override
            {
                if (m_quiet)
                {
                    return;
                }
                report r = so_far;
                analyze(r);
                const std::string banner = "provisional: " + std::to_string(sample) + " of " + std::to_string(samples)
                                           + " samples; the report follows when the last one ends";
                m_host.show({{"text/html", "<div data-xwarp=\"provisional\" style=\"opacity:0.8;\"><div style=\"font-weight:600;\">"
                                               + html_escape(banner) + "</div>" + render_html(r) + "</div>"},
                             {"text/plain", banner + "\n" + render_text(r)}},
                            m_provisional_id,
                            m_provisional_shown);
                m_provisional_shown = true;
            }

            // Where the final report goes: over the provisional one when there was one.
            std::pair<std::string, bool> report_display() const
            {
                return {m_provisional_shown ? m_provisional_id : std::string(), m_provisional_shown};
            }

        private:
            void publish(const std::string& text)
            {
                if (m_quiet)
                {
                    return;
                }
                m_host.show(text_bundle(text), m_id, m_shown);
                m_shown = true;
                m_last = clock::now();
            }

            magic_host& m_host;
            bool m_quiet;
            bool m_shown = false;
            std::string m_id;
            std::string m_provisional_id;
            bool m_provisional_shown = false;
            clock::time_point m_t0;
            clock::time_point m_last{};
        };

        // A run by what the user calls it: a run of this session by name, a stored run (@17),
        // the newest stored run with that label (names outlive a kernel restart that way), or a
        // JSON report path. `who` prefixes the error.
        report resolve_run(const probe_session& session, const std::string& what, const std::string& who)
        {
            if (const report* r = session.find(what))
            {
                return *r;
            }
            const history_location where = locate_history(session.history_option);
            std::error_code ec;
            const bool have_store = !where.off && std::filesystem::exists(where.path, ec);
            std::vector<std::string> notes;
            if (const auto id = parse_history_ref(what))
            {
                if (!have_store)
                {
                    throw magic_error(who + ": " + what + ": there is no history store"
                                      + (where.off ? " (it is off)" : " at " + where.path));
                }
                try
                {
                    history_store store(where.path, &notes);
                    return report_from_text(store.report_json(*id));
                }
                catch (const std::exception& e)
                {
                    throw magic_error(who + ": " + e.what());
                }
            }
            if (have_store)
            {
                try
                {
                    history_store store(where.path, &notes);
                    history_filter f;
                    f.label = what;
                    f.limit = 1;
                    if (const auto runs = store.runs(f); !runs.empty())
                    {
                        return report_from_text(store.report_json(runs.front().id));
                    }
                }
                catch (const std::exception&)
                {
                    // an unreadable store: the name may still be a path
                }
            }
            try
            {
                return load_report(what);
            }
            catch (const report_error& e)
            {
                throw magic_error(who + ": '" + what + "' is not a run of this notebook or of the history (see "
                                  "%warp_history), and " + e.what());
            }
        }

        std::string run_name(probe_session& s, const std::string& requested)
        {
            return requested.empty() ? "probe-" + std::to_string(s.runs) : requested;
        }

        // Findings point into the temporary script: point them at the notebook instead.
        void relabel_cell_locations(report& r, const std::string& script, int setup_lines)
        {
            auto fix = [&](std::optional<std::string>& file, std::optional<int>& line)
            {
                if (!file || *file != script || !line)
                {
                    return;
                }
                if (*line <= setup_lines + 1)
                {
                    file = "<%%warp_setup>";
                    *line -= 1;
                }
                else
                {
                    file = "<cell>";
                    *line -= setup_lines + 2;
                }
            };
            for (auto& s : r.samples)
            {
                for (auto* run : {&s.cold, s.warm ? &*s.warm : nullptr})
                {
                    if (!run)
                    {
                        continue;
                    }
                    for (auto& p : run->processes)
                    {
                        for (auto& e : p.dirty_events)
                        {
                            fix(e.file, e.line);
                            if (e.detail.contains("called_from") && e.detail["called_from"].value("file", "") == script)
                            {
                                std::optional<std::string> f = script;
                                std::optional<int> l = e.detail["called_from"].value("line", 0);
                                fix(f, l);
                                e.detail["called_from"] = {{"file", *f}, {"line", *l}};
                            }
                        }
                        for (auto& e : p.config_sets)
                        {
                            fix(e.file, e.line);
                        }
                        for (auto& e : p.modules_created)
                        {
                            fix(e.file, e.line);
                        }
                        for (auto& e : p.calls)
                        {
                            fix(e.file, e.line);
                        }
                    }
                }
            }
        }

        // The probed cell as a script: the %%warp_setup code, then the cell. Returns the script's
        // path and how many lines the setup code took (to point findings back at the cell).
        std::pair<std::string, int> write_cell_script(const scoped_temp_dir& tmp, const std::string& setup, const std::string& cell)
        {
            const std::string script = tmp.path() + "/cell.py";
            const int setup_lines = setup.empty() ? 0 : static_cast<int>(std::count(setup.begin(), setup.end(), '\n')) + 1;
            std::ofstream out(script);
            out << "# %%warp_setup\n" << setup << (setup.empty() || setup.back() == '\n' ? "" : "\n")
                << "# %%warp_probe cell\n" << cell << "\n";
            if (!out)
            {
                throw magic_error("%%warp_probe: cannot write the cell script");
            }
            return {script, setup_lines};
        }

        // The command that runs a cell script with the kernel's Python; a notebook imports from
        // its own folder, and so does the probed cell.
        measure_options cell_command(const std::string& script, magic_host& host)
        {
            measure_options mo;
            mo.command = {host.python_executable(), script};
            const char* inherited = std::getenv("PYTHONPATH");
            mo.extra_env["PYTHONPATH"] = host.working_directory() + (inherited && *inherited ? std::string(":") + inherited : "");
            return mo;
        }

        // What re-runs a stored run: its cell (setup and cell code, written to a temporary script
        // again) or its command, in its folder, with its timeout.
        struct rerun
        {
            std::unique_ptr<scoped_temp_dir> tmp;
            measure_options options;
            std::string script;  // the cell's script, when it was a cell
            int setup_lines = 0;

            // Findings of the new samples point into the new script: point them at the notebook.
            void relabel(report& r) const
            {
                if (!script.empty())
                {
                    relabel_cell_locations(r, script, setup_lines);
                }
            }
        };

        rerun rerun_of(const report& found, const std::string& name, const probe_session& session, magic_host& host)
        {
            rerun out;
            out.options = rerun_settings(found);
            if (found.cell_code)
            {
                out.tmp = std::make_unique<scoped_temp_dir>("xwarp-cell-");
                std::tie(out.script, out.setup_lines) =
                    write_cell_script(*out.tmp, found.setup_code.value_or(""), *found.cell_code);
                const measure_options cell = cell_command(out.script, host);
                out.options.command = cell.command;
                out.options.extra_env = cell.extra_env;
            }
            out.options.cwd = found.cwd.empty() ? host.working_directory() : found.cwd;
            out.options.shim_dir = session.shim_dir.empty() ? default_shim_dir() : session.shim_dir;
            out.options.label = name;
            return out;
        }

        // Runs a probe, stores it, and shows the report (and a comparison if asked).
        void run_and_show(measure_options mo,
                          const probe_options& o,
                          probe_session& session,
                          magic_host& host,
                          const std::function<void(report&)>& finish_report)
        {
            const bool auto_samples = o.samples == "auto";
            session.runs++;
            mo.samples = auto_samples ? o.max_samples : std::stoi(o.samples);
            mo.nvrtc_trace = o.nvrtc_trace;
            if (o.timeout_s > 0)
            {
                mo.timeout_s = o.timeout_s;
            }
            mo.shim_dir = session.shim_dir.empty() ? default_shim_dir() : session.shim_dir;
            mo.cwd = host.working_directory();
            const std::string name = run_name(session, o.name);
            mo.label = name;

            // A bad --expect is a usage error before anything runs.
            std::vector<budget_limit> expected;
            if (o.strict && o.expect.empty())
            {
                throw magic_error("--strict needs --expect (what the run should meet)");
            }
            if (!o.expect.empty())
            {
                try
                {
                    expected = parse_budget(o.expect);
                }
                catch (const budget_error& e)
                {
                    throw magic_error(std::string("--expect: ") + e.what());
                }
            }

            // Resolve the comparison baseline first: a wrong name should not cost a probe.
            std::optional<report> baseline;
            if (!o.compare_with.empty())
            {
                baseline = resolve_run(session, o.compare_with, "--compare");
            }

            progress_display progress(host, o.quiet);
            report r;
            try
            {
                if (auto_samples && o.whatif.empty())
                {
                    r = measure_until_settled(mo, o.max_samples, &progress, [&] { return host.interrupt_requested(); });
                }
                else if (o.whatif.empty())
                {
                    r = measure(mo, &progress, [&] { return host.interrupt_requested(); });
                }
                else
                {
                    auto request = parse_whatif_request(o.whatif, o.whatif_budget);
                    request.until_settled_max = auto_samples ? o.max_samples : 0;
                    r = measure_with_whatif(mo, request, &progress, [&] { return host.interrupt_requested(); });
                }
            }
            catch (const probe_error& e)
            {
                throw magic_error(e.what());
            }
            catch (const unknown_lever& e)
            {
                throw magic_error(std::string("--whatif: ") + e.what());
            }
            if (r.status == "interrupted")
            {
                progress.finish("warp-probe: interrupted; its processes were killed and its temporary files removed");
                throw magic_interrupted("warp-probe interrupted");
            }
            finish_report(r);
            analyze(r);
            session.store(name, r);
            // Into the history store (it outlives the kernel), and the run's series back out of
            // it for the report's sparklines.
            const history_location where = locate_history(session.history_option);
            std::vector<std::string> notes;
            const auto stored = remember_run(where, r, "magic", notes);
            const auto history = history_for(where, r, notes);
            std::string done = "warp-probe: " + name + " done, " + std::to_string(r.result.samples_ok) + "/"
                               + std::to_string(r.result.samples_total) + " samples ok"
                               + (stored ? ", stored as @" + std::to_string(*stored) : std::string());
            for (const auto& n : notes)
            {
                done += "\nwarp-probe: " + n;
            }
            progress.finish(done);

            const json report_json = report_to_json(r);
            if (!o.json_path.empty())
            {
                try
                {
                    save_json(o.json_path, report_json);
                }
                catch (const std::exception& e)
                {
                    throw magic_error(std::string("--json: ") + e.what());
                }
            }
            const std::string html = render_html(r, parse_guide(session.guide_text), history ? &*history : nullptr);
            if (!o.variable.empty())
            {
                host.bind_variable(o.variable, report_json, html);
            }
            // --quiet hides a report, never a failure.
            if (!o.quiet || r.status != "ok" || !r.result.valid)
            {
                const auto [display_id, update] = progress.report_display();
                host.show({{"text/html", html}, {"text/plain", render_text(r)}, {report_mime, report_json}}, display_id, update);
            }
            std::string not_met;
            if (!expected.empty())
            {
                const auto results = check_budget(r, expected);
                host.show({{"text/html", render_budget_html(results, "Expectation")},
                           {"text/plain", render_budget_text(results, "Expectation")},
                           {expectation_mime, json{{"met", !budget_exceeded(results)}, {"expect", o.expect}}}},
                          "",
                          false);
                for (const auto& b : results)
                {
                    if (b.exceeded && not_met.empty())
                    {
                        not_met = b.message;
                    }
                }
            }
            if (baseline)
            {
                try
                {
                    report b = *baseline;
                    comparison c = compare_reports(b, r, o.compare_with, name);
                    c.exit_code = exit_code_for(c.verdict);
                    host.show({{"text/html", render_compare_html(c, &b, &r)},
                               {"text/plain", render_compare_text(c)},
                               {comparison_mime, comparison_to_json(c)}},
                              "",
                              false);
                }
                catch (const compare_input_error& e)
                {
                    throw magic_error(e.what());
                }
            }
            if (o.strict && !not_met.empty())
            {
                throw magic_expectation_not_met("expectation not met: " + not_met);
            }
        }

        class warp_probe_cell : public cell_magic
        {
        public:
            explicit warp_probe_cell(std::shared_ptr<probe_session> s) : m_session(std::move(s)) {}

            void run(const std::string& line, const std::string& cell, magic_host& host) override
            {
                probe_options o;
                CLI::App app("%%warp_probe [options]: probe this cell (after the %%warp_setup code) in fresh "
                             "processes, cold then warm on private Warp and CUDA caches",
                             "%%warp_probe");
                add_probe_options(app, o);
                if (!parse_line(app, line, host))
                {
                    return;
                }
                if (cell.find_first_not_of(" \t\r\n") == std::string::npos)
                {
                    throw magic_error("%%warp_probe: the cell is empty; put the code to probe below the magic line");
                }
                // The script lives in a private temporary folder, never in the notebook's.
                scoped_temp_dir tmp("xwarp-cell-");
                const std::string setup = m_session->setup_code;
                const auto [script, setup_lines] = write_cell_script(tmp, setup, cell);
                measure_options mo = cell_command(script, host);
                run_and_show(mo,
                             o,
                             *m_session,
                             host,
                             [&](report& r)
                             {
                                 relabel_cell_locations(r, script, setup_lines);
                                 r.command = {"python", "<cell>"};
                                 r.cell_code = cell;
                                 if (!setup.empty())
                                 {
                                     r.setup_code = setup;
                                 }
                             });
            }

        private:
            std::shared_ptr<probe_session> m_session;
        };

        class warp_probe_line : public line_magic
        {
        public:
            explicit warp_probe_line(std::shared_ptr<probe_session> s) : m_session(std::move(s)) {}

            void run(const std::string& line, magic_host& host) override
            {
                probe_options o;
                CLI::App app("%warp_probe [options] -- COMMAND...: probe an external command, as warp-probe measure "
                             "does (run in the notebook's folder)",
                             "%warp_probe");
                add_probe_options(app, o);
                app.add_option("command", o.command, "the command, after --");
                if (!parse_line(app, line, host))
                {
                    return;
                }
                if (o.command.empty())
                {
                    throw magic_error("%warp_probe: no command; use %warp_probe [options] -- COMMAND ... (or the cell "
                                      "magic %%warp_probe to probe a cell)");
                }
                measure_options mo;
                mo.command = o.command;
                run_and_show(mo, o, *m_session, host, [](report&) {});
            }

        private:
            std::shared_ptr<probe_session> m_session;
        };

        class warp_setup_cell : public cell_magic
        {
        public:
            explicit warp_setup_cell(std::shared_ptr<probe_session> s) : m_session(std::move(s)) {}

            void run(const std::string& line, const std::string& cell, magic_host& host) override
            {
                bool append = false;
                bool clear = false;
                CLI::App app("%%warp_setup [--append] [--clear]: code every later %%warp_probe cell runs first "
                             "(imports, data); it does not run here",
                             "%%warp_setup");
                app.add_flag("--append", append, "add to the stored setup instead of replacing it");
                app.add_flag("--clear", clear, "forget the stored setup");
                if (!parse_line(app, line, host))
                {
                    return;
                }
                if (clear)
                {
                    m_session->setup_code.clear();
                    host.show(text_bundle("warp_setup cleared"), "", false);
                    return;
                }
                std::string code = cell;
                while (!code.empty() && (code.back() == '\n' || code.back() == ' '))
                {
                    code.pop_back();
                }
                m_session->setup_code = append && !m_session->setup_code.empty() ? m_session->setup_code + "\n" + code : code;
                const auto lines = std::count(m_session->setup_code.begin(), m_session->setup_code.end(), '\n') + 1;
                host.show(text_bundle("warp_setup stored (" + std::to_string(lines)
                                      + " lines): every %%warp_probe cell runs it first"),
                          "",
                          false);
            }

        private:
            std::shared_ptr<probe_session> m_session;
        };

        class warp_compare_line : public line_magic
        {
        public:
            explicit warp_compare_line(std::shared_ptr<probe_session> s) : m_session(std::move(s)) {}

            void run(const std::string& line, magic_host& host) override
            {
                std::string a;
                std::string b;
                std::string json_path;
                CLI::App app("%warp_compare BEFORE AFTER: compare two runs (names from this notebook, stored runs "
                             "@ID, labels of stored runs, or JSON report paths)",
                             "%warp_compare");
                app.add_option("before", a, "the baseline run")->required();
                app.add_option("after", b, "the run after the change")->required();
                app.add_option("--json", json_path, "also write the comparison as JSON");
                bool until_settled = false;
                int max_samples = default_max_samples;
                app.add_flag("--until-settled", until_settled,
                             "re-run both runs (their cells, or commands), one sample a side at a time, until the "
                             "verdict is settled or each side has --max-samples; the runs of this notebook keep "
                             "the added samples");
                app.add_option("--max-samples", max_samples, "with --until-settled: the most samples a side (default 10)")
                    ->check(whole_number(2, 1000));
                if (!parse_line(app, line, host))
                {
                    return;
                }
                report before = resolve_run(*m_session, a, "%warp_compare");
                report after = resolve_run(*m_session, b, "%warp_compare");
                comparison c;
                try
                {
                    if (until_settled)
                    {
                        rerun before_again = rerun_of(before, a, *m_session, host);
                        rerun after_again = rerun_of(after, b, *m_session, host);
                        progress_display progress(host, false);
                        c = compare_until_settled(before, after, before_again.options, after_again.options,
                                                  max_samples, a, b, &progress,
                                                  [&] { return host.interrupt_requested(); });
                        if (c.until_settled && c.until_settled->stopped_because == "interrupted")
                        {
                            progress.finish("warp-probe: interrupted; its processes were killed and its temporary "
                                            "files removed");
                            throw magic_interrupted("warp-probe interrupted");
                        }
                        progress.finish("warp-probe: " + c.until_settled->stopped_because);
                        const auto settled = c.until_settled;
                        before_again.relabel(before);
                        after_again.relabel(after);
                        c = compare_reports(before, after, a, b);  // with the locations pointing at the notebook
                        c.until_settled = settled;
                        if (m_session->find(a))
                        {
                            m_session->store(a, before);
                        }
                        if (m_session->find(b))
                        {
                            m_session->store(b, after);
                        }
                    }
                    else
                    {
                        c = compare_reports(before, after, a, b);
                    }
                    c.exit_code = exit_code_for(c.verdict);
                }
                catch (const compare_input_error& e)
                {
                    throw magic_error(e.what());
                }
                catch (const probe_error& e)
                {
                    throw magic_error(std::string("%warp_compare: ") + e.what());
                }
                if (!json_path.empty())
                {
                    try
                    {
                        save_json(json_path, comparison_to_json(c));
                    }
                    catch (const std::exception& e)
                    {
                        throw magic_error(std::string("--json: ") + e.what());
                    }
                }
                host.show({{"text/html", render_compare_html(c, &before, &after)},
                           {"text/plain", render_compare_text(c)},
                           {comparison_mime, comparison_to_json(c)}},
                          "",
                          false);
            }

        private:
            std::shared_ptr<probe_session> m_session;
        };

        // %warp_whatif NAME [LEVER...]: the levers replayed on a run of this notebook (its cell, or
        // its command), against fresh baseline samples interleaved with them.
        class warp_whatif_line : public line_magic
        {
        public:
            explicit warp_whatif_line(std::shared_ptr<probe_session> s) : m_session(std::move(s)) {}

            void run(const std::string& line, magic_host& host) override
            {
                std::string name;
                std::vector<std::string> levers;
                int samples = 0;
                double budget = 0.0;
                CLI::App app("%warp_whatif NAME [LEVER...]: replay levers on a run of this notebook, unmodified, and "
                             "measure each (default: auto, the levers of its findings)",
                             "%warp_whatif");
                app.add_option("name", name, "the run (see %warp_history)")->required();
                app.add_option("levers", levers, "levers to replay, or auto");
                app.add_option("--samples,-n", samples, "samples a side (default: the run's)")->check(whole_number(1, 1000));
                app.add_option("--budget", budget, "seconds of replays allowed (default: 6 x one cold run)")
                    ->check(positive_seconds());
                bool reuse_baseline = false;
                app.add_flag("--reuse-baseline", reuse_baseline,
                             "judge the replays against the run's own samples, not fresh baseline samples (half the "
                             "runs; the machine may have changed since the run was probed)");
                bool until_settled = false;
                int max_samples = default_max_samples;
                app.add_flag("--until-settled", until_settled,
                             "after --samples a side, add a baseline sample and one of each lever whose verdict could "
                             "still change, round by round, until every verdict settled, --max-samples or the budget");
                app.add_option("--max-samples", max_samples, "with --until-settled: the most samples a side (default 10)")
                    ->check(whole_number(2, 1000));
                if (!parse_line(app, line, host))
                {
                    return;
                }
                const report* found = m_session->find(name);
                if (!found)
                {
                    throw magic_error("%warp_whatif: no run named '" + name + "' (see %warp_history)");
                }
                std::string spec;
                for (const auto& l : levers)
                {
                    spec += (spec.empty() ? "" : ",") + l;
                }
                whatif_request request = parse_whatif_request(spec.empty() ? "auto" : spec, budget);
                request.reuse_baseline = reuse_baseline;
                request.until_settled_max = until_settled ? max_samples : 0;
                rerun again = rerun_of(*found, name, *m_session, host);
                measure_options& mo = again.options;
                if (samples > 0)
                {
                    mo.samples = samples;
                }
                progress_display progress(host, false);
                report r;
                try
                {
                    r = replay_saved(*found, mo, request, &progress, [&] { return host.interrupt_requested(); });
                }
                catch (const probe_error& e)
                {
                    throw magic_error(std::string("%warp_whatif: ") + e.what());
                }
                catch (const unknown_lever& e)
                {
                    throw magic_error(std::string("%warp_whatif: ") + e.what());
                }
                if (r.status == "interrupted")
                {
                    progress.finish("warp-probe: interrupted; its processes were killed and its temporary files removed");
                    throw magic_interrupted("warp-probe interrupted");
                }
                if (found->cell_code)
                {
                    again.relabel(r);
                    analyze(r);
                }
                m_session->store(name, r);
                std::vector<std::string> notes;
                const auto stored = remember_run(locate_history(m_session->history_option), r, "whatif", notes);
                std::string done = "warp-probe: " + std::to_string(r.whatif.size()) + " lever(s) of " + name + " replayed"
                                   + (stored ? ", stored as @" + std::to_string(*stored) : std::string());
                for (const auto& n : notes)
                {
                    done += "\nwarp-probe: " + n;
                }
                progress.finish(done);
                host.show({{"text/html", render_html(r, parse_guide(m_session->guide_text))},
                           {"text/plain", render_whatif_text(r)},
                           {report_mime, report_to_json(r)}},
                          "",
                          false);
            }

        private:
            std::shared_ptr<probe_session> m_session;
        };

        class warp_history_line : public line_magic
        {
        public:
            explicit warp_history_line(std::shared_ptr<probe_session> s) : m_session(std::move(s)) {}

            void run(const std::string& line, magic_host& host) override
            {
                CLI::App app("%warp_history: the runs in the history store, newest first (they outlive the kernel; "
                             "@ID names one for %warp_compare), or --session: this kernel's runs only",
                             "%warp_history");
                history_filter filter;
                bool session_only = false;
                app.add_option("--label", filter.label, "only runs with this label (a probe's --name)");
                app.add_option("--command", filter.command, "only runs whose command contains this text");
                app.add_option("--kind", filter.kind, "only runs of this kind: magic, measure, whatif, compare, import");
                app.add_option("--limit", filter.limit, "at most this many (0: all)")->check(CLI::Range(0, 1000000));
                app.add_flag("--session", session_only, "this kernel's runs, oldest first, with their top finding");
                if (!parse_line(app, line, host))
                {
                    return;
                }
                const history_location where = locate_history(m_session->history_option);
                std::error_code ec;
                if (!session_only && !where.off && std::filesystem::exists(where.path, ec))
                {
                    std::vector<std::string> notes;
                    try
                    {
                        history_store store(where.path, &notes);
                        const auto runs = store.runs(filter);
                        host.show({{"text/html", render_history_list_html(runs, store.path())},
                                   {"text/plain", render_history_list(runs, store.path())}},
                                  "",
                                  false);
                        return;
                    }
                    catch (const std::exception& e)
                    {
                        throw magic_error(std::string("%warp_history: ") + e.what());
                    }
                }
                std::ostringstream text;
                std::ostringstream html;
                html << "<table data-xwarp=\"history\" style=\"border-collapse:collapse;font-size:13px;\"><thead><tr>";
                for (const char* h : {"name", "created", "samples ok", "cold wall", "compile elapsed", "identities", "top finding"})
                {
                    html << "<th style=\"text-align:left;padding:2px 10px 2px 0;border-bottom:1px solid rgba(128,128,128,0.5);\">"
                         << h << "</th>";
                }
                html << "</tr></thead><tbody>";
                if (m_session->history.empty())
                {
                    text << "no runs yet: %%warp_probe a cell first\n";
                }
                if (!session_only)
                {
                    text << (where.off ? "the history store is off: this kernel's runs only\n"
                                       : "no history store at " + where.path + " yet: this kernel's runs only\n");
                }
                for (const auto& [name, r] : m_session->history)
                {
                    const auto& s = r.result;
                    std::string top = r.findings.empty() ? "-" : r.findings[0].mechanism + " " + r.findings[0].title;
                    std::vector<std::string> cells = {name,
                                                      r.created_utc,
                                                      std::to_string(s.samples_ok) + "/" + std::to_string(s.samples_total),
                                                      s.cold_wall_ms.median ? format_ms(*s.cold_wall_ms.median) : "n/a",
                                                      s.compile_elapsed_ms.median ? format_ms(*s.compile_elapsed_ms.median) : "n/a",
                                                      s.identity_count.median ? std::to_string(static_cast<int>(*s.identity_count.median)) : "n/a",
                                                      top};
                    html << "<tr>";
                    for (const auto& c : cells)
                    {
                        html << "<td style=\"padding:2px 10px 2px 0;border-bottom:1px solid rgba(128,128,128,0.2);\">"
                             << html_escape(c) << "</td>";
                        text << c << "  ";
                    }
                    html << "</tr>";
                    text << "\n";
                }
                html << "</tbody></table>";
                host.show({{"text/html", html.str()}, {"text/plain", text.str()}}, "", false);
            }

        private:
            std::shared_ptr<probe_session> m_session;
        };

        class warp_export_line : public line_magic
        {
        public:
            explicit warp_export_line(std::shared_ptr<probe_session> s) : m_session(std::move(s)) {}

            void run(const std::string& line, magic_host& host) override
            {
                std::string name;
                std::string path;
                CLI::App app("%warp_export NAME PATH: write a run as a JSON report (or a self-contained HTML page when "
                             "PATH ends in .html)",
                             "%warp_export");
                app.add_option("name", name, "the run's name (see %warp_history)")->required();
                app.add_option("path", path, "where to write it")->required();
                if (!parse_line(app, line, host))
                {
                    return;
                }
                const report* r = m_session->find(name);
                if (!r)
                {
                    throw magic_error("%warp_export: no run named '" + name + "' (see %warp_history)");
                }
                try
                {
                    const bool html = path.size() >= 5 && path.compare(path.size() - 5, 5, ".html") == 0;
                    if (html)
                    {
                        std::string page = html_page("warp-probe " + name, render_html(*r, parse_guide(m_session->guide_text)));
                        std::ofstream out(path, std::ios::binary | std::ios::trunc);
                        out << page;
                        if (!out.flush())
                        {
                            throw std::runtime_error("cannot write " + path);
                        }
                    }
                    else
                    {
                        save_json(path, report_to_json(*r));
                    }
                }
                catch (const std::exception& e)
                {
                    throw magic_error(std::string("%warp_export: ") + e.what());
                }
                host.show(text_bundle("wrote " + name + " to " + path), "", false);
            }

        private:
            std::shared_ptr<probe_session> m_session;
        };
    }

    void register_warp_magics(magic_registry& registry, std::shared_ptr<probe_session> session)
    {
        registry.add("warp_probe", std::static_pointer_cast<cell_magic>(std::make_shared<warp_probe_cell>(session)));
        registry.add("warp_probe", std::static_pointer_cast<line_magic>(std::make_shared<warp_probe_line>(session)));
        registry.add("warp_setup", std::static_pointer_cast<cell_magic>(std::make_shared<warp_setup_cell>(session)));
        registry.add("warp_compare", std::static_pointer_cast<line_magic>(std::make_shared<warp_compare_line>(session)));
        registry.add("warp_history", std::static_pointer_cast<line_magic>(std::make_shared<warp_history_line>(session)));
        registry.add("warp_export", std::static_pointer_cast<line_magic>(std::make_shared<warp_export_line>(session)));
        registry.add("warp_whatif", std::static_pointer_cast<line_magic>(std::make_shared<warp_whatif_line>(session)));
    }
}
