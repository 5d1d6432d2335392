// options-at-creation: each module a CS-3 or option-not-arrived finding names starts with the
// options it ended with, set as Warp creates it: no load under the old options.
#include "lever.hpp"

namespace xwarp::levers
{
    namespace
    {
        using nlohmann::json;

        void plan(lever_plan& p, const plan_input& in)
        {
            json modules = json::object();
            for (const auto* f : in.findings)
            {
                if (f->mechanism == "CS-3")
                {
                    for (const auto& c : field_or(f->cause.value(), "changes", json::array()))
                    {
                        const json options = field_or(field_or(c, "detail", json::object()), "options", json::object());
                        for (const auto& [k, v] : options.items())
                        {
                            modules[f->module][k] = field_or(v, "new", json());
                        }
                    }
                }
                else if (f->mechanism == "option-not-arrived")
                {
                    const json cause = f->cause.value();
                    modules[f->module][field_or(cause, "option", std::string("?"))] = field_or(cause, "config_value", json());
                }
            }
            for (const auto& [m, o] : modules.items())
            {
                add_unique(p.modules, m);
            }
            p.params["modules"] = modules;
            if (modules.empty())
            {
                p.not_applicable = "no option changed after a module was created";
            }
        }
    }

    extern const lever_def options_at_creation{
        {"options-at-creation", "sets each named module's final options as Warp creates it, so it is never loaded "
                                "under the options it had before",
         "options_at_creation.cpp"},
        &plan,
        {"modules", "options"}};
}
