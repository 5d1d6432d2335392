// unexplained-rebuild: the hash moved and the recorded content shows no reason (or there is no
// content snapshot, when the figures come from Warp's log). Never guessed.
#include "detector.hpp"

namespace xwarp::detect
{
    namespace
    {
        void detect(const context& ctx, sink& out)
        {
            churn_findings(ctx, "unexplained-rebuild", {}, [](const finding&) {
                return std::string(
                    "The recorded content does not explain this hash change (no kernel, option or function "
                    "difference, or no content snapshot). Check for cache_kernels=False or "
                    "verify_autograd_array_access, and look at the dirtying events listed in the cause.");
            }, out);
        }
    }

    extern const detector unexplained_rebuild{
        {"unexplained-rebuild", "module rebuilt for a reason the records do not show", finding_kind::diagnosis,
         "unexplained-rebuild", "", "the cause is not known, so there is nothing to switch", "unexplained_rebuild.cpp"},
        &detect,
        {change_claim::any_other()}};
}
