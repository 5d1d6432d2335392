// warp-probe measure [options] [--] COMMAND...: the command measured (fixed samples, until
// settled, or with what-if replays: fronts::probe decides), stored, printed, gated.
#include <iostream>

#include "command.hpp"
#include "shared.hpp"
#include "xwarp/jobs/usecases/exit_codes.hpp"
#include "xwarp/jobs/usecases/judging.hpp"
#include "xwarp/fronts/options/validators.hpp"
#include "xwarp/fronts/options/front_options.hpp"
#include "xwarp/jobs/usecases/use_cases.hpp"
#include "xwarp/engine/install/layout.hpp"

namespace xwarp::cli
{
    namespace
    {
        class measure_cmd : public subcommand
        {
        public:
            CLI::App* add(CLI::App& app) override
            {
                auto* sub = app.add_subcommand(
                    "measure",
                    "Run COMMAND in fresh subprocesses, each sample with private WARP_CACHE_PATH and CUDA_CACHE_PATH,\n"
                    "cold then warm on the cache it just filled, and report every module Warp built.\n"
                    "Usage: warp-probe measure [options] [--] COMMAND [ARGS...]");
                add_probe_options(*sub, m_request, front::cli);
                sub->add_option("--json", m_json, "also write the JSON report to this file");
                sub->add_option("--label", m_request.label, "a name for this measurement (shown in reports and compare)");
                sub->add_option("--cwd", m_request.cwd, "run the command in this directory (default: the current one)");
                sub->add_option("--python", m_request.python, "interpreter that replaces a leading python/python3 in COMMAND");
                sub->add_flag("--quiet,-q", m_quiet, "no progress lines on stderr");
                sub->add_option("--trace", m_trace,
                                "also write the build timeline (the median sample's cold pass) as Chrome trace-event "
                                "JSON, for Perfetto or chrome://tracing");
                sub->add_option("--keep-records", m_request.keep_records,
                                "copy every pass's raw shim records into this directory (to debug the probe, or to "
                                "record tests/fixtures/streams)");
                add_history_option(sub, m_history);
                sub->add_option("--machine", m_request.machine,
                                "the name this machine goes by in the report and the history (default: its host name); "
                                "a fleet of ephemeral CI runners names its GPU kind here");
                std::string metrics;
                for (const auto& m : fronts::limit_metrics())
                {
                    metrics += (metrics.empty() ? "" : ", ") + m;
                }
                sub->add_option("--budget", m_budget,
                                "a CI gate: LIMIT[,LIMIT...], LIMIT = METRIC<=NUMBER or METRIC>=NUMBER (exit 8 when not "
                                "met), METRIC: " + metrics
                                    + "; or option:MODULE.KEY=VALUE / option:@KERNEL.KEY=VALUE (the option the "
                                      "module's, or the kernel's module's, last cold load carried); a run that used a "
                                      "kernel cache outside the probe's is not judged");
                add_replay_streams_option(sub, m_replay_streams);
                return sub;
            }

            std::vector<std::string>* command_words() override { return &m_request.command; }

            int run() override
            {
                if (m_request.command.empty())
                {
                    return fail(exit_code::usage, "measure needs a command: warp-probe measure [options] [--] COMMAND...");
                }
                if (int code = outputs_writable({m_json}))  // before minutes of measuring, not after
                {
                    return code;
                }
                if (!m_budget.empty())
                {
                    if (int code = refuse_bad_budget(m_budget, false))
                    {
                        return code;
                    }
                }
                fronts::probe_job job;
                job.request = m_request;
                job.store_as = run_kind::measure;  // measured here, with --whatif or not: trusted
                cli_job run(m_history, m_replay_streams, false, m_quiet);
                try
                {
                    return finish(fronts::probe(job, run.start()));
                }
                catch (const fronts::job_error& e)
                {
                    return fail(e);
                }
            }

        private:
            int finish(const fronts::job_outcome& outcome)
            {
                const report& r = outcome.result;
                if (!m_json.empty())
                {
                    if (int rc = write_report_or_fail(m_json, r, m_history, true))
                    {
                        return rc;
                    }
                }
                if (!m_trace.empty())
                {
                    if (int rc = write_view_part(m_trace, trace_view(r), view_part::data))
                    {
                        return rc;
                    }
                }
                if (outcome.interrupted)
                {
                    return interrupted_exit();
                }
                say_stored(outcome, m_quiet);
                write_view(std::cout, report_view(r, {}), view_part::text);
                if (const int failed = exit_code_for_measure(r); failed != exit_code::ok)
                {
                    return failed;
                }
                return m_budget.empty() ? exit_code::ok : print_budget(r, m_budget);
            }

            probe_request m_request;
            std::string m_json;
            std::string m_trace;
            std::string m_history;
            std::string m_budget;
            bool m_quiet = false;
            std::string m_replay_streams;
        };
    }

    std::unique_ptr<subcommand> measure_command()
    {
        return std::make_unique<measure_cmd>();
    }
}
