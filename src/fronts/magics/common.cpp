#include "common.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "xwarp/jobs/usecases/judging.hpp"
#include "xwarp/jobs/usecases/replay_trust.hpp"
#include "xwarp/fronts/options/front_options.hpp"
#include "xwarp/jobs/usecases/use_cases.hpp"
#include "xwarp/engine/install/layout.hpp"
#include "xwarp/model/format.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/render/printable.hpp"
#include "xwarp/render/text.hpp"

namespace xwarp::magic_parts
{
    using nlohmann::json;
    using clock = std::chrono::steady_clock;

    json text_bundle(const std::string& text)
    {
        return view_bundle(text_view(text));
    }

    namespace
    {
        // The quote a line leaves open ('"', '\'' or '`'), or 0: the words are split as a shell
        // would, and a line whose quote never closes is refused, never read with its end dropped.
        char open_quote(const std::string& line)
        {
            char open = 0;
            for (std::size_t i = 0; i < line.size(); ++i)
            {
                const char c = line[i];
                if (open == 0 && (c == '"' || c == '\'' || c == '`'))
                {
                    open = c;
                }
                else if (open != 0 && c == '\\' && open == '"' && i + 1 < line.size())
                {
                    ++i;  // an escaped character inside double quotes
                }
                else if (open != 0 && c == open)
                {
                    open = 0;
                }
            }
            return open;
        }
    }

    bool parse_line(CLI::App& app, const std::string& line, magic_host& host)
    {
        if (const char quote = open_quote(line))
        {
            throw magic_error(std::string("the line opens a quote (") + quote + ") it never closes: close it (a path with a "
                              "space is written in quotes, or through shlex.quote)\n\n" + app.help());
        }
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
        // The notebook's runs, as the use cases look runs up.
        class session_runs : public fronts::run_source
        {
        public:
            explicit session_runs(const probe_session& s) : m_session(s) {}
            const report* find(const std::string& name) const override { return m_session.find(name); }
            bool measured_here(const std::string& name) const override { return m_session.measured_here(name); }

        private:
            const probe_session& m_session;
        };
    }

    fronts::resolved_run resolve_run(const probe_session& session, const std::string& what, const std::string& who)
    {
        const session_runs runs(session);
        try
        {
            return fronts::resolve(what, session.history_option, &runs);
        }
        catch (const fronts::job_error& e)
        {
            throw magic_error(who + ": " + e.what() + " (see %warp_history)");
        }
    }

    void require_run(const fronts::resolved_run& run, bool run_flag, const std::string& who)
    {
        if (run.ran_here || run_flag)
        {
            return;
        }
        throw magic_error(who + ": '" + run.ref + "' asks to run what you have not run here (" + run.why_not_here
                          + "); a report is data, and this is what it would run:\n" + what_a_replay_runs(run.saved)
                          + "add --run to run it");
    }

    fronts::job_context job_context_of(const probe_session& session, magic_host& host, run_observer* observer, bool consented)
    {
        fronts::job_context context;
        context.history_option = session.history_option;
        context.shim_dir = session.shim_dir;
        context.consented = consented;
        context.observer = observer;
        context.cancelled = [&host] { return host.interrupt_requested(); };
        context.notebook_python = host.python_executable();
        context.notebook_folder = host.working_directory();
        return context;
    }

    void add_run_flag(CLI::App& app, bool& target)
    {
        app.add_flag("--run", target,
                     "run the command of a run you did not measure here (a report file, or a stored run from "
                     "elsewhere): a report is data, and is not run without this");
    }

    std::string run_name(probe_session& s, const std::string& requested)
    {
        return requested.empty() ? "probe-" + std::to_string(s.probes_started) : requested;
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
                + one_line(fronts::failure_words(pass, std::nullopt)) + " in " + format_ms(pass.wall_ms) + ", "
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
        fronts::analyse(r);
        const std::string banner = "provisional: " + std::to_string(sample) + " of " + std::to_string(samples)
                                   + " samples; the report follows when the last one ends";
        m_host.show(view_bundle(provisional_view(banner, r)), m_provisional_id, m_provisional_shown);
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
                       "'identities<=1,builds-per-module<=1', or option:@KERNEL.KEY=VALUE; shows met or not met under the "
                       "report (a run that used a kernel cache outside the probe's is not judged). With --compare "
                       "RUN, workload=same also requires the launches RUN made (compare's launch gate): an answer "
                       "that deletes work is not met");
        app.add_option("--exercise", o.exercise,
                       "judge this run as the lesson's exercise NAME, as shipped: its own limits, against its broken "
                       "form (exercise_broken when that cell is the broken form as shipped; the probe runs the "
                       "shipped form otherwise); not with --expect or --compare");
        app.add_flag("--strict", o.strict, "with --expect or --exercise: an expectation not met fails the cell (an error reply)");
        app.add_flag("--allow-fail", o.allow_fail,
                     "a program that fails in every sample still replies ok (for a lesson that fails on purpose); "
                     "without it the cell fails after showing the report, as the CLI exits 1");
    }

    namespace
    {
        // A bad --expect is a usage error before anything runs: a malformed limit, or one judged
        // against a run without --compare RUN.
        void check_expectation(const probe_magic_options& o)
        {
            if (o.strict && o.expect.empty())
            {
                throw magic_error("--strict needs --expect or --exercise (what the run should meet)");
            }
            if (o.expect.empty())
            {
                return;
            }
            try
            {
                fronts::validate_limits(o.expect, !o.compare_with.empty());
            }
            catch (const fronts::job_error& e)
            {
                throw magic_error(std::string("--expect: ") + e.what() + " (add --compare RUN)");
            }
        }

        fronts::job_outcome probed(fronts::probe_job job, probe_session& session, magic_host& host,
                                   progress_display& progress)
        {
            try
            {
                fronts::job_outcome outcome = fronts::probe(job, job_context_of(session, host, &progress, false));
                if (outcome.interrupted)
                {
                    interrupted(progress);
                }
                return outcome;
            }
            catch (const fronts::job_error& e)
            {
                throw magic_error(e.what());
            }
        }

        // The expectation's results shown under the report; the first limit not met, or "".
        // workload=same is compare's launch gate against the --compare run.
        std::string show_expectation(const report& r, const probe_magic_options& o, const std::string& name,
                                     const std::optional<report>& baseline, magic_host& host)
        {
            fronts::check_outcome outcome;
            try
            {
                outcome = fronts::check(r, {o.expect, baseline ? &*baseline : nullptr, o.compare_with, name});
            }
            catch (const fronts::job_error& e)
            {
                throw magic_error(std::string("--expect: ") + e.what());
            }
            host.show(view_bundle(budget_view(outcome.results, "Expectation", outcome.met, o.expect)), "", false);
            return outcome.first_not_met;
        }

        void show_comparison(const report& baseline, const report& r, const probe_magic_options& o,
                             const std::string& name, magic_host& host)
        {
            try
            {
                report b = baseline;
                report after = r;
                const comparison c = fronts::compare(b, after, o.compare_with, name);
                host.show(view_bundle(comparison_view(c, &b, &after)), "", false);
            }
            catch (const fronts::job_error& e)
            {
                throw magic_error(e.what());
            }
        }

        // The run into the session and the history store (it outlives the kernel); the run's
        // series back out of the store for the report's sparklines.
        std::optional<run_series> keep(const std::string& name, const fronts::job_outcome& outcome, probe_session& session,
                                         progress_display& progress)
        {
            const report& r = outcome.result;
            session.store(name, r);
            const std::vector<std::string>& notes = outcome.notes;
            std::string done = "warp-probe: " + name + " done, " + std::to_string(r.result.samples_ok) + "/"
                               + std::to_string(r.result.samples_total) + " samples ok"
                               + (outcome.stored_id ? ", stored as @" + std::to_string(*outcome.stored_id) : std::string());
            for (const auto& n : notes)
            {
                done += "\nwarp-probe: " + n;
            }
            progress.finish(done);
            return outcome.history;
        }

        void show_report(const report& r, const probe_magic_options& o, const probe_session& session,
                         const std::optional<run_series>& history, const progress_display& progress, magic_host& host)
        {
            if (!o.json_path.empty())
            {
                try
                {
                    // a run this cell measured: its bytes are recorded, and the file reads back as the user's own
                    std::vector<std::string> notes;
                    fronts::write_own_report(o.json_path, r, session.history_option, notes);
                }
                catch (const std::exception& e)
                {
                    throw magic_error(std::string("--json: ") + e.what());
                }
            }
            const guide_sections guide = parse_guide(session.guide_text);
            const json bundle = view_bundle(notebook_report_view(r, {"", &guide, history ? &*history : nullptr}));
            if (!o.variable.empty())
            {
                host.bind_variable(o.variable, bundle[report_mime], bundle[html_mime].get<std::string>());
            }
            // --quiet hides a report, never a failure.
            if (!o.quiet || r.status != run_status::ok || !r.result.valid)
            {
                const auto [display_id, update] = progress.report_display();
                host.show(bundle, display_id, update);
            }
        }
    }

    void show_report_outcome(std::string done, const fronts::job_outcome& outcome, report_words text,
                             const std::string& guide_text, magic_host& host, progress_display& progress)
    {
        const report& r = outcome.result;
        done += outcome.stored_id ? ", stored as @" + std::to_string(*outcome.stored_id) : std::string();
        for (const auto& n : outcome.notes)
        {
            done += "\nwarp-probe: " + n;
        }
        progress.finish(done);
        const guide_sections guide = parse_guide(guide_text);
        host.show(view_bundle(notebook_report_view(r, {"", &guide}, text)), "", false);
    }

    namespace
    {
        struct shipped_exercise
        {
            std::string expect;
            std::string broken;  // the broken form's cell, as the notebook ships it
            std::optional<std::string> setup;  // the %%warp_setup body in force at the exercise, as shipped
        };

        shipped_exercise find_exercise(const probe_session& session, const std::string& name)
        {
            const json all = json::parse(session.exercises_text, nullptr, false);
            if (all.is_discarded() || !all.is_object())
            {
                throw magic_error("--exercise: the lessons' exercises (share/xwarp/exercises.json) are not installed "
                                  "beside this xwarp (or are no JSON file of at most 4 MiB)");
            }
            const auto it = all.find(name);
            if (it == all.end() || !it->is_object() || !it->value("expect", json()).is_string()
                || !it->value("broken", json()).is_string())
            {
                // the names as one escaped line, the first 20 of them: the file is data
                std::string known;
                std::size_t listed = 0;
                for (const auto& [key, value] : all.items())
                {
                    if (listed++ < 20)
                    {
                        known += (known.empty() ? "" : ", ") + one_line(key.substr(0, 80));
                    }
                }
                if (listed > 20)
                {
                    known += " and " + std::to_string(listed - 20) + " more";
                }
                throw magic_error("--exercise: no exercise named '" + one_line(name.substr(0, 80)) + "' (the lessons have: "
                                  + known + ")");
            }
            shipped_exercise ex{(*it)["expect"].get<std::string>(), (*it)["broken"].get<std::string>(), std::nullopt};
            if (it->contains("setup") && (*it)["setup"].is_string())
            {
                ex.setup = (*it)["setup"].get<std::string>();
            }
            return ex;
        }

        // Cells compared as code: trailing spaces and blank lines at the ends are not edits.
        std::string code_lines(const std::string& code)
        {
            std::string out;
            std::istringstream in(code);
            std::string line;
            while (std::getline(in, line))
            {
                line.erase(line.find_last_not_of(" \t\r") + 1);
                out += line + "\n";
            }
            const auto first = out.find_first_not_of('\n');
            const auto last = out.find_last_not_of('\n');
            return first == std::string::npos ? std::string() : out.substr(first, last - first + 1);
        }

        // Where two setups first differ, in one line: "line N: yours '...', the lesson's '...'".
        std::string first_difference(const std::string& yours, const std::string& shipped)
        {
            std::istringstream a(code_lines(yours));
            std::istringstream b(code_lines(shipped));
            std::string la;
            std::string lb;
            for (int n = 1;; ++n)
            {
                const bool more_a = static_cast<bool>(std::getline(a, la));
                const bool more_b = static_cast<bool>(std::getline(b, lb));
                if (!more_a && !more_b)
                {
                    return "";
                }
                if (!more_a || !more_b || la != lb)
                {
                    const auto shown = [](bool there, const std::string& line)
                    { return there ? "'" + one_line(line.substr(0, 80)) + "'" : std::string("nothing"); };
                    return "line " + std::to_string(n) + ": yours " + shown(more_a, la) + ", the lesson's " + shown(more_b, lb);
                }
            }
        }

        // The setup an exercise is probed with: the lesson's as shipped (exercises.json), whatever
        // the student's %%warp_setup cell holds now; the difference is shown. An exercises.json
        // from before the setup was shipped leaves the session's.
        std::string exercise_setup(const shipped_exercise& ex, const probe_session& session, magic_host& host)
        {
            if (!ex.setup)
            {
                return session.setup_code;
            }
            if (code_lines(session.setup_code) != code_lines(*ex.setup))
            {
                host.show(text_bundle("warp-probe: your %%warp_setup cell is not the lesson's as shipped ("
                                      + first_difference(session.setup_code, *ex.setup)
                                      + "): the exercise is judged with the lesson's setup, the answer and its broken "
                                        "form alike"),
                          "", false);
            }
            return *ex.setup;
        }

        // The run an exercise is judged against: the student's exercise_broken when it is the
        // broken form as shipped (after the setup as shipped), else the shipped form, probed here
        // once (quietly) and kept.
        std::string exercise_baseline(const shipped_exercise& ex, const probe_magic_options& o, probe_session& session,
                                      magic_host& host)
        {
            const std::string& setup = o.request.setup_code;
            const auto as_shipped = [&](const report* r)
            {
                return r && r->cell_code && code_lines(*r->cell_code) == code_lines(ex.broken)
                       && code_lines(r->setup_code.value_or("")) == code_lines(setup);
            };
            const std::string student = "exercise_broken";
            const report* ran = session.measured_here(student) ? session.find(student) : nullptr;
            if (as_shipped(ran))
            {
                return student;
            }
            const std::string shipped = "exercise_broken_as_shipped";
            if (const report* kept = session.find(shipped); session.measured_here(shipped) && as_shipped(kept))
            {
                return shipped;
            }
            host.show(text_bundle("warp-probe: " + student
                                  + (ran ? " is not the exercise's broken form as shipped (its cell or the setup it ran "
                                           "after was edited)"
                                         : " was not run in this notebook")
                                  + ": probing the broken form as shipped, the run this answer is judged against"),
                      "", false);
            fronts::probe_job job;
            job.request = o.request;
            job.request.cell_code = ex.broken;
            job.request.setup_code = setup;
            job.request.cwd = host.working_directory();
            job.request.label = shipped;
            job.store_as = run_kind::magic;
            progress_display progress(host, true);
            const fronts::job_outcome outcome = probed(std::move(job), session, host, progress);
            keep(shipped, outcome, session, progress);
            return shipped;
        }
    }

    void run_and_show(const probe_magic_options& asked, probe_session& session, magic_host& host)
    {
        probe_magic_options o = asked;
        if (!o.exercise.empty())
        {
            if (!o.expect.empty() || !o.compare_with.empty())
            {
                throw magic_error("--exercise judges the exercise as shipped, by its own limits against its own broken "
                                  "form: leave out --expect and --compare");
            }
            if (!o.request.cell_code)
            {
                throw magic_error("--exercise judges a cell: use it with %%warp_probe");
            }
            const shipped_exercise ex = find_exercise(session, o.exercise);
            o.expect = ex.expect;
            o.request.setup_code = exercise_setup(ex, session, host);
            if (o.name.empty() || o.name == "exercise_broken" || o.name == "exercise_broken_as_shipped")
            {
                o.name = "exercise";
            }
            o.compare_with = exercise_baseline(ex, o, session, host);
        }
        session.probes_started++;
        const std::string name = run_name(session, o.name);
        fronts::probe_job job;
        job.request = o.request;
        job.request.cwd = host.working_directory();
        job.request.label = name;
        job.store_as = run_kind::magic;
        job.with_history = true;  // the report's sparklines: the run among its series
        check_expectation(o);
        if (!o.compare_with.empty() && o.name == o.compare_with)
        {
            throw magic_error("--name " + o.name + " would replace the run --compare judges against: name this run "
                              "differently (the run you compare with stays as it is)");
        }
        // Resolve the comparison baseline first: a wrong name should not cost a probe.
        std::optional<report> baseline;
        if (!o.compare_with.empty())
        {
            baseline = resolve_run(session, o.compare_with, "--compare").saved;
        }
        progress_display progress(host, o.quiet);
        const fronts::job_outcome outcome = probed(std::move(job), session, host, progress);
        const report& r = outcome.result;
        const auto history = keep(name, outcome, session, progress);
        show_report(r, o, session, history, progress, host);
        if (!r.result.valid && r.status != run_status::interrupted && !o.allow_fail)
        {
            const auto& first = r.samples.empty() ? run_result{} : r.samples.front().cold;
            throw magic_program_failed("the program failed in every sample (" + fronts::failure_words(first, r.run_settings.timeout_s)
                                       + "); the report above says how. --allow-fail keeps the cell going");
        }
        const std::string not_met = o.expect.empty() ? std::string() : show_expectation(r, o, name, baseline, host);
        if (baseline)
        {
            show_comparison(*baseline, r, o, name, host);
        }
        if (o.strict && !not_met.empty())
        {
            throw magic_expectation_not_met("expectation not met: " + not_met);
        }
    }

}
