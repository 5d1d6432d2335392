// builds-per-module: the most builds of one module (per device) in a cold pass.
#include "metric.hpp"

namespace xwarp::budget_parts
{
    namespace
    {
        metric_reading measure(const metric_input& in)
        {
            metric_reading out;
            const module_total* worst = nullptr;
            int over = 0;  // how many modules pass the limit
            for (const auto& m : in.r.result.modules)
            {
                worst = !worst || m.builds > worst->builds ? &m : worst;
                over += m.builds > in.limit.limit ? 1 : 0;
            }
            if (!worst)
            {
                out.value = 0.0;
                return out;
            }
            out.value = worst->builds;
            out.module = where(*worst);
            out.detail = out.module + " built " + std::to_string(worst->builds) + " time(s)"
                         + (over > 1 ? " (" + std::to_string(over) + " modules over the limit)" : std::string());
            return out;
        }
    }

    extern const budget_metric builds_per_module_metric{"builds-per-module", &measure};
}
