// dependency-change: a @wp.func (or wp.static value) the module calls changed after it loaded;
// Warp hashes callees deeply, so every module calling it rebuilds.
#include "detector.hpp"

namespace xwarp::detect
{
    namespace
    {
        void detect(const context& ctx, sink& out)
        {
            churn_findings(ctx, "dependency-change", {"function", "kernel", "struct"}, [](const finding&) {
                return std::string(
                    "A @wp.func (or wp.static value) this module calls changed after the module loaded; every module "
                    "calling it rebuilds. Define or redefine shared functions before any launch, or isolate the "
                    "changing function in the module that needs it.");
            }, out);
        }
    }

    extern const detector dependency_change{
        {"dependency-change", "a called function changed after load", finding_kind::diagnosis, "dependency-change", "",
         "the changed function is the program's own code; no run-time switch keeps it stable",
         "dependency_change.cpp"},
        &detect,
        {change_claim::change(change_kind::dependency)}};
}
