// warp-probe history ... and warp-probe check: parse, call the store and the trend analysis, print.
#include "history_commands.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "xwarp/analysis/budget.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/analysis/trend.hpp"
#include "xwarp/fronts/exit_codes.hpp"
#include "xwarp/history/store.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/render/budget.hpp"
#include "xwarp/render/history.hpp"
#include "xwarp/render/printable.hpp"

namespace xwarp::cli
{
    int fail(int code, const std::string& message)
    {
        std::cerr << "warp-probe: " << one_line(message) << "\n";
        return code;
    }

    namespace
    {
        void print_notes(const std::vector<std::string>& notes)
        {
            for (const auto& n : notes)
            {
                std::cerr << "warp-probe: " << one_line(n) << "\n";
            }
        }

        // "@17" or "17" -> 17.
        std::optional<std::int64_t> run_id_of(const std::string& text)
        {
            return parse_history_ref(!text.empty() && text[0] == '@' ? text : "@" + text);
        }

        // The store the history commands read: it must be on, and (unless `create`) exist.
        // Sets `code` (an exit code, after printing why) when there is none to read.
        std::unique_ptr<history_store> open_store(const std::string& option, bool create, int& code,
                                                  std::vector<std::string>& notes)
        {
            const history_location where = locate_history(option);
            if (where.off)
            {
                code = fail(exit_code::usage, "the history is off (" + where.origin
                                                  + "): give --history PATH or set XWARP_HISTORY to a file");
                return nullptr;
            }
            std::error_code ec;
            if (!create && !std::filesystem::exists(where.path, ec))
            {
                code = fail(exit_code::no_input, "no history at " + where.path
                                                     + " yet: measure, compare, whatif and the magics store their runs there");
                return nullptr;
            }
            try
            {
                auto store = std::make_unique<history_store>(where.path, &notes);
                print_notes(notes);
                notes.clear();
                return store;
            }
            catch (const std::exception& e)
            {
                print_notes(notes);
                code = fail(exit_code::cannot_write, e.what());
                return nullptr;
            }
        }

        int write_text(const std::string& path, const std::string& text)
        {
            if (path.empty())
            {
                std::cout << text;
                return exit_code::ok;
            }
            FILE* f = std::fopen(path.c_str(), "wb");
            if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0)
            {
                return fail(exit_code::cannot_write, "cannot write " + path);
            }
            return exit_code::ok;
        }

        // The series a trend or table is about: the newest run that passes the filter.
        std::optional<history_run> newest_matching(history_store& store, const history_commands& h)
        {
            history_filter f;
            f.command = h.command;
            f.machine = h.machine;
            f.label = h.label;
            f.limit = 1;
            auto runs = store.runs(f);
            if (runs.empty())
            {
                return std::nullopt;
            }
            return runs.front();
        }

        std::string no_run_matches(const history_commands& h)
        {
            std::string what;
            auto add = [&](const std::string& name, const std::string& value)
            {
                if (!value.empty())
                {
                    what += (what.empty() ? " with " : ", ") + name + " '" + value + "'";
                }
            };
            add("command", h.command);
            add("machine", h.machine);
            add("label", h.label);
            return "no stored run" + what;
        }
    }

    void add_history_option(CLI::App* sub, std::string& target)
    {
        sub->add_option("--history", target,
                        "the history store: a SQLite file, or off (default: $XWARP_HISTORY, else "
                        "$XDG_DATA_HOME/xwarp/history.sqlite3)");
    }

    int load_report_arg(const std::string& arg, const std::string& history_option, report& out)
    {
        if (const auto id = parse_history_ref(arg))
        {
            std::vector<std::string> notes;
            int code = 0;
            auto store = open_store(history_option, false, code, notes);
            if (!store)
            {
                return code;
            }
            try
            {
                out = report_from_text(store->report_json(*id));
                return exit_code::ok;
            }
            catch (const history_error& e)
            {
                return fail(exit_code::no_input, e.what());
            }
            catch (const report_error& e)
            {
                return fail(exit_code::bad_input, arg + " in " + store->path() + ": " + e.what());
            }
        }
        try
        {
            out = load_report(arg);
            return exit_code::ok;
        }
        catch (const report_error& e)
        {
            return fail(e.which() == report_error::kind::missing ? exit_code::no_input : exit_code::bad_input, e.what());
        }
    }

    std::optional<file_stamp> stamp_report_arg(const std::string& arg)
    {
        if (parse_history_ref(arg))
        {
            return file_stamp{};
        }
        return stamp_regular_file(arg);
    }

    std::optional<std::int64_t> store_run(const std::string& history_option, const report& r, const std::string& kind,
                                          bool quiet)
    {
        const history_location where = locate_history(history_option);
        std::vector<std::string> notes;
        const auto id = remember_run(where, r, kind, notes);
        print_notes(notes);
        if (id && !quiet)
        {
            std::cerr << "warp-probe: stored as @" << *id << " in " << one_line(where.path) << "\n";
        }
        return id;
    }

    void store_comparison(const std::string& history_option, std::int64_t before_run, std::int64_t after_run,
                          const std::string& verdict, const std::string& comparison_json)
    {
        const history_location where = locate_history(history_option);
        if (where.off)
        {
            return;
        }
        std::vector<std::string> notes;
        try
        {
            history_store store(where.path, &notes);
            store.add_comparison(before_run, after_run, verdict, comparison_json);
        }
        catch (const std::exception& e)
        {
            notes.push_back(std::string("the comparison was not stored in the history: ") + e.what());
        }
        print_notes(notes);
    }

    int print_budget(const report& r, const std::string& spec)
    {
        const auto results = check_budget(r, parse_budget(spec));
        std::cout << render_budget_text(results, "Budget");
        return budget_exceeded(results) ? exit_code::over_budget : exit_code::ok;
    }

    void add_history_commands(CLI::App& app, history_commands& h)
    {
        h.history = app.add_subcommand(
            "history",
            "The runs kept in the history store (every measure, whatif, compare and magic run): list them, show one, "
            "trend a command's modules over its runs with the steps in them, diff two runs, import reports made "
            "elsewhere, export one, or table the latest run per machine");
        h.history->require_subcommand(1);
        h.history->fallthrough();  // --history reads the same before or after list, trend, ...
        add_history_option(h.history, h.store_option);

        h.list = h.history->add_subcommand("list", "The stored runs, newest first");
        h.list->add_option("--label", h.label, "only runs with this label");
        h.list->add_option("--command", h.command, "only runs whose command contains this text");
        h.list->add_option("--machine", h.machine, "only runs on this machine (host name)");
        h.list->add_option("--kind", h.kind, "only runs of this kind: measure, whatif, magic, compare, import")
            ->check(CLI::IsMember({"measure", "whatif", "magic", "compare", "import"}));
        h.list->add_option("--limit", h.limit, "at most this many (0: all)")->default_val(50)->check(CLI::Range(0, 1000000));

        h.show = h.history->add_subcommand("show", "One stored run: its fingerprint and its identities");
        h.show->add_option("id", h.run_a, "the run (@ID or ID)")->required();

        h.trend = h.history->add_subcommand(
            "trend",
            "Per module, the cold build time and identity count over the runs of one command on one machine, with "
            "the steps (a change beyond the noise band that persisted) and what changed in the fingerprint there");
        h.trend->add_option("--command", h.command, "the series whose command contains this text (default: the newest run's)");
        h.trend->add_option("--machine", h.machine, "the series on this machine (default: the newest run's)");
        h.trend->add_option("--label", h.label, "the series of the newest run with this label");
        h.trend->add_option("--module", h.module, "only modules whose name contains this text");

        h.diff = h.history->add_subcommand("diff", "Two stored runs side by side: the fingerprint and each module's identities");
        h.diff->add_option("a", h.run_a, "the first run (@ID or ID)")->required();
        h.diff->add_option("b", h.run_b, "the second run (@ID or ID)")->required();

        h.import = h.history->add_subcommand(
            "import", "Store reports made elsewhere (CI artifacts of a matrix, a Slurm job array): warp-probe measure --json files");
        h.import->add_option("files", h.files, "JSON reports")->required();

        h.export_ = h.history->add_subcommand("export", "Write a stored run's report (JSON, as measure --json wrote it)");
        h.export_->add_option("id", h.run_a, "the run (@ID or ID)")->required();
        h.export_->add_option("--output,-o", h.output, "write to this file instead of stdout");

        h.table = h.history->add_subcommand("table", "Module x machine: the latest run of one command on each machine");
        h.table->add_option("--by", h.by, "what the columns are (machine)")->check(CLI::IsMember({"machine"}));
        h.table->add_option("--command", h.command, "the command (text it contains; default: the newest run's)");

        std::string metrics;
        for (const auto& m : budget_metrics())
        {
            metrics += (metrics.empty() ? "" : ", ") + m;
        }
        h.check = app.add_subcommand(
            "check",
            "Check a report against a budget, for a CI gate: exits 8 when a limit is exceeded and names the module "
            "that broke it.\nUsage: warp-probe check REPORT.json|@ID --budget 'identities<=12,builds-per-module<=1'");
        h.check->add_option("report", h.check_report, "a JSON report, or a stored run (@ID)")->required();
        h.check->add_option("--budget", h.budget, "LIMIT[,LIMIT...], LIMIT = METRIC<=NUMBER or METRIC>=NUMBER, METRIC: " + metrics)->required();
        add_history_option(h.check, h.store_option);
    }

    std::optional<int> run_history_commands(history_commands& h)
    {
        if (*h.check)
        {
            try
            {
                parse_budget(h.budget);
            }
            catch (const budget_error& e)
            {
                return fail(exit_code::usage, e.what());
            }
            report r;
            if (int code = load_report_arg(h.check_report, h.store_option, r))
            {
                return code;
            }
            analyze(r);
            return print_budget(r, h.budget);
        }
        if (!*h.history)
        {
            return std::nullopt;
        }
        std::vector<std::string> notes;
        int code = 0;
        auto store = open_store(h.store_option, h.import->parsed(), code, notes);
        if (!store)
        {
            return code;
        }
        if (*h.list)
        {
            history_filter f;
            f.label = h.label;
            f.command = h.command;
            f.machine = h.machine;
            f.kind = h.kind;
            f.limit = h.limit;
            std::cout << render_history_list(store->runs(f), store->path());
            return exit_code::ok;
        }
        if (*h.show || *h.export_)
        {
            const auto id = run_id_of(h.run_a);
            if (!id)
            {
                return fail(exit_code::usage, "'" + h.run_a + "' is not a run id (@17 or 17)");
            }
            const auto run = store->run(*id);
            if (!run)
            {
                return fail(exit_code::no_input, "no run @" + std::to_string(*id) + " in " + store->path());
            }
            if (*h.export_)
            {
                return write_text(h.output, store->report_json(*id) + "\n");
            }
            std::cout << render_history_run(*run, store->identities(*id));
            return exit_code::ok;
        }
        if (*h.diff)
        {
            const auto a = run_id_of(h.run_a);
            const auto b = run_id_of(h.run_b);
            if (!a || !b)
            {
                return fail(exit_code::usage, "diff takes two run ids (@17 @18)");
            }
            const auto ra = store->run(*a);
            const auto rb = store->run(*b);
            if (!ra || !rb)
            {
                return fail(exit_code::no_input, "no run @" + std::to_string(ra ? *b : *a) + " in " + store->path());
            }
            std::cout << render_history_diff(build_history_diff(*ra, store->identities(*a), *rb, store->identities(*b)));
            return exit_code::ok;
        }
        if (*h.trend)
        {
            const auto newest = newest_matching(*store, h);
            if (!newest)
            {
                return fail(exit_code::no_input, no_run_matches(h) + " in " + store->path());
            }
            const auto runs = store->series(newest->fp.machine, newest->fp.command);
            std::vector<std::vector<history_identity>> rows;
            for (const auto& run : runs)
            {
                rows.push_back(store->identities(run.id));
            }
            history_trend t = build_trend(runs, rows);
            if (!h.module.empty())
            {
                t.modules.erase(std::remove_if(t.modules.begin(), t.modules.end(),
                                               [&](const module_trend& m) { return m.module.find(h.module) == std::string::npos; }),
                                t.modules.end());
                if (t.modules.empty())
                {
                    return fail(exit_code::no_input, "no module containing '" + h.module + "' in the runs of "
                                                         + newest->fp.command + " on " + newest->fp.machine);
                }
            }
            std::cout << render_trend(t, h.module.empty() ? 20 : 0);
            return exit_code::ok;
        }
        if (*h.table)
        {
            const auto newest = newest_matching(*store, h);
            if (!newest)
            {
                return fail(exit_code::no_input, no_run_matches(h) + " in " + store->path());
            }
            const auto latest = store->latest_per_machine(newest->fp.command);
            std::vector<std::vector<history_identity>> rows;
            for (const auto& run : latest)
            {
                rows.push_back(store->identities(run.id));
            }
            std::cout << render_machine_table(build_machine_table(newest->fp.command, latest, rows));
            return exit_code::ok;
        }
        if (*h.import)
        {
            // Every file is tried: one bad artifact of a matrix must not keep the others out.
            int worst = exit_code::ok;
            for (const auto& file : h.files)
            {
                report r;
                try
                {
                    r = load_report(file);
                }
                catch (const report_error& e)
                {
                    worst = std::max(worst, fail(e.which() == report_error::kind::missing ? exit_code::no_input
                                                                                           : exit_code::bad_input,
                                                 e.what()));
                    continue;
                }
                analyze(r);
                const auto before = store->find(r);
                const std::int64_t id = store->add_report(r, "import");
                std::cout << "@" << id << (before ? " (already stored) " : " ") << one_line(file) << "\n";
            }
            return worst;
        }
        return exit_code::usage;
    }
}
