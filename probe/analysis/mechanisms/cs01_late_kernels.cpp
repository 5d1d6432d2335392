// CS-1: kernels (or functions, structs) defined after their module loaded, so the module built
// again with the new definition: closures created at run time, factories, definitions after
// the first wp.launch.
#include "detector.hpp"

namespace xwarp::detect
{
    namespace
    {
        void detect(const context& ctx, sink& out)
        {
            churn_findings(ctx, "CS-1", {"kernel", "function", "struct"}, [](const finding&) {
                return std::string(
                    "Define these kernels before the module's first launch: move them to module scope (keep their "
                    "names), or create every dynamic kernel before the first wp.launch. Kernels that really depend "
                    "on runtime data (plugins, user expressions) belong in a module of their own so they stop "
                    "rebuilding this one; module=\"unique\" is the last resort. Verify with warp-probe compare: one "
                    "identity for this module and the same launches.");
            }, out);
        }
    }

    extern const detector cs01_late_kernels{
        {"CS-1", "kernels defined after their module loaded", "diagnosis", "cs-1", "",
         "moving a definition before the first launch changes the program's source; no run-time switch does it",
         "cs01_late_kernels.cpp"},
        &detect,
        {"kernel-set-change", "kernel-instances-added", "kernel-content-change"}};
}
