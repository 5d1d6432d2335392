// warp-probe history list|show|diff|export|import|trend|table: the runs kept in the history
// store. The store and the trend analysis live below; this file only parses, calls and prints.
#include <algorithm>
#include <iostream>

#include "command.hpp"
#include "shared.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/analysis/trend.hpp"
#include "xwarp/fronts/exit_codes.hpp"
#include "xwarp/history/store.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/render/history.hpp"
#include "xwarp/render/printable.hpp"

namespace xwarp::cli
{
    namespace
    {
        // "@17" or "17" -> 17.
        std::optional<std::int64_t> run_id_of(const std::string& text)
        {
            return parse_history_ref(!text.empty() && text[0] == '@' ? text : "@" + text);
        }

        class history_cmd : public subcommand
        {
        public:
            CLI::App* add(CLI::App& app) override
            {
                m_history = app.add_subcommand(
                    "history",
                    "The runs kept in the history store (every measure, whatif, compare and magic run): list them, "
                    "show one, trend a command's modules over its runs with the steps in them, diff two runs, import "
                    "reports made elsewhere, export one, or table the latest run per machine");
                m_history->require_subcommand(1);
                m_history->fallthrough();  // --history reads the same before or after list, trend, ...
                add_history_option(m_history, m_store_option);
                add_list();
                m_show = m_history->add_subcommand("show", "One stored run: its fingerprint and its identities");
                m_show->add_option("id", m_run_a, "the run (@ID or ID)")->required();
                add_trend();
                m_diff = m_history->add_subcommand("diff", "Two stored runs side by side: the fingerprint and each "
                                                           "module's identities");
                m_diff->add_option("a", m_run_a, "the first run (@ID or ID)")->required();
                m_diff->add_option("b", m_run_b, "the second run (@ID or ID)")->required();
                m_import = m_history->add_subcommand("import", "Store reports made elsewhere (CI artifacts of a matrix, a "
                                                               "Slurm job array): warp-probe measure --json files");
                m_import->add_option("files", m_files, "JSON reports")->required();
                m_export = m_history->add_subcommand("export", "Write a stored run's report (JSON, as measure --json "
                                                               "wrote it)");
                m_export->add_option("id", m_run_a, "the run (@ID or ID)")->required();
                m_export->add_option("--output,-o", m_output, "write to this file instead of stdout");
                m_table = m_history->add_subcommand("table", "Module x machine: the latest run of one command on each "
                                                             "machine");
                m_table->add_option("--by", m_by, "what the columns are (machine)")->check(CLI::IsMember({"machine"}));
                m_table->add_option("--command", m_command, "the command (text it contains; default: the newest run's)");
                return m_history;
            }

            int run() override
            {
                std::vector<std::string> notes;
                int code = 0;
                auto store = open_store(m_store_option, m_import->parsed(), code, notes);
                if (!store)
                {
                    return code;
                }
                const int rc = act(*store);
                print_notes(notes);  // what the store said while it worked (a store moved aside on damage)
                return rc;
            }

        private:
            int act(history_store& store)
            {
                if (*m_list)
                {
                    std::cout << render_history_list(store.runs(m_filter), store.path());
                    return exit_code::ok;
                }
                if (*m_show || *m_export)
                {
                    return show(store);
                }
                if (*m_diff)
                {
                    return diff(store);
                }
                if (*m_trend)
                {
                    return trend(store);
                }
                if (*m_table)
                {
                    return table(store);
                }
                return import(store);
            }

            void add_list()
            {
                m_list = m_history->add_subcommand("list", "The stored runs, newest first");
                m_list->add_option("--label", m_filter.label, "only runs with this label");
                m_list->add_option("--command", m_filter.command, "only runs whose command contains this text");
                m_list->add_option("--machine", m_filter.machine, "only runs on this machine (host name)");
                m_list->add_option("--kind", m_filter.kind, "only runs of this kind: measure, whatif, fix, magic, compare, import")
                    ->check(CLI::IsMember({"measure", "whatif", "fix", "magic", "compare", "import"}));
                m_filter.limit = 50;
                m_list->add_option("--limit", m_filter.limit, "at most this many (0: all)")
                    ->default_val(50)
                    ->check(CLI::Range(0, 1000000));
            }

            void add_trend()
            {
                m_trend = m_history->add_subcommand(
                    "trend",
                    "Per module, the cold build time and identity count over the runs of one command on one machine, "
                    "with the steps (a change beyond the noise band that persisted) and what changed in the fingerprint "
                    "there");
                m_trend->add_option("--command", m_command, "the series whose command contains this text (default: the "
                                                            "newest run's)");
                m_trend->add_option("--machine", m_machine, "the series on this machine (default: the newest run's)");
                m_trend->add_option("--label", m_label, "the series of the newest run with this label");
                m_trend->add_option("--module", m_module, "only modules whose name contains this text");
                m_trend->add_option("--test", m_test,
                                    "a suite's tests: only those whose id contains this text (each test's build time "
                                    "per run, and where it stepped)");
            }

            // The series a trend or table is about: the newest run that passes the filter.
            std::optional<history_run> newest_matching(history_store& store) const
            {
                history_filter f;
                f.command = m_command;
                f.machine = m_machine;
                f.label = m_label;
                f.limit = 1;
                auto runs = store.runs(f);
                return runs.empty() ? std::nullopt : std::optional<history_run>(runs.front());
            }

            std::string no_run_matches(const history_store& store) const
            {
                std::string what;
                for (const auto& [name, value] : {std::pair<std::string, std::string>("command", m_command),
                                                  {"machine", m_machine}, {"label", m_label}})
                {
                    if (!value.empty())
                    {
                        what += (what.empty() ? " with " : ", ") + name + " '" + value + "'";
                    }
                }
                return "no stored run" + what + " in " + store.path();
            }

            int show(history_store& store)
            {
                const auto id = run_id_of(m_run_a);
                if (!id)
                {
                    return fail(exit_code::usage, "'" + m_run_a + "' is not a run id (@17 or 17)");
                }
                const auto run = store.run(*id);
                if (!run)
                {
                    return fail(exit_code::no_input, "no run @" + std::to_string(*id) + " in " + store.path());
                }
                if (*m_export)
                {
                    // what a damaged page gave back is no report: valid JSON (and UTF-8) or nothing
                    const std::string text = store.report_json(*id);
                    if (nlohmann::json::parse(text, nullptr, false).is_discarded())
                    {
                        return fail(exit_code::bad_input, "run @" + std::to_string(*id) + " in " + store.path()
                                                              + " is damaged (its report is not valid JSON): nothing written");
                    }
                    return write_text(m_output, text + "\n");
                }
                std::cout << render_history_run(*run, store.identities(*id));
                return exit_code::ok;
            }

            int diff(history_store& store)
            {
                const auto a = run_id_of(m_run_a);
                const auto b = run_id_of(m_run_b);
                if (!a || !b)
                {
                    return fail(exit_code::usage, "diff takes two run ids (@17 @18)");
                }
                const auto ra = store.run(*a);
                const auto rb = store.run(*b);
                if (!ra || !rb)
                {
                    return fail(exit_code::no_input, "no run @" + std::to_string(ra ? *b : *a) + " in " + store.path());
                }
                std::cout << render_history_diff(build_history_diff(*ra, store.identities(*a), *rb, store.identities(*b), store.tests(*b)));
                return exit_code::ok;
            }

            int trend(history_store& store)
            {
                const auto newest = newest_matching(store);
                if (!newest)
                {
                    return fail(exit_code::no_input, no_run_matches(store));
                }
                const auto runs = store.series(newest->fp.machine, newest->fp.command);
                std::vector<std::vector<history_identity>> rows;
                for (const auto& run : runs)
                {
                    rows.push_back(store.identities(run.id));
                }
                history_trend t = build_trend(runs, rows);
                std::vector<std::vector<test_cost>> tests;
                for (const auto& run : runs)
                {
                    tests.push_back(store.tests(run.id));
                }
                add_test_trends(t, tests);
                if (!m_test.empty())
                {
                    t.tests.erase(std::remove_if(t.tests.begin(), t.tests.end(), [&](const test_trend& x)
                                                 { return x.test.find(m_test) == std::string::npos; }),
                                  t.tests.end());
                    if (t.tests.empty())
                    {
                        return fail(exit_code::no_input, "no test containing '" + m_test + "' in the runs of "
                                                             + newest->fp.command + " on " + newest->fp.machine);
                    }
                }
                if (!m_module.empty())
                {
                    t.modules.erase(std::remove_if(t.modules.begin(), t.modules.end(), [&](const module_trend& m)
                                                   { return m.module.find(m_module) == std::string::npos; }),
                                    t.modules.end());
                    if (t.modules.empty())
                    {
                        return fail(exit_code::no_input, "no module containing '" + m_module + "' in the runs of "
                                                             + newest->fp.command + " on " + newest->fp.machine);
                    }
                }
                std::cout << render_trend(t, m_module.empty() && m_test.empty() ? 20 : 0);
                return exit_code::ok;
            }

            int table(history_store& store)
            {
                const auto newest = newest_matching(store);
                if (!newest)
                {
                    return fail(exit_code::no_input, no_run_matches(store));
                }
                const auto latest = store.latest_per_machine(newest->fp.command);
                std::vector<std::vector<history_identity>> rows;
                for (const auto& run : latest)
                {
                    rows.push_back(store.identities(run.id));
                }
                std::cout << render_machine_table(build_machine_table(newest->fp.command, latest, rows));
                return exit_code::ok;
            }

            // Every file is tried: one bad artifact of a matrix must not keep the others out.
            int import(history_store& store)
            {
                int worst = exit_code::ok;
                for (const auto& file : m_files)
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
                    const auto before = store.find(r);
                    const std::int64_t id = store.add_report(r, "import");
                    std::cout << "@" << id << (before ? " (already stored) " : " ") << one_line(file) << "\n";
                }
                return worst;
            }

            CLI::App* m_history = nullptr;
            CLI::App* m_list = nullptr;
            CLI::App* m_show = nullptr;
            CLI::App* m_trend = nullptr;
            CLI::App* m_diff = nullptr;
            CLI::App* m_import = nullptr;
            CLI::App* m_export = nullptr;
            CLI::App* m_table = nullptr;
            std::string m_store_option;
            history_filter m_filter;
            std::string m_command;
            std::string m_machine;
            std::string m_label;
            std::string m_module;
            std::string m_test;
            std::string m_run_a;
            std::string m_run_b;
            std::vector<std::string> m_files;
            std::string m_output;
            std::string m_by = "machine";
        };
    }

    std::unique_ptr<subcommand> history_command()
    {
        return std::make_unique<history_cmd>();
    }
}
