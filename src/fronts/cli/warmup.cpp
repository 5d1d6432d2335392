// warp-probe warmup REPORT|@ID [-o FILE] [--workers N] [--device D] [--arch A] [--verify]: the
// run's identities as a Python file that builds them before the program runs, proved with
// --verify on fresh private caches.
#include <filesystem>
#include <iostream>

#include "command.hpp"
#include "shared.hpp"
#include "xwarp/jobs/usecases/exit_codes.hpp"
#include "xwarp/fronts/options/front_options.hpp"
#include "xwarp/jobs/usecases/use_cases.hpp"
#include "xwarp/render/warmup_file.hpp"  // where the runtime reads its plan

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
                    "Write a warm-up that builds every module identity the run built - module, device, block_dim, options "
                    "and generic instances - into Warp's kernel cache before the program runs: a container build step, a CI "
                    "cache primer, a job prolog, or an import at the application's start. It is two files: the runtime "
                    "(-o, a Python file needing only Warp, the same for every measurement with this xwarp) and the plan "
                    "beside it (NAME.json, data: what a re-measure changes). "
                    "A factory's kernels are made again by calling the factory (through the name its module exports) "
                    "with the arguments the run recorded, as data. Identities it cannot reach (a factory argument that is an "
                    "object, a closure inside another function, python -c code, types only the program defines, earlier "
                    "forms of a module that changed while it ran) are named with their cost. --verify proves it on fresh "
                    "private caches. The plan's SHA-256 is noted in this machine's ledger: the runtime builds only a plan "
                    "warp-probe wrote here, and elsewhere (CI, an image build) runs with --trust-plan[=SHA256].\n"
                    "Usage: warp-probe warmup REPORT.json|@ID [options]");
                m_args.add(sub, "write the plan (and the check) as JSON to this file",
                           "write the plan (and the check) as a self-contained HTML page", m_request.keep_records,
                           [&] { add_warmup_options(*sub, m_request, front::cli); });
                return sub;
            }

            int run() override
            {
                const auto& request = m_request;  // its defaults set where its options are (front_options)
                if (int code = outputs_apart(request.out))
                {
                    return code;
                }
                fronts::resolved_run run;
                cli_job job = m_args.job();
                if (int code = m_args.resolve_with_consent(run, job, true))  // the file it writes is code to run
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
                const view shown = warmup_view(plan, "warp-probe warmup " + m_args.report);
                if (int rc = write_view_files(shown, m_args.json, m_args.html))
                {
                    return rc;
                }
                write_view(std::cout, shown, view_part::text);
                if (outcome.interrupted)
                {
                    return interrupted_exit();
                }
                return exit_code_for_warmup(plan);
            }

        private:
            // The runtime (-o), its plan beside it, --json and --html are four files: one path
            // for two of them would leave the runtime without its plan, or the plan without its runtime.
            int outputs_apart(const std::string& runtime) const
            {
                if (runtime.empty())
                {
                    return 0;
                }
                const auto same = [](const std::string& a, const std::string& b)
                {
                    std::error_code ec;
                    return !a.empty() && !b.empty()
                           && std::filesystem::weakly_canonical(a, ec) == std::filesystem::weakly_canonical(b, ec);
                };
                const std::string plan = warmup_plan_path(runtime);
                // each refused before anything is planned or written: -o /dev/null writes no /dev/null.json
                if (int code = outputs_writable({runtime, plan, m_args.json, m_args.html}))
                {
                    return code;
                }
                for (const std::string* other : {&m_args.json, &m_args.html})
                {
                    if (same(*other, runtime) || same(*other, plan))
                    {
                        return fail(exit_code::usage, "warmup: " + *other + " is where the warm-up runtime (-o) or its plan ("
                                                          + plan + ") goes: give --json and --html other files");
                    }
                }
                return 0;
            }

            stored_run_args m_args;
            warmup_request m_request;
        };
    }

    std::unique_ptr<subcommand> warmup_command()
    {
        return std::make_unique<warmup_cmd>();
    }
}
