// The jobs behind every front: resolve a run, build what re-runs it, check the user may run it,
// take the samples, analyse, store. The only file of the fronts that calls the engine's runners.
#include "xwarp/jobs/usecases/use_cases.hpp"

#include <filesystem>
#include <memory>

#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/compare.hpp"
#include "xwarp/analysis/levers.hpp"
#include "xwarp/analysis/mechanisms.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "engine_errors.hpp"
#include "xwarp/analysis/replay_plans.hpp"
#include "xwarp/jobs/fix/fix.hpp"
#include "xwarp/jobs/usecases/cell_script.hpp"
#include "xwarp/jobs/usecases/exit_codes.hpp"
#include "xwarp/jobs/usecases/replay_trust.hpp"
#include "xwarp/store/run_store.hpp"
#include "xwarp/engine/install/layout.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/engine/os/tempdir.hpp"
#include "xwarp/engine/runner/sampler.hpp"
#include "xwarp/jobs/warmup/warmup_job.hpp"
#include "xwarp/jobs/whatif/adaptive.hpp"
#include "xwarp/jobs/whatif/replay_loops.hpp"

namespace xwarp::fronts
{
    namespace fs = std::filesystem;
    using kind = job_error::kind;

    namespace
    {
        sampler_factory samplers_of(const job_context& context)
        {
            return context.replay_streams.empty() ? command_samplers() : recorded_samplers(context.replay_streams);
        }

        std::string shim_of(const job_context& context)
        {
            return context.shim_dir.empty() ? default_shim_dir() : context.shim_dir;
        }
    }

    // ---- resolve --------------------------------------------------------------------------------

    namespace
    {
        std::optional<report> stored_run(const std::string& ref, const std::string& history_option,
                                         std::optional<std::int64_t>& id_found)
        {
            const store_location where = locate_store(history_option);
            std::error_code ec;
            const bool have_store = !where.off && fs::exists(where.path, ec);
            std::vector<std::string> notes;
            if (const auto id = parse_stored_run_ref(ref))
            {
                if (!have_store)
                {
                    throw job_error(kind::no_input, ref + ": there is no history store" + (where.off ? " (it is off)" : " at " + where.path));
                }
                try
                {
                    run_store store(where.path, &notes, store_access::read);
                    id_found = *id;
                    return report_from_text(store.report_json(*id));
                }
                catch (const store_error& e)
                {
                    throw job_error(e.which() == store_error::kind::missing ? kind::no_input : kind::bad_input, e.what());
                }
                catch (const report_error& e)
                {
                    throw job_error(kind::bad_input, ref + " in " + where.path + ": " + e.what());
                }
            }
            if (!have_store)
            {
                return std::nullopt;
            }
            try
            {
                run_store store(where.path, &notes, store_access::read);
                history_filter f;
                f.label = ref;
                f.limit = 1;
                if (const auto runs = store.runs(f); !runs.empty())
                {
                    id_found = runs.front().id;
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

    resolved_run resolve(const std::string& ref, const std::string& history_option, const run_source* session)
    {
        resolved_run out;
        out.ref = ref;
        if (const report* r = session ? session->find(ref) : nullptr)
        {
            out.saved = *r;
            out.from_session = true;
            out.ran_here = session->measured_here(ref);
            out.why_not_here = out.ran_here ? "" : "it is a report shown from elsewhere, not a run of this notebook";
            return out;
        }
        std::error_code ec;
        if (fs::is_directory(ref, ec))
        {
            // a run recorded with --keep-records, or one pass the pytest plugin recorded, reads back
            // like a report (contracts/recorded_run.schema.json)
            if (!fs::exists(fs::path(ref) / "run.json", ec) && !fs::exists(fs::path(ref) / "pass.json", ec))
            {
                throw job_error(kind::no_input, ref + ": is a directory, not a report (nor a recorded run: no run.json of a run "
                                                      "recorded with --keep-records, no pass.json of a one-pass run)");
            }
            try
            {
                out.saved = load_recorded_run(ref);
            }
            catch (const std::exception& e)
            {
                throw job_error(kind::bad_input, ref + ": " + e.what());
            }
            // its records are what the measured program wrote: data of someone else's, by nature
            out.ran_here = false;
            out.why_not_here = "a recorded folder holds what the measured program wrote, not a report this probe wrote";
            return out;
        }
        // a file that is there is read as one, before a label of the same name
        std::optional<std::int64_t> from_store;  // the stored run's id, when the history gave it
        std::optional<report> stored =
            parse_stored_run_ref(ref) || !fs::exists(ref, ec)
                ? engine([&] { return stored_run(ref, history_option, from_store); })
                : std::nullopt;
        if (!stored)
        {
            try
            {
                stored = load_report(ref);
            }
            catch (const report_error& e)
            {
                const bool missing = e.which() == report_error::kind::missing;
                throw job_error(missing ? kind::no_input : kind::bad_input,
                                missing ? "'" + ref + "' is " + (session ? "not a run of this notebook, " : "")
                                              + "not a stored run (@ID) or label of the history, and " + e.what()
                                        : e.what());
            }
        }
        out.saved = std::move(*stored);
        const replay_check trust = from_store ? check_stored_run(*from_store, history_option)
                                              : check_report_file(ref, history_option);
        out.ran_here = trust.ran_here;
        out.why_not_here = trust.why;
        return out;
    }

    // ---- what re-runs a run ---------------------------------------------------------------------

    namespace
    {
        // A run's command again: its cell (setup and cell code, written to a temporary script) or
        // its command, in its folder, with its timeout, the shim set.
        struct rerun
        {
            std::unique_ptr<scoped_temp_dir> tmp;
            measure_options options;
            std::string script;  // the cell's, when it was a cell
            int setup_lines = 0;

            void relabel(report& r) const
            {
                if (!script.empty())
                {
                    relabel_cell_locations(r, script, setup_lines);
                }
            }
        };

        // `keep_records`: the request's --keep-records ("" keeps none)
        rerun rerun_of(const resolved_run& run, const job_context& context, const std::string& keep_records = "")
        {
            const report& saved = run.saved;
            rerun out;
            out.options = rerun_settings(saved);
            if (saved.cell_code)
            {
                out.tmp = std::make_unique<scoped_temp_dir>("xwarp-cell-");
                std::tie(out.script, out.setup_lines) = write_cell_script(out.tmp->path(), saved.setup_code.value_or(""),
                                                                          *saved.cell_code);
                // A foreign report's cell runs in a folder of its own, with the Python on PATH: the
                // folder and the interpreter it names are data, and a name the cell imports must
                // never resolve to a module in a folder the report chose (the standard library's,
                // another user's project).
                const std::string folder = !context.notebook_folder.empty() ? context.notebook_folder
                                           : run.ran_here                   ? saved.cwd
                                                                            : out.tmp->path();
                const std::string python = !context.notebook_python.empty() ? context.notebook_python
                                           : run.ran_here && !saved.env.python_executable.empty() ? saved.env.python_executable
                                                                                                   : std::string("python3");
                const measure_options cell = cell_command(out.script, python, folder);
                out.options.command = cell.command;
                out.options.extra_env = cell.extra_env;
                out.options.cwd = folder;
            }
            else if (saved.command.empty())
            {
                throw job_error(kind::usage, "'" + run.ref + "' holds no command to run again");
            }
            out.options.shim_dir = shim_of(context);
            out.options.label = saved.label.empty() ? run.ref : saved.label;
            out.options.keep_records_dir = keep_records;
            return out;
        }

        // A report's command runs only when the user measured it here, or said to run it.
        void require_consent(const resolved_run& run, const job_context& context)
        {
            if (!run.ran_here && !context.consented)
            {
                throw job_error(kind::not_permitted, "'" + run.ref + "' asks to run what you have not run here ("
                                                         + run.why_not_here + "): a report is data; add --run to run it");
            }
        }

        job_outcome finished(report r, std::optional<run_kind> store_as, const job_context& context)
        {
            job_outcome out;
            out.interrupted = r.status == run_status::interrupted;
            if (!out.interrupted && store_as)
            {
                out.stored_id = store(r, *store_as, context.history_option, out.notes);
                out.stored_in = locate_store(context.history_option).path;
            }
            out.result = std::move(r);
            return out;
        }
    }

    // ---- the jobs -------------------------------------------------------------------------------

    job_outcome probe(const probe_job& job, const job_context& context)
    {
        const probe_request& request = job.request;
        measure_options options;
        options.command = request.command;
        options.cwd = request.cwd;
        options.python = request.python;
        options.label = request.label;
        options.shim_dir = shim_of(context);
        std::unique_ptr<scoped_temp_dir> tmp;
        std::string script;
        int setup_lines = 0;
        if (request.cell_code)
        {
            tmp = std::make_unique<scoped_temp_dir>("xwarp-cell-");
            std::tie(script, setup_lines) = write_cell_script(tmp->path(), request.setup_code, *request.cell_code);
            const measure_options cell = cell_command(script, context.notebook_python, context.notebook_folder);
            options.command = cell.command;
            options.extra_env = cell.extra_env;
        }
        options.samples = request.until_settled ? request.max_samples : request.samples;
        if (request.timeout_s > 0)
        {
            options.timeout_s = request.timeout_s;
        }
        options.nvrtc_trace = options.nvrtc_trace || request.nvrtc_trace;
        options.keep_records_dir = request.keep_records;
        const sampler_factory make = samplers_of(context);
        report r = engine(
            [&]
            {
                if (request.whatif)
                {
                    return measure_with_whatif(options, request.replays(), context.observer, context.cancelled, make);
                }
                if (request.until_settled)
                {
                    return measure_until_settled(options, request.max_samples, context.observer, context.cancelled, make);
                }
                const std::unique_ptr<sampler> source = make(options);
                return measure(*source, options.samples, context.observer, context.cancelled);
            });
        if (request.cell_code)
        {
            relabel_cell_locations(r, script, setup_lines);
            r.command = {"python", "<cell>"};
            r.cell_code = request.cell_code;
            if (!request.setup_code.empty())
            {
                r.setup_code = request.setup_code;
            }
        }
        if (!request.machine.empty())
        {
            r.env.host = request.machine;
        }
        analyze(r);
        job_outcome out = finished(std::move(r), job.store_as, context);
        if (job.with_history)
        {
            // the series read back after the run joined it: where it stands among its own runs
            out.history = series_for(locate_store(context.history_option), out.result, out.notes);
        }
        return out;
    }

    job_outcome replay(const resolved_run& run, const replay_request& request, const job_context& context,
                       std::optional<run_kind> store_as)
    {
        require_consent(run, context);
        rerun again = rerun_of(run, context);
        if (request.samples > 0)
        {
            again.options.samples = request.samples;
        }
        if (request.timeout_s > 0)
        {
            again.options.timeout_s = request.timeout_s;
        }
        report r = engine([&] { return replay_saved(run.saved, again.options, request, context.observer, context.cancelled,
                                                    samplers_of(context)); });
        if (!again.script.empty())
        {
            again.relabel(r);
            analyze(r);  // the findings point at the notebook again
        }
        return finished(std::move(r), store_as, context);
    }

    job_outcome fix(const resolved_run& run, const fix_request& request, const job_context& context,
                    std::optional<run_kind> store_as)
    {
        fix_setup setup;
        if (request.verify)
        {
            require_consent(run, context);
        }
        else if (!run.ran_here && !context.consented)
        {
            // the fixer only parses the program, but with the Python the report names: from
            // elsewhere, that path is data too
            setup.fixer_python = "python3";
        }
        rerun again = rerun_of(run, context, request.keep_records);
        if (request.timeout_s > 0)
        {
            again.options.timeout_s = request.timeout_s;
        }
        report saved = run.saved;
        if (!again.script.empty())
        {
            // the cell's findings point at its new script, which is the project to patch
            unrelabel_cell_locations(saved, again.script, again.setup_lines);
            saved.cwd = again.tmp->path();  // the cell's folder is its project: its code is not library code
            analyze(saved);
            setup.root = again.tmp->path();
        }
        report r = engine([&]
                          { return fix_report(saved, again.options, request, setup, context.observer, context.cancelled,
                                              samplers_of(context)); });
        if (!again.script.empty())
        {
            again.relabel(r);
            analyze(r);  // the findings point at the notebook again
        }
        return finished(std::move(r), store_as, context);
    }

    warmup_outcome warm_up(const resolved_run& run, const warmup_request& request, const job_context& context)
    {
        const std::string source = run.from_session ? "run " + run.ref + " of this notebook" : run.ref;
        // the file imports the report's modules and calls its factories: a report from elsewhere
        // is code to run, and needs the same consent as re-running its command
        require_consent(run, context);
        rerun again = request.verify || run.saved.cell_code ? rerun_of(run, context, request.keep_records) : rerun{};
        if (!request.verify && !run.saved.cell_code)
        {
            again.options = rerun_settings(run.saved);
        }
        if (request.timeout_s > 0)
        {
            again.options.timeout_s = request.timeout_s;
        }
        warmup_outcome out;
        out.plan = engine([&]
                          { return warmup(run.saved, source, again.options, request, context.observer, context.cancelled,
                                          samplers_of(context)); });
        out.interrupted = out.plan.check && out.plan.check->verdict == warmup_verdict::interrupted;
        return out;
    }

    compare_outcome compare_until_settled(const resolved_run& before, const resolved_run& after, int max_samples,
                                          const job_context& context, std::optional<run_kind> store_as)
    {
        require_consent(before, context);
        require_consent(after, context);
        rerun before_again = rerun_of(before, context);
        rerun after_again = rerun_of(after, context);
        compare_outcome out;
        out.before = before.saved;
        out.after = after.saved;
        const sampler_factory make = samplers_of(context);
        out.result = engine(
            [&]
            {
                return xwarp::compare_until_settled(out.before, out.after, before_again.options, after_again.options, max_samples,
                                                    before.ref, after.ref, context.observer, context.cancelled, make);
            });
        if (!before_again.script.empty() || !after_again.script.empty())
        {
            // a cell's places point at the notebook again, and the comparison reads them so
            before_again.relabel(out.before);
            after_again.relabel(out.after);
            const auto until = out.result.until_settled;
            out.result = engine([&] { return compare_reports(out.before, out.after, before.ref, after.ref); });
            out.result.until_settled = until;
        }
        out.result.exit_code = exit_code_for(out.result.verdict);
        out.interrupted = out.result.until_settled && out.result.until_settled->interrupted;
        if (!out.interrupted && store_as)
        {
            out.before_id = store(out.before, *store_as, context.history_option, out.notes);
            out.after_id = store(out.after, *store_as, context.history_option, out.notes);
        }
        return out;
    }

    shown_report show(resolved_run run, const std::string& history_option, bool with_history)
    {
        shown_report out;
        out.analysed = std::move(run.saved);
        analyze(out.analysed);
        if (with_history)
        {
            out.history = series_for(locate_store(history_option), out.analysed, out.notes);
        }
        return out;
    }

    nlohmann::json registries()
    {
        return {{"mechanisms", mechanisms_to_json()}, {"levers", levers_to_json()}};
    }

    std::string history_path(const std::string& history_option)
    {
        return locate_store(history_option).path;
    }

    std::optional<std::int64_t> store(const report& r, run_kind kind_name, const std::string& history_option,
                                      std::vector<std::string>& notes)
    {
        return remember_run(locate_store(history_option), r, kind_name, notes);
    }

    std::optional<stored_runs> history_runs(const std::string& history_option, const history_filter& filter,
                                            std::string& why, std::vector<std::string>& notes)
    {
        const store_location where = locate_store(history_option);
        std::error_code ec;
        if (where.off)
        {
            why = "the history store is off";
            return std::nullopt;
        }
        if (!fs::exists(where.path, ec))
        {
            why = "no history store at " + where.path + " yet";
            return std::nullopt;
        }
        return engine([&]
        {
            run_store store(where.path, &notes, store_access::read);
            return stored_runs{store.path(), store.runs(filter)};
        });
    }
}
