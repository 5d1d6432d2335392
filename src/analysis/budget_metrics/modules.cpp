// modules: distinct modules (per device) the run built.
#include "metric.hpp"

namespace xwarp::budget_parts
{
    namespace
    {
        metric_reading measure(const metric_input& in)
        {
            return {static_cast<double>(in.r.result.modules.size()), {}, {}};
        }
    }

    extern const budget_metric modules_metric{"modules", &measure};
}
