// warp-probe warmup REPORT|@ID [-o FILE] [--workers N] [--device D] [--arch A] [--verify]: the
// run's identities as a Python file that builds them before the program runs, proved with
// --verify on fresh private caches.
#include <iostream>

#include "command.hpp"
#include "shared.hpp"
#include "xwarp/fronts/exit_codes.hpp"
#include "xwarp/fronts/replay_trust.hpp"
#include "xwarp/fronts/use_cases.hpp"
#include "xwarp/install/layout.hpp"
#include "xwarp/render/html.hpp"
#include "xwarp/render/warmup.hpp"

namespace xwarp::cli
{
    namespace
    {
        class warmup_cmd : public subcommand
        {
        public:
            CLI::App* add(CLI::App& app) override
            {
                auto* sub = app.add_subcommand(
                    "warmup",
                    "Write a Python file (needing only Warp) that builds every module identity the run built - module, "
                    "device, block_dim, options and generic instances - into Warp's kernel cache before the program runs: a "
                    "container build step, a CI cache primer, a job prolog, or an import at the application's start. "
                    "A factory's kernels are made again by calling the factory (through the name its module exports) "
                    "with the arguments the run recorded, as data. Identities it cannot reach (a factory argument that is an "
                    "object, a closure inside another function, python -c code, types only the program defines, earlier "
                    "forms of a module that changed while it ran) are named with their cost. --verify proves it on fresh "
                    "private caches.\n"
                    "Usage: warp-probe warmup REPORT.json|@ID [options]");
                sub->add_option("report", m_report, "a JSON report written by measure --json, or a stored run (@ID)")->required();
                add_history_option(sub, m_history);
                add_warmup_options(*sub, m_options, front::cli);
                sub->add_option("--json", m_json, "write the plan (and the check) as JSON to this file");
                sub->add_option("--html", m_html, "write the plan (and the check) as a self-contained HTML page");
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
                warmup_job job;
                job.plan.source = m_report;
                job.plan.workers = m_options.workers;
                job.plan.device = m_options.device;
                job.plan.arch = m_options.arch;
                job.out_path = m_options.out.empty() ? "warp_warmup.py" : m_options.out;
                job.verify = m_options.verify;
                job.samples = m_options.samples;
                install_signal_handlers();
                progress observer(m_quiet);
                warmup_plan plan;
                try
                {
                    measure_options options = fronts::rerun_settings(saved);
                    if (job.verify)
                    {
                        options = fronts::rerun_options(saved, "the report (" + m_report + ")");
                        if (int code = consent_to_replay(saved, m_report, m_history, m_run))
                        {
                            return code;
                        }
                    }
                    options.shim_dir = default_shim_dir();
                    if (m_timeout > 0)
                    {
                        options.timeout_s = m_timeout;
                    }
                    plan = fronts::warm_up(saved, options, job, &observer, interrupt_check());
                }
                catch (const warmup_error& e)
                {
                    return fail(e.cannot_write ? exit_code::cannot_write : exit_code::usage, e.what());
                }
                catch (const probe_error& e)
                {
                    return fail(exit_code_of(e), e.what());
                }
                if (!m_json.empty())
                {
                    if (int rc = write_json_or_fail(m_json, nlohmann::json(plan)))
                    {
                        return rc;
                    }
                }
                if (!m_html.empty())
                {
                    if (int rc = write_text(m_html, html_page("warp-probe warmup " + m_report,
                                                              render_preformatted_html(render_warmup_text(plan)))))
                    {
                        return rc;
                    }
                }
                std::cout << render_warmup_text(plan);
                if (plan.check && plan.check->verdict == "interrupted")
                {
                    return interrupted_exit();
                }
                return plan.check && plan.check->verdict != "verified" ? exit_code::check_failed : exit_code::ok;
            }

        private:
            std::string m_report;
            std::string m_history;
            std::string m_json;
            std::string m_html;
            double m_timeout = 0.0;
            warmup_options m_options;
            bool m_quiet = false;
            bool m_run = false;
        };
    }

    std::unique_ptr<subcommand> warmup_command()
    {
        return std::make_unique<warmup_cmd>();
    }
}
