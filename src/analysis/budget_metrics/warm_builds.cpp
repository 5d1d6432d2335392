// warm-builds: builds in a warm pass, on the cache the cold pass filled (0 when it is reused).
#include <algorithm>
#include <map>

#include "metric.hpp"

namespace xwarp::budget_parts
{
    namespace
    {
        // The most of any good sample, with the module that built most there.
        metric_reading measure(const metric_input& in)
        {
            metric_reading out;
            int most = 0;
            std::map<std::string, int> by_module;
            for (const auto& smp : in.r.samples)
            {
                if (!smp.ok() || !smp.warm)  // a one-pass sample has no warm pass to count
                {
                    continue;
                }
                std::map<std::string, int> here;
                int n = 0;
                for (const auto& ld : smp.warm->module_loads)
                {
                    if (ld.status == load_status::compiled)
                    {
                        ++n;
                        ++here[ld.module + " on " + ld.device];
                    }
                }
                if (n > most || by_module.empty())
                {
                    most = std::max(most, n);
                    by_module = here;
                }
            }
            out.value = most;
            if (most > 0)
            {
                const auto top = std::max_element(by_module.begin(), by_module.end(),
                                                  [](const auto& a, const auto& c) { return a.second < c.second; });
                out.module = top->first;
                out.detail = out.module + " built " + std::to_string(top->second) + " time(s) on a warm cache";
            }
            return out;
        }
    }

    extern const budget_metric warm_builds_metric{"warm-builds", &measure};
}
