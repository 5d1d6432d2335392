// hash-thrash: a module's hash went back to an earlier value (A -> B -> A): two kernel or option
// sets take turns, and every switch reloads or rebuilds it.
#include "detector.hpp"

namespace xwarp::detect
{
    namespace
    {
        void detect(const context& ctx, sink& out)
        {
            churn_findings(ctx, "hash-thrash", {}, [](const finding&) {
                return std::string(
                    "Two kernel sets or option sets take turns in this module, so each switch reloads (or rebuilds) "
                    "it. Give each stable set its own module, and create every kernel before the first launch.");
            }, out);
        }
    }

    extern const detector hash_thrash{
        {"hash-thrash", "module hash returned to an earlier value", finding_kind::diagnosis, "hash-thrash", "",
         "the alternating sets are the program's structure; splitting them is a code change", "hash_thrash.cpp"},
        &detect,
        {change_claim::returning()}};
}
