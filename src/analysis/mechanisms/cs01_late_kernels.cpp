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

    namespace
    {
        using nlohmann::json;

        // Each late kernel's creation hoisted before the first launch (the factory's call when it
        // came from one), or, when it cannot move, its definition given a module of its own.
        void code_form(fix_plan& p, const fix_input& in)
        {
            json seen = json::array();
            for (const auto& c : field_or(in.f.cause.value(), "changes", json::array()))
            {
                const json at = field_or(c, "location", json());
                if (!at.is_object() || field_or(c, "trigger", std::string()) != "kernel")
                {
                    continue;
                }
                const json called = field_or(field_or(c, "trigger_detail", json::object()), "called_from", json());
                const json creation = called.is_object() ? called : at;
                if (std::find(seen.begin(), seen.end(), creation) != seen.end())
                {
                    continue;
                }
                seen.push_back(creation);
                // the definition moves within its block when a launch came before it there;
                // else its creation, where a factory was called
                json places = json::array({at});
                if (called.is_object())
                {
                    places.push_back(called);
                }
                p.ops.push_back({{"op", "hoist"},
                                 {"places", places},
                                 {"fallback", {{"file", at["file"]}, {"line", at["line"]}, {"module", "unique"}}}});
            }
            if (p.ops.empty())
            {
                p.no_form = "the records locate no kernel definition that came after the first launch";
            }
        }
    }

    extern const detector cs01_late_kernels{
        {"CS-1", "kernels defined after their module loaded", finding_kind::diagnosis, "cs-1", "",
         "moving a definition before the first launch changes the program's source; no run-time switch does it",
         "cs01_late_kernels.cpp"},
        &detect,
        {change_claim::change(change_kind::kernel_set), change_claim::change(change_kind::kernel_instances_added),
         change_claim::change(change_kind::kernel_content)},
        &code_form};
}
