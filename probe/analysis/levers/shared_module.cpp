// shared-module: the one-kernel module="unique" modules a CS-9 finding names are declared in one
// shared module instead (their kernels keep their names and options).
#include <algorithm>

#include "lever.hpp"
#include "xwarp/analysis/mechanisms.hpp"

namespace xwarp::levers
{
    namespace
    {
        void plan(lever_plan& p, const plan_input& in)
        {
            const std::vector<std::string> names = cause_modules(in.findings);
            std::vector<std::string> kernels;
            for (const auto& l : in.cold.module_loads)
            {
                const bool named = names.empty() ? !unique_module_kernel(l.module).empty()
                                                 : std::find(names.begin(), names.end(), l.module) != names.end();
                if (named && l.snapshot && l.snapshot->kernels.size() == 1)
                {
                    add_unique(kernels, l.snapshot->kernels[0].key);
                    add_unique(p.modules, l.module);
                }
            }
            p.params["kernels"] = kernels;
            if (kernels.empty())
            {
                p.not_applicable = "no module=\"unique\" kernel was built";
            }
        }
    }

    extern const lever_def shared_module{
        {"shared-module", "declares the named module=\"unique\" kernels in one shared module instead (a kernel with "
                          "module options of its own stays unique)",
         "shared_module.cpp"},
        &plan,
        {"kernels_moved"}};
}
