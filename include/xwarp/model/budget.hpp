// A budget and what checking a report against it found: plain data (the analysis checks,
// the renderers draw). The grammar and the metrics are in analysis/budget_check.hpp.
#ifndef XWARP_MODEL_BUDGET_HPP
#define XWARP_MODEL_BUDGET_HPP

#include <optional>
#include <string>

namespace xwarp
{
    // What a clause judges: a metric's value against a number (METRIC<=N, METRIC>=N), or a
    // property of the run: its launches, kernels or results against another run's (workload=same,
    // kernels=same, results=same), or an option a module loaded with (option:MODULE.KEY=VALUE).
    enum class limit_kind
    {
        metric,
        workload,
        kernels,
        results,
        option,
    };

    // The clauses judged against another run.
    inline bool judged_against_a_run(limit_kind k)
    {
        return k == limit_kind::workload || k == limit_kind::kernels || k == limit_kind::results;
    }

    struct budget_limit
    {
        limit_kind kind = limit_kind::metric;
        std::string metric;  // as written: the metric's name, or the clause's word
        double limit = 0.0;
        bool at_least = false;  // METRIC>=NUMBER (a floor) rather than METRIC<=NUMBER (a ceiling)
        // option:MODULE.KEY=VALUE (metric "option"): the module, the option and its value as JSON
        std::string module;
        std::string option;
        std::string value_json;
    };

    struct budget_result
    {
        limit_kind kind = limit_kind::metric;
        std::string metric;
        double limit = 0.0;
        bool at_least = false;
        std::optional<double> value;  // absent when the report cannot say (no good sample)
        bool exceeded = false;
        // false when no limit could be judged on this report (a kernel cache outside the probe's):
        // exceeded too, so a gate fails, but shown as not judged rather than over
        bool judged = true;
        std::string module;   // the module that broke it (or the heaviest one), with its device
        std::string message;  // one line: "builds-per-module 2 > 1: __main__ on cpu built 2 times"
    };

}

#endif
