// warp-probe whatif REPORT|@ID [LEVER...]: levers replayed on a saved report's command.
#include <iostream>

#include "command.hpp"
#include "shared.hpp"
#include "xwarp/analysis/whatif.hpp"
#include "xwarp/fronts/exit_codes.hpp"
#include "xwarp/fronts/use_cases.hpp"
#include "xwarp/install/layout.hpp"
#include "xwarp/render/text.hpp"

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
                sub->add_option("report", m_report, "a JSON report written by measure --json, or a stored run (@ID)")
                    ->required();
                add_history_option(sub, m_history);
                sub->add_option("levers", m_request.levers,
                                "levers to replay (default: auto, the levers of the report's findings): " + lever_names());
                add_replay_options(*sub, m_request);
                sub->add_option("--json", m_json, "write the report with its whatif[] results to this file");
                sub->add_flag("--quiet,-q", m_quiet, "no progress lines on stderr");
                add_run_option(sub, m_run);
                return sub;
            }

            int run() override
            {
                report saved;
                if (int code = load_report_arg(m_report, m_history, saved))
                {
                    return code;
                }
                if (int code = consent_to_replay(saved, m_report, m_history, m_run))
                {
                    return code;
                }
                // as it was measured (--nvrtc-trace too: it changes the hashes the replays are judged on)
                measure_options options = fronts::rerun_settings(saved);
                options.shim_dir = default_shim_dir();
                install_signal_handlers();
                progress observer(m_quiet);
                report r;
                try
                {
                    r = fronts::replay(saved, options, m_request, &observer, interrupt_check());
                }
                catch (const unknown_lever& e)
                {
                    return fail(exit_code::usage, e.what());
                }
                catch (const probe_error& e)
                {
                    return fail(exit_code_of(e), e.what());
                }
                if (!m_json.empty())
                {
                    if (int rc = write_report_or_fail(m_json, r))
                    {
                        return rc;
                    }
                }
                if (r.status == "interrupted")
                {
                    return interrupted_exit();
                }
                store_run(m_history, r, "whatif", m_quiet);
                std::cout << render_whatif_text(r);
                return exit_code::ok;
            }

        private:
            std::string m_report;
            std::string m_history;
            std::string m_json;
            replay_request m_request;
            bool m_quiet = false;
            bool m_run = false;
        };
    }

    std::unique_ptr<subcommand> whatif_command()
    {
        return std::make_unique<whatif_cmd>();
    }
}
