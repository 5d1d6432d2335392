// A budget metric (METRIC<=N, METRIC>=N in --budget and --expect): one file per metric in this
// folder, each defining one `budget_metric`, listed once in metric.cpp. check_budget
// (budget_check.cpp) parses the limit, asks the metric for its value and judges it.
// To add one: a file here, a line in metric.cpp, a row in references/cli.md's list.
#ifndef XWARP_ANALYSIS_BUDGET_METRICS_METRIC_HPP
#define XWARP_ANALYSIS_BUDGET_METRICS_METRIC_HPP

#include <optional>
#include <string>
#include <vector>

#include "xwarp/model/budget.hpp"
#include "xwarp/model/report.hpp"

namespace xwarp::budget_parts
{
    // What a metric reads: the analysed report, and the two modules a message names by default.
    struct metric_input
    {
        const report& r;
        const budget_limit& limit;
        const module_total* heaviest = nullptr;         // the module with the most build time
        const module_total* most_identities = nullptr;  // the module with the most identities
    };

    // What it found: the value (none when the report cannot say), the module that broke or leads
    // it ("MODULE on DEVICE"), and a detail for the message.
    struct metric_reading
    {
        std::optional<double> value;
        std::string module;
        std::string detail;
    };

    struct budget_metric
    {
        const char* name;  // as the user writes it: "builds-per-module" (what it counts: its file's first line)
        metric_reading (*measure)(const metric_input& in);
    };

    // Every metric, in the order --help lists them.
    const std::vector<const budget_metric*>& metric_registry();

    // "MODULE on DEVICE".
    std::string where(const module_total& m);
}

#endif
