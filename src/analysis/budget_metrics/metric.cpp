// The budget metrics, one line each (one file each beside this one), and what they share.
#include "metric.hpp"

namespace xwarp::budget_parts
{
    extern const budget_metric identities_metric;
    extern const budget_metric modules_metric;
    extern const budget_metric builds_per_module_metric;
    extern const budget_metric warm_builds_metric;
    extern const budget_metric cold_module_ms_metric;
    extern const budget_metric cold_wall_ms_metric;
    extern const budget_metric compile_elapsed_ms_metric;
    extern const budget_metric backward_modules_metric;
    extern const budget_metric build_overlap_metric;
    extern const budget_metric launch_builds_metric;

    const std::vector<const budget_metric*>& metric_registry()
    {
        static const std::vector<const budget_metric*> all = {
            &identities_metric,       &modules_metric,      &builds_per_module_metric,  &warm_builds_metric,
            &cold_module_ms_metric,   &cold_wall_ms_metric, &compile_elapsed_ms_metric, &backward_modules_metric,
            &build_overlap_metric,    &launch_builds_metric,
        };
        return all;
    }

    std::string where(const module_total& m)
    {
        return m.module + " on " + m.device;
    }
}
