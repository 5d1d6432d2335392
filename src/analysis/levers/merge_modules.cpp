// merge-modules: the small modules a CS-4 finding groups are declared as one module (kernels in
// a listed Python module's default module, or with module="NAME" for a listed name).
#include "lever.hpp"

namespace xwarp::levers
{
    namespace
    {
        void plan(lever_plan& p, const plan_input& in)
        {
            if (const finding* late = created_between_launches(in.findings))
            {
                p.not_applicable = "modules of " + late->mechanism.str() + " are created between launches: merged as "
                                   "they are, the merged module would rebuild at each new kernel; the fix also moves their "
                                   "creation, a change to the program";
                return;
            }
            p.modules = cause_modules(in.findings);
            p.params["modules"] = p.modules;
            if (p.modules.empty())
            {
                p.not_applicable = "no group of small modules a merge could keep at one block_dim (no CS-4 finding)";
            }
        }
    }

    namespace
    {
        bool rebuilt_as_kernels_arrived(whatif_result& w, const lever_plan&, const report&, const report& replay)
        {
            return note_module_rebuilt(w, replay, "xwarp_whatif_merged", "merged");
        }
    }

    extern const lever_def merge_modules{
        {"merge-modules", "declares the kernels of the listed small modules in one merged module",
         "merge_modules.cpp"},
        &plan,
        nullptr,
        &rebuilt_as_kernels_arrived,
        nullptr,
        "merging small modules moves kernels between files and imports: which to merge is a design choice, not a "
        "mechanical edit (the merge-modules replay measures one merge)"};
}
