// backward-modules: modules built with backward (adjoint) code in a cold pass, the most of any
// good sample: a module whose build generated an adjoint for any kernel (the kernel's own
// enable_backward, else the module's). Unknown when no load recorded enable_backward.
#include <set>

#include "metric.hpp"

namespace xwarp::budget_parts
{
    namespace
    {
        metric_reading measure(const metric_input& in)
        {
            metric_reading out;
            for (const auto& smp : in.r.samples)
            {
                if (!smp.ok())
                {
                    continue;
                }
                std::set<std::string> with_backward;
                bool known = false;
                for (const auto& ld : smp.cold.module_loads)
                {
                    const std::optional<bool> backward = ld.snapshot ? ld.snapshot->holds_backward_code() : std::nullopt;
                    if (!backward)
                    {
                        continue;
                    }
                    known = true;
                    if (*backward)
                    {
                        with_backward.insert(ld.module + " on " + ld.device);
                    }
                }
                if (known && (!out.value || static_cast<double>(with_backward.size()) > *out.value))
                {
                    out.value = static_cast<double>(with_backward.size());
                    out.module = with_backward.empty() ? std::string() : *with_backward.begin();
                    out.detail = with_backward.empty() ? std::string()
                                                       : out.module + " was built with backward (adjoint) code"
                                                             + (with_backward.size() > 1 ? " (and "
                                                                 + std::to_string(with_backward.size() - 1) + " more)" : "");
                }
            }
            if (!out.value)
            {
                out.detail = "no module load recorded its enable_backward option";
            }
            return out;
        }
    }

    extern const budget_metric backward_modules_metric{"backward-modules", &measure};
}
