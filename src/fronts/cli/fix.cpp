// warp-probe fix REPORT|@ID [--finding ID|--lever L] [--out DIR] [--verify [--all] [--apply]]:
// each finding's code form as a patch, proved on a copy of the project with compare.
#include <iostream>

#include "command.hpp"
#include "shared.hpp"
#include "xwarp/jobs/usecases/exit_codes.hpp"
#include "xwarp/fronts/options/front_options.hpp"
#include "xwarp/jobs/usecases/use_cases.hpp"

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
                m_args.add(sub, "write the report with its fixes[] to this file",
                           "write the report with its fixes as a self-contained HTML page", m_request.keep_records,
                           [&] { add_fix_options(*sub, m_request, front::cli); });
                return sub;
            }

            int run() override
            {
                const auto& request = m_request;  // its defaults set where its options are (front_options)
                fronts::resolved_run run;
                cli_job job = m_args.job();
                if (int code = m_args.resolve_with_consent(run, job, request.verify))
                {
                    return code;
                }
                try
                {
                    return finish(fronts::fix(run, request, job.start(), run_kind::fix), run.ran_here);
                }
                catch (const fronts::job_error& e)
                {
                    return fail(e);
                }
            }

        private:
            int finish(const fronts::job_outcome& outcome, bool own)
            {
                const report& r = outcome.result;
                if (!m_args.json.empty())
                {
                    if (int rc = write_report_or_fail(m_args.json, r, m_args.history, own))
                    {
                        return rc;
                    }
                }
                const view shown = report_view(r, {"warp-probe fix " + r.label}, report_words::fix);
                if (int rc = write_view_files(shown, "", m_args.html))
                {
                    return rc;
                }
                if (outcome.interrupted)
                {
                    return interrupted_exit();
                }
                say_stored(outcome, m_args.quiet);
                write_view(std::cout, shown, view_part::text);
                return exit_code::ok;
            }

            stored_run_args m_args;
            fix_request m_request;
        };
    }

    std::unique_ptr<subcommand> fix_command()
    {
        return std::make_unique<fix_cmd>();
    }
}
