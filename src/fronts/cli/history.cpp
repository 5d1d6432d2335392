// warp-probe history list|show|diff|export|import|trend|table: the runs kept in the history
// store. The store and the trend analysis live below the history jobs (src/jobs/usecases/history_jobs.hpp);
// this file only parses, calls and prints.
#include <algorithm>
#include <iostream>

#include "command.hpp"
#include "shared.hpp"
#include "xwarp/fronts/options/front_options.hpp"
#include "xwarp/jobs/usecases/exit_codes.hpp"
#include "xwarp/jobs/usecases/history_jobs.hpp"
#include "xwarp/render/history_text.hpp"  // the history's tables, which only the terminal shows
#include "xwarp/render/printable.hpp"

namespace xwarp::cli
{
    namespace
    {
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
                int rc = exit_code::ok;
                try
                {
                    fronts::history_session store(m_store_option, m_import->parsed(), notes);
                    print_notes(notes);  // what the store said while it opened (a store moved aside on damage)
                    notes.clear();
                    rc = act(store);
                }
                catch (const fronts::job_error& e)
                {
                    print_notes(notes);
                    return fail(e);
                }
                print_notes(notes);  // what the store said while it worked
                return rc;
            }

        private:
            int act(fronts::history_session& store)
            {
                if (*m_list)
                {
                    write_view(std::cout, history_list_view(store.list(m_filter), store.path()), view_part::text);
                    return exit_code::ok;
                }
                if (*m_export)
                {
                    return write_text(m_output, store.export_json(m_run_a) + "\n");
                }
                if (*m_show)
                {
                    const auto shown = store.show(m_run_a);
                    std::cout << render_history_run(shown.run, shown.identities);
                    return exit_code::ok;
                }
                if (*m_diff)
                {
                    std::cout << render_history_diff(store.diff(m_run_a, m_run_b));
                    return exit_code::ok;
                }
                if (*m_trend)
                {
                    std::cout << render_trend(store.trend(series()), m_module.empty() && m_test.empty() ? 20 : 0);
                    return exit_code::ok;
                }
                if (*m_table)
                {
                    std::cout << render_machine_table(store.table(series()));
                    return exit_code::ok;
                }
                return import(store);
            }

            fronts::trend_request series() const
            {
                return {m_command, m_machine, m_label, m_module, m_test};
            }

            // Every file is tried: one bad artifact of a matrix must not keep the others out.
            int import(fronts::history_session& store)
            {
                int worst = exit_code::ok;
                for (const auto& f : store.import(m_files))
                {
                    if (!f.id)
                    {
                        worst = std::max(worst, fail(f.error_exit, f.error));
                        continue;
                    }
                    std::cout << "@" << *f.id << (f.already_stored ? " (already stored) " : " ") << one_line(f.file) << "\n";
                }
                return worst;
            }

            void add_list()
            {
                m_list = m_history->add_subcommand("list", "The stored runs, newest first");
                m_list->add_option("--label", m_filter.label, "only runs with this label");
                m_list->add_option("--command", m_filter.command, "only runs whose command contains this text");
                m_list->add_option("--machine", m_filter.machine, "only runs on this machine (host name)");
                add_run_kind_option(*m_list, m_filter.kind);
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
