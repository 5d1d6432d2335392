// warp-probe warmup REPORT|@ID [-o FILE] [--workers N] [--device D] [--arch A] [--verify]: the
// run's identities as a Python file that builds them before the program runs, proved with
// --verify on fresh private caches.
#include <iostream>

#include "command.hpp"
#include "shared.hpp"
#include "xwarp/jobs/usecases/exit_codes.hpp"
#include "xwarp/fronts/options/front_options.hpp"
#include "xwarp/jobs/usecases/use_cases.hpp"
#include "xwarp/render/html.hpp"
#include "xwarp/render/warmup_file.hpp"

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
                sub->add_option("report", m_report, "a JSON report written by measure --json, a stored run (@ID), or a label of the history")->required();
                add_history_option(sub, m_history);
                add_warmup_options(*sub, m_request, front::cli);
                sub->add_option("--json", m_json, "write the plan (and the check) as JSON to this file");
                sub->add_option("--html", m_html, "write the plan (and the check) as a self-contained HTML page");
                sub->add_flag("--quiet,-q", m_quiet, "no progress lines on stderr");
                add_run_option(sub, m_run);
                add_replay_streams_option(sub, m_replay_streams, &m_keep_records);
                return sub;
            }

            int run() override
            {
                fronts::resolved_run run;
                if (int code = resolve_arg(m_report, m_history, run))
                {
                    return code;
                }
                warmup_request request = m_request;
                request.out = request.out.empty() ? "warp_warmup.py" : request.out;
                cli_job job(m_history, m_replay_streams, m_keep_records, m_run, m_quiet);
                if (int code = job.consent({&run}))
                {
                    return code;
                }
                fronts::warmup_outcome outcome;
                try
                {
                    outcome = fronts::warm_up(run, request, job.start());
                }
                catch (const fronts::job_error& e)
                {
                    return fail(e);
                }
                const warmup_plan& plan = outcome.plan;
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
                if (outcome.interrupted)
                {
                    return interrupted_exit();
                }
                if (plan.covered == 0)
                {
                    return exit_code::check_failed;  // asked for a warm-up, and there is none to give
                }
                return plan.check && plan.check->verdict != warmup_verdict::verified ? exit_code::check_failed : exit_code::ok;
            }

        private:
            std::string m_report;
            std::string m_history;
            std::string m_json;
            std::string m_html;
            warmup_request m_request;
            bool m_quiet = false;
            bool m_run = false;
            std::string m_replay_streams;
            std::string m_keep_records;
        };
    }

    std::unique_ptr<subcommand> warmup_command()
    {
        return std::make_unique<warmup_cmd>();
    }
}
