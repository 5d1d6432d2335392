// CS-3: module options changed after the module loaded (wp.set_module_options after a launch),
// so the module built again under the new options.
#include "detector.hpp"

namespace xwarp::detect
{
    namespace
    {
        std::string recommend(const finding& f)
        {
            std::vector<std::string> keys;
            for (const auto& c : field_or(f.cause.value(), "changes", nlohmann::json::array()))
            {
                const auto options = field_or(field_or(c, "detail", nlohmann::json::object()), "options", nlohmann::json::object());
                for (const auto& [k, v] : options.items())
                {
                    if (std::find(keys.begin(), keys.end(), k) == keys.end())
                    {
                        keys.push_back(k);
                    }
                }
            }
            return "Set " + (keys.empty() ? std::string("these options") : join(keys))
                   + " before the module's first load (wp.set_module_options at the top of the module, or "
                     "wp.get_module(name).options while it is empty). If kernels really need different options, "
                     "give them their own module. Verify the module now loads under one hash.";
        }

        void detect(const context& ctx, sink& out)
        {
            churn_findings(ctx, mechanism_ids::late_options, {"options"}, recommend, out);
        }
    }

    extern const detector cs03_late_options{
        {mechanism_ids::late_options, "module options changed after first load", finding_kind::diagnosis, "cs-3", "options-at-creation", "",
         "cs03_late_options.cpp"},
        &detect,
        {change_claim::change(change_kind::option)}};
}
