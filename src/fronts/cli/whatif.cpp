// warp-probe whatif REPORT|@ID [LEVER...]: levers replayed on a saved report's command.
#include <iostream>

#include "command.hpp"
#include "shared.hpp"
#include "xwarp/jobs/usecases/exit_codes.hpp"
#include "xwarp/fronts/options/front_options.hpp"
#include "xwarp/jobs/usecases/use_cases.hpp"
#include "xwarp/engine/install/layout.hpp"

namespace xwarp::cli
{
    namespace
    {
        class whatif_cmd : public subcommand
        {
        public:
            CLI::App* add(CLI::App& app) override
            {
                auto* sub = app.add_subcommand("whatif",
                                               "Replay levers on a saved report's command, unmodified, and measure each "
                                               "against fresh baseline samples interleaved with it.\nUsage: warp-probe "
                                               "whatif REPORT.json [LEVER...]");
                sub->add_option("report", m_report, "a JSON report written by measure --json, a stored run (@ID), or a label of the history")
                    ->required();
                add_history_option(sub, m_history);
                add_lever_positional(*sub, m_request.levers,
                                     "levers to replay (default: auto, the levers of the report's findings): " + lever_names());
                add_replay_options(*sub, m_request);
                sub->add_option("--json", m_json, "write the report with its whatif[] results to this file");
                sub->add_flag("--quiet,-q", m_quiet, "no progress lines on stderr");
                add_run_option(sub, m_run);
                add_replay_streams_option(sub, m_replay_streams);
                return sub;
            }

            int run() override
            {
                fronts::resolved_run run;
                if (int code = resolve_arg(m_report, m_history, run))
                {
                    return code;
                }
                cli_job job(m_history, m_replay_streams, m_run, m_quiet);
                if (int code = job.consent({&run}))
                {
                    return code;
                }
                fronts::job_outcome outcome;
                try
                {
                    outcome = fronts::replay(run, m_request, job.start(), run_kind::whatif);
                }
                catch (const fronts::job_error& e)
                {
                    return fail(e);
                }
                if (!m_json.empty())
                {
                    // the replay of the user's own run is theirs too; of someone else's, it stays foreign
                    if (int rc = write_report_or_fail(m_json, outcome.result, m_history, run.ran_here))
                    {
                        return rc;
                    }
                }
                if (outcome.interrupted)
                {
                    return interrupted_exit();
                }
                say_stored(outcome, m_quiet);
                write_view(std::cout, report_view(outcome.result, {}, report_words::whatif), view_part::text);
                return exit_code::ok;
            }

        private:
            std::string m_report;
            std::string m_history;
            std::string m_json;
            replay_request m_request;
            bool m_quiet = false;
            bool m_run = false;
            std::string m_replay_streams;
        };
    }

    std::unique_ptr<subcommand> whatif_command()
    {
        return std::make_unique<whatif_cmd>();
    }
}
