// warp-probe fix REPORT|@ID [--finding ID|--lever L] [--out DIR] [--verify [--all] [--apply]]:
// each finding's code form as a patch, proved on a copy of the project with compare.
#include <iostream>

#include "command.hpp"
#include "shared.hpp"
#include "xwarp/fronts/exit_codes.hpp"
#include "xwarp/fronts/replay_trust.hpp"
#include "xwarp/fronts/use_cases.hpp"
#include "xwarp/install/layout.hpp"
#include "xwarp/render/html.hpp"
#include "xwarp/render/text.hpp"

namespace xwarp::cli
{
    namespace
    {
        class fix_cmd : public subcommand
        {
        public:
            CLI::App* add(CLI::App& app) override
            {
                auto* sub = app.add_subcommand(
                    "fix",
                    "Write each finding's code form as a patch against the program's own files (DIR/<mechanism>-<lever>.patch, "
                    "for git apply or patch -p1) and, with --verify, prove it on a copy of the project: the same command "
                    "measured there against the unpatched program, as compare judges. Your files are touched only with "
                    "--apply, and then only by verified patches.\nUsage: warp-probe fix REPORT.json|@ID [options]");
                sub->add_option("report", m_report, "a JSON report written by measure --json, or a stored run (@ID)")->required();
                add_history_option(sub, m_history);
                add_fix_options(*sub, m_options, front::cli);
                sub->add_option("--json", m_json, "write the report with its fixes[] to this file");
                sub->add_option("--html", m_html, "write the report with its fixes as a self-contained HTML page");
                sub->add_option("--timeout", m_timeout, "with --verify: seconds each pass may run")->check(CLI::PositiveNumber);
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
                fix_request request;
                request.finding = m_options.finding;
                request.lever = m_options.lever;
                request.out_dir = m_options.out_dir.empty() ? "xwarp-fixes" : m_options.out_dir;
                request.verify = m_options.verify;
                request.all = m_options.all;
                request.apply = m_options.apply;
                request.samples = m_options.samples;
                install_signal_handlers();
                progress observer(m_quiet);
                report r;
                try
                {
                    measure_options options = fronts::rerun_options(saved, "the report (" + m_report + ")");
                    if (request.verify)
                    {
                        if (int code = consent_to_replay(saved, m_report, m_history, m_run))
                        {
                            return code;
                        }
                    }
                    else if (!m_run && !fronts::check_replay(saved, m_history).ran_here)
                    {
                        // the fixer only parses the program, but with the Python the report names:
                        // from elsewhere, that path is data too
                        request.fixer_python = "python3";
                    }
                    options.shim_dir = default_shim_dir();
                    if (m_timeout > 0)
                    {
                        options.timeout_s = m_timeout;
                    }
                    r = fronts::fix(saved, options, request, &observer, interrupt_check());
                }
                catch (const fix_write_error& e)
                {
                    return fail(exit_code::cannot_write, e.what());
                }
                catch (const fix_error& e)
                {
                    return fail(exit_code::usage, e.what());
                }
                catch (const probe_error& e)
                {
                    return fail(exit_code_of(e), e.what());
                }
                return finish(r);
            }

        private:
            int finish(const report& r)
            {
                if (!m_json.empty())
                {
                    if (int rc = write_report_or_fail(m_json, r))
                    {
                        return rc;
                    }
                }
                if (!m_html.empty())
                {
                    if (int rc = write_text(m_html, html_page("warp-probe fix " + r.label, render_html(r))))
                    {
                        return rc;
                    }
                }
                if (r.status == "interrupted")
                {
                    return interrupted_exit();
                }
                store_run(m_history, r, "fix", m_quiet);
                std::cout << render_fix_text(r);
                return exit_code::ok;
            }

            std::string m_report;
            std::string m_history;
            std::string m_json;
            std::string m_html;
            double m_timeout = 0.0;
            fix_options m_options;
            bool m_quiet = false;
            bool m_run = false;
        };
    }

    std::unique_ptr<subcommand> fix_command()
    {
        return std::make_unique<fix_cmd>();
    }
}
