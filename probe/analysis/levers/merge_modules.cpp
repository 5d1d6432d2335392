// merge-modules: the small modules a CS-4 finding groups are declared as one module (kernels in
// a listed Python module's default module, or with module="NAME" for a listed name).
#include "lever.hpp"

namespace xwarp::levers
{
    namespace
    {
        void plan(lever_plan& p, const plan_input& in)
        {
            p.modules = cause_modules(in.findings);
            p.params["modules"] = p.modules;
            if (p.modules.empty())
            {
                p.not_applicable = "no group of small modules a merge could keep at one block_dim (no CS-4 finding)";
            }
        }
    }

    extern const lever_def merge_modules{
        {"merge-modules", "declares the kernels of the listed small modules in one merged module",
         "merge_modules.cpp"},
        &plan,
        {"kernels_moved"}};
}
