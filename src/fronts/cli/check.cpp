// warp-probe check REPORT|@ID --budget LIMITS: the CI gate on a saved report.
#include "command.hpp"
#include "shared.hpp"
#include <optional>

#include "xwarp/jobs/usecases/exit_codes.hpp"
#include "xwarp/jobs/usecases/judging.hpp"

namespace xwarp::cli
{
    namespace
    {
        class check_cmd : public subcommand
        {
        public:
            CLI::App* add(CLI::App& app) override
            {
                std::string metrics;
                for (const auto& m : fronts::limit_metrics())
                {
                    metrics += (metrics.empty() ? "" : ", ") + m;
                }
                auto* sub = app.add_subcommand(
                    "check",
                    "Check a report against a budget, for a CI gate: exits 8 when a limit is exceeded and names the "
                    "module that broke it.\nUsage: warp-probe check REPORT.json|@ID --budget "
                    "'identities<=12,builds-per-module<=1'");
                sub->add_option("report", m_report, "a JSON report, a stored run (@ID), or a label of the history")->required();
                sub->add_option("--budget", m_budget,
                                "LIMIT[,LIMIT...], LIMIT = METRIC<=NUMBER or METRIC>=NUMBER, METRIC: " + metrics
                                    + "; or option:MODULE.KEY=VALUE / option:@KERNEL.KEY=VALUE (the option the "
                                      "module's, or the kernel's module's, last cold load carried); a run that used a "
                                      "kernel cache outside the probe's is not judged; workload=same, kernels=same and "
                                      "results=same need --compare")
                    ->required();
                sub->add_option("--compare", m_baseline,
                                "the run whose launches (workload=same, kernels=same) and results (results=same) the "
                                "report must keep: a JSON report, a stored run (@ID) or a label, judged as compare's "
                                "launch gate");
                add_history_option(sub, m_history);
                return sub;
            }

            int run() override
            {
                if (int code = refuse_bad_budget(m_budget, !m_baseline.empty()))
                {
                    return code;
                }
                fronts::resolved_run run;
                if (int code = resolve_arg(m_report, m_history, run))
                {
                    return code;
                }
                std::optional<report> baseline;
                if (!m_baseline.empty())
                {
                    fronts::resolved_run before;
                    if (int code = resolve_arg(m_baseline, m_history, before))
                    {
                        return code;
                    }
                    baseline = fronts::show(std::move(before), m_history, false).analysed;
                }
                return print_budget(fronts::show(std::move(run), m_history, false).analysed, m_budget,
                                    baseline ? &*baseline : nullptr, m_baseline, m_report);
            }

        private:
            std::string m_report;
            std::string m_budget;
            std::string m_baseline;
            std::string m_history;
        };
    }

    std::unique_ptr<subcommand> check_command()
    {
        return std::make_unique<check_cmd>();
    }
}
