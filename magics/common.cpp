#include "common.hpp"

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "xwarp/analysis/budget.hpp"
#include "xwarp/analysis/compare.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/analysis/whatif.hpp"
#include "xwarp/fronts/exit_codes.hpp"
#include "xwarp/fronts/use_cases.hpp"
#include "xwarp/history/store.hpp"
#include "xwarp/install/layout.hpp"
#include "xwarp/model/format.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/render/budget.hpp"
#include "xwarp/render/html.hpp"
#include "xwarp/render/printable.hpp"
#include "xwarp/render/text.hpp"

namespace xwarp::magic_parts
{
    using nlohmann::json;
    using clock = std::chrono::steady_clock;

    json text_bundle(const std::string& text)
    {
        return {{"text/plain", text}, {"text/html", render_preformatted_html(text)}};
    }

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

    namespace
    {
        std::optional<report> stored_run(const probe_session& session, const std::string& what, const std::string& who)
        {
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
                    history_store store(where.path, &notes, store_access::read);
                    return report_from_text(store.report_json(*id));
                }
                catch (const std::exception& e)
                {
                    throw magic_error(who + ": " + e.what());
                }
            }
            if (!have_store)
            {
                return std::nullopt;
            }
            try
            {
                history_store store(where.path, &notes, store_access::read);
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
            return std::nullopt;
        }
    }

    report resolve_run(const probe_session& session, const std::string& what, const std::string& who)
    {
        if (const report* r = session.find(what))
        {
            return *r;
        }
        if (auto stored = stored_run(session, what, who))
        {
            return std::move(*stored);
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

    namespace
    {
        void relabel_place(std::optional<std::string>& file, std::optional<int>& line, const std::string& script,
                           int setup_lines)
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
        }

        void relabel_process(process_record& p, const std::string& script, int setup_lines)
        {
            const auto fix = [&](std::optional<std::string>& file, std::optional<int>& line)
            { relabel_place(file, line, script, setup_lines); };
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
                for (const char* key : {"default", "called_from"})  // a factory's default, the factory's caller
                {
                    if (e.args.is_object() && e.args.contains(key) && e.args[key].is_object()
                        && e.args[key].value("file", "") == script)
                    {
                        std::optional<std::string> f = script;
                        std::optional<int> l = e.args[key].value("line", 0);
                        fix(f, l);
                        e.args[key]["file"] = *f;
                        e.args[key]["line"] = *l;
                    }
                }
            }
        }
    }

    namespace
    {
        // A place the notebook shows (<cell>, <%%warp_setup>) as the script's line.
        void into_script(std::optional<std::string>& file, std::optional<int>& line, const std::string& script, int setup_lines)
        {
            if (!file || !line)
            {
                return;
            }
            if (*file == "<cell>")
            {
                file = script;
                *line += setup_lines + 2;
            }
            else if (*file == "<%%warp_setup>")
            {
                file = script;
                *line += 1;
            }
            else if (file->find("/xwarp-cell-") != std::string::npos && file->size() > 8
                     && file->compare(file->size() - 8, 8, "/cell.py") == 0)
            {
                file = script;  // a place the shim kept in a call's arguments: the probe's script of the same cell
            }
        }

        // The places a call's arguments hold (a factory's default, the factory's caller).
        void args_into_script(nlohmann::json& args, const std::string& script, int setup_lines)
        {
            for (const char* key : {"default", "called_from"})
            {
                if (!args.is_object() || !args.contains(key) || !args[key].is_object())
                {
                    continue;
                }
                std::optional<std::string> f = args[key].value("file", "");
                std::optional<int> l = args[key].value("line", 0);
                into_script(f, l, script, setup_lines);
                args[key]["file"] = *f;
                args[key]["line"] = *l;
            }
        }
    }

    void unrelabel_cell_locations(report& r, const std::string& script, int setup_lines)
    {
        const auto fix = [&](std::optional<std::string>& file, std::optional<int>& line)
        { into_script(file, line, script, setup_lines); };
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
                        if (e.detail.contains("called_from") && e.detail["called_from"].is_object())
                        {
                            std::optional<std::string> f = e.detail["called_from"].value("file", "");
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
                        args_into_script(e.args, script, setup_lines);
                    }
                    if (!p.argv.empty())
                    {
                        p.argv[0] = script;
                    }
                }
            }
        }
    }

    void relabel_cell_locations(report& r, const std::string& script, int setup_lines)
    {
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
                    relabel_process(p, script, setup_lines);
                }
            }
        }
    }

    std::pair<std::string, int> write_cell_script(const scoped_temp_dir& tmp, const std::string& setup,
                                                  const std::string& cell)
    {
        const std::string script = tmp.path() + "/cell.py";
        const int setup_lines = setup.empty() ? 0 : static_cast<int>(std::count(setup.begin(), setup.end(), '\n')) + 1;
        std::ofstream out(script);
        out << "# %%warp_setup\n" << setup << (setup.empty() || setup.back() == '\n' ? "" : "\n") << "# %%warp_probe cell\n"
            << cell << "\n";
        if (!out)
        {
            throw magic_error("%%warp_probe: cannot write the cell script");
        }
        return {script, setup_lines};
    }

    measure_options cell_command(const std::string& script, magic_host& host)
    {
        measure_options mo;
        mo.command = {host.python_executable(), script};
        mo.extra_env["XWARP_RESULTS"] = "1";  // the arrays the cell leaves, for --expect results=same
        const char* inherited = std::getenv("PYTHONPATH");
        mo.extra_env["PYTHONPATH"] = host.working_directory() + (inherited && *inherited ? std::string(":") + inherited : "");
        return mo;
    }

    void rerun::relabel(report& r) const
    {
        if (!script.empty())
        {
            relabel_cell_locations(r, script, setup_lines);
        }
    }

    rerun rerun_of(const report& found, const std::string& name, const probe_session& session, magic_host& host)
    {
        rerun out;
        out.options = fronts::rerun_settings(found);
        if (found.cell_code)
        {
            out.tmp = std::make_unique<scoped_temp_dir>("xwarp-cell-");
            std::tie(out.script, out.setup_lines) = write_cell_script(*out.tmp, found.setup_code.value_or(""), *found.cell_code);
            const measure_options cell = cell_command(out.script, host);
            out.options.command = cell.command;
            out.options.extra_env = cell.extra_env;
        }
        out.options.cwd = found.cwd.empty() ? host.working_directory() : found.cwd;
        out.options.shim_dir = session.shim_dir.empty() ? default_shim_dir() : session.shim_dir;
        out.options.label = name;
        return out;
    }

    progress_display::progress_display(magic_host& host, bool quiet) : m_host(host), m_quiet(quiet)
    {
        static int counter = 0;
        m_id = "xwarp-progress-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
        m_provisional_id = "xwarp-provisional-" + std::to_string(::getpid()) + "-" + std::to_string(counter);
    }

    void progress_display::pass_started(int sample, int samples, const std::string& phase)
    {
        publish("warp-probe: sample " + std::to_string(sample) + "/" + std::to_string(samples) + ", " + phase
                + " pass starting");
    }

    void progress_display::pass_running(int sample, int samples, const std::string& phase, double elapsed_ms)
    {
        if (clock::now() - m_last < std::chrono::milliseconds(500))
        {
            return;
        }
        publish("warp-probe: sample " + std::to_string(sample) + "/" + std::to_string(samples) + ", " + phase + " pass, "
                + format_ms(elapsed_ms));
    }

    void progress_display::pass_finished(int sample, int samples, const std::string& phase, const run_result& pass)
    {
        int compiled = 0;
        for (const auto& l : pass.module_loads)
        {
            compiled += l.status == load_status::compiled;
        }
        publish("warp-probe: sample " + std::to_string(sample) + "/" + std::to_string(samples) + ", " + phase + " pass "
                + one_line(describe_failure(pass, std::nullopt)) + " in " + format_ms(pass.wall_ms) + ", "
                + std::to_string(compiled) + " module build(s)");
    }

    void progress_display::finish(const std::string& text)
    {
        publish(text);
    }

    void progress_display::sample_finished(int sample, int samples, const report& so_far)
    {
        if (m_quiet)
        {
            return;
        }
        report r = so_far;
        analyze(r);
        const std::string banner = "provisional: " + std::to_string(sample) + " of " + std::to_string(samples)
                                   + " samples; the report follows when the last one ends";
        m_host.show({{"text/html", render_provisional_html(banner, render_html(r))},
                     {"text/plain", banner + "\n" + render_text(r)}},
                    m_provisional_id, m_provisional_shown);
        m_provisional_shown = true;
    }

    std::pair<std::string, bool> progress_display::report_display() const
    {
        return {m_provisional_shown ? m_provisional_id : std::string(), m_provisional_shown};
    }

    void progress_display::publish(const std::string& text)
    {
        if (m_quiet)
        {
            return;
        }
        m_host.show(text_bundle(text), m_id, m_shown);
        m_shown = true;
        m_last = clock::now();
    }

    void interrupted(progress_display& progress)
    {
        progress.finish("warp-probe: interrupted; its processes were killed and its temporary files removed");
        throw magic_interrupted("warp-probe interrupted");
    }

    void add_probe_magic_options(CLI::App& app, probe_magic_options& o)
    {
        add_probe_options(app, o.request, front::notebook);
        app.add_option("--name", o.name, "name this run (for %warp_compare, --compare, %warp_export)");
        app.add_option("--compare", o.compare_with, "compare with an earlier run (its name or a JSON report path)");
        app.add_option("--json", o.json_path, "also write the JSON report to this path");
        app.add_option("-o,--output", o.variable, "put the report in this variable (dict with _repr_html_)");
        app.add_flag("--quiet,-q", o.quiet, "no live progress and no report display (use with -o or --json)");
        app.add_option("--expect", o.expect,
                       "what the run should meet, as warp-probe's --budget: LIMIT[,LIMIT...], e.g. "
                       "'identities<=1,builds-per-module<=1'; shows met or not met under the report. With --compare "
                       "RUN, workload=same also requires the launches RUN made (compare's launch gate): an answer "
                       "that deletes work is not met");
        app.add_flag("--strict", o.strict, "with --expect: an expectation not met fails the cell (an error reply)");
        app.add_flag("--allow-fail", o.allow_fail,
                     "a program that fails in every sample still replies ok (for a lesson that fails on purpose); "
                     "without it the cell fails after showing the report, as the CLI exits 1");
    }

    namespace
    {
        // A bad --expect is a usage error before anything runs.
        std::vector<budget_limit> expectation_of(const probe_magic_options& o)
        {
            if (o.strict && o.expect.empty())
            {
                throw magic_error("--strict needs --expect (what the run should meet)");
            }
            if (o.expect.empty())
            {
                return {};
            }
            try
            {
                return parse_budget(o.expect);
            }
            catch (const budget_error& e)
            {
                throw magic_error(std::string("--expect: ") + e.what());
            }
        }

        report probed(const measure_options& mo, const probe_magic_options& o, magic_host& host, progress_display& progress)
        {
            try
            {
                report r = fronts::probe(mo, o.request, &progress, [&] { return host.interrupt_requested(); });
                if (r.status == "interrupted")
                {
                    interrupted(progress);
                }
                return r;
            }
            catch (const probe_error& e)
            {
                throw magic_error(e.what());
            }
            catch (const unknown_lever& e)
            {
                throw magic_error(std::string("--whatif: ") + e.what());
            }
        }

        // The expectation's results shown under the report; the first limit not met, or "".
        // workload=same is compare's launch gate against the --compare run.
        std::string show_expectation(const report& r, const std::vector<budget_limit>& expected,
                                     const probe_magic_options& o, const std::string& name,
                                     const std::optional<report>& baseline, magic_host& host)
        {
            std::optional<workload_check> workload;
            if (baseline && needs_compared_run(expected))
            {
                try
                {
                    report before = *baseline;
                    report after = r;
                    workload = compare_reports(before, after, o.compare_with, name).workload;
                }
                catch (const compare_input_error& e)
                {
                    workload.emplace();
                    workload->status = "unverified";
                    workload->reason = e.what();
                }
            }
            const auto results = check_budget(r, expected, {workload ? &*workload : nullptr, baseline ? &*baseline : nullptr});
            host.show({{"text/html", render_budget_html(results, "Expectation")},
                       {"text/plain", render_budget_text(results, "Expectation")},
                       {expectation_mime, json{{"met", !budget_exceeded(results)}, {"expect", o.expect}}}},
                      "", false);
            for (const auto& b : results)
            {
                if (b.exceeded)
                {
                    return b.message;
                }
            }
            return {};
        }

        void show_comparison(const report& baseline, const report& r, const probe_magic_options& o,
                             const std::string& name, magic_host& host)
        {
            try
            {
                report b = baseline;
                report after = r;
                comparison c = compare_reports(b, after, o.compare_with, name);
                c.exit_code = exit_code_for(c.verdict);
                host.show({{"text/html", render_compare_html(c, &b, &after)},
                           {"text/plain", render_compare_text(c)},
                           {comparison_mime, comparison_to_json(c)}},
                          "", false);
            }
            catch (const compare_input_error& e)
            {
                throw magic_error(e.what());
            }
        }

        // The run into the session and the history store (it outlives the kernel); the run's
        // series back out of the store for the report's sparklines.
        std::optional<history_view> keep(const std::string& name, const report& r, probe_session& session,
                                         progress_display& progress)
        {
            session.store(name, r);
            const history_location where = locate_history(session.history_option);
            std::vector<std::string> notes;
            const auto stored = remember_run(where, r, "magic", notes);
            auto history = history_for(where, r, notes);
            std::string done = "warp-probe: " + name + " done, " + std::to_string(r.result.samples_ok) + "/"
                               + std::to_string(r.result.samples_total) + " samples ok"
                               + (stored ? ", stored as @" + std::to_string(*stored) : std::string());
            for (const auto& n : notes)
            {
                done += "\nwarp-probe: " + n;
            }
            progress.finish(done);
            return history;
        }

        void show_report(const report& r, const probe_magic_options& o, const probe_session& session,
                         const std::optional<history_view>& history, const progress_display& progress, magic_host& host)
        {
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
                host.show({{"text/html", html}, {"text/plain", render_text(r)}, {report_mime, report_json}}, display_id,
                          update);
            }
        }
    }

    void run_and_show(measure_options mo, const probe_magic_options& o, probe_session& session, magic_host& host,
                      const std::function<void(report&)>& finish_report)
    {
        session.runs++;
        mo.shim_dir = session.shim_dir.empty() ? default_shim_dir() : session.shim_dir;
        mo.cwd = host.working_directory();
        const std::string name = run_name(session, o.name);
        mo.label = name;
        const std::vector<budget_limit> expected = expectation_of(o);
        if (needs_compared_run(expected) && o.compare_with.empty())
        {
            throw magic_error("--expect workload=same, kernels=same and results=same are judged against a run: add "
                              "--compare RUN (the run whose launches and results must be kept)");
        }
        if (!o.compare_with.empty() && o.name == o.compare_with)
        {
            throw magic_error("--name " + o.name + " would replace the run --compare judges against: name this run "
                              "differently (the run you compare with stays as it is)");
        }
        // Resolve the comparison baseline first: a wrong name should not cost a probe.
        std::optional<report> baseline;
        if (!o.compare_with.empty())
        {
            baseline = resolve_run(session, o.compare_with, "--compare");
        }
        progress_display progress(host, o.quiet);
        report r = probed(mo, o, host, progress);
        finish_report(r);
        analyze(r);
        const auto history = keep(name, r, session, progress);
        show_report(r, o, session, history, progress, host);
        if (!r.result.valid && r.status != "interrupted" && !o.allow_fail)
        {
            const auto& first = r.samples.empty() ? run_result{} : r.samples.front().cold;
            throw magic_program_failed("the program failed in every sample (" + describe_failure(first, r.run_settings.timeout_s)
                                       + "); the report above says how. --allow-fail keeps the cell going");
        }
        const std::string not_met = expected.empty() ? std::string() : show_expectation(r, expected, o, name, baseline, host);
        if (baseline)
        {
            show_comparison(*baseline, r, o, name, host);
        }
        if (o.strict && !not_met.empty())
        {
            throw magic_expectation_not_met("expectation not met: " + not_met);
        }
    }

    const report& own_run(const probe_session& session, const std::string& name, const std::string& magic)
    {
        const report* found = session.find(name);
        if (!found)
        {
            throw magic_error(magic + ": no run named '" + name + "' (see %warp_history)");
        }
        if (!session.measured_here(name))
        {
            throw magic_error(magic + ": '" + name + "' is a report %warp_report showed, not a run of this notebook: a report "
                              "is data, and its command is not run from here; probe the program with %%warp_probe first");
        }
        return *found;
    }
}
