// launch-builds: compiled loads a launch waited for (not a preload's), the most of any good sample.
#include "metric.hpp"

namespace xwarp::budget_parts
{
    namespace
    {
        metric_reading measure(const metric_input& in)
        {
            metric_reading out;
            int most = 0;
            for (const auto& smp : in.r.samples)
            {
                if (!smp.ok())
                {
                    continue;
                }
                int n = 0;
                std::string first;
                for (const auto& ld : smp.cold.module_loads)
                {
                    if (ld.status == load_status::compiled && !ld.via_preload)
                    {
                        first = first.empty() ? ld.module + " on " + ld.device : first;
                        ++n;
                    }
                }
                if (n > most)
                {
                    most = n;
                    out.module = first;
                }
            }
            out.value = most;
            if (most > 0)
            {
                out.detail = "the first a launch waited for: " + out.module;
            }
            return out;
        }
    }

    extern const budget_metric launch_builds_metric{"launch-builds", &measure};
}
