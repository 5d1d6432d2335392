// CS-6: generic (Any-typed) kernels instantiated for a new signature after their module loaded:
// the instance Warp creates at the launch rebuilds the whole module.
#include "detector.hpp"

namespace xwarp::detect
{
    namespace
    {
        void detect(const context& ctx, sink& out)
        {
            churn_findings(ctx, "CS-6", {"overload"}, [](const finding&) {
                return std::string(
                    "Register the routine signatures with wp.overload(kernel, [...]) before the first launch (the "
                    "generic kernel keeps the instances it registers). Only for signatures the program really uses: "
                    "registering rare types makes every build bigger. Verify one identity with warp-probe compare.");
            }, out);
        }
    }

    extern const detector cs06_late_generic_instances{
        {"CS-6", "generic instances created after first load", finding_kind::diagnosis, "cs-6", "preregister-overloads", "",
         "cs06_late_generic_instances.cpp"},
        &detect,
        {change_claim::change(change_kind::generic_instance)}};
}
