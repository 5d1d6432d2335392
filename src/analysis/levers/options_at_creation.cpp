// options-at-creation: each module a CS-3 or option-not-arrived finding names starts with the
// options it ended with, set as Warp creates it: no load under the old options.
#include "lever.hpp"
#include "xwarp/analysis/mechanisms.hpp"

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
                if (f->mechanism == mechanism_ids::late_options)
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
                else if (f->mechanism == mechanism_ids::option_not_arrived)
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

    namespace
    {
        // The replay's own records: a module given its final options at creation that still
        // built more than once was moved after its load by something else (a generic instance or a
        // kernel that came late), so the option alone cannot remove the rebuild.
        bool still_rebuilt(whatif_result& w, const lever_plan& p, const report&, const report& replay)
        {
            for (const auto& module : p.modules)
            {
                const int builds = cold_builds_of(replay, module);
                if (builds > 1)
                {
                    w.needs = "the replay still built " + module + " " + std::to_string(builds)
                              + " times with its options in place from its creation: something else changed it after "
                                "it loaded (a generic instance or a kernel that came late; its hash churn row says "
                                "which), and the fix also needs that change";
                    break;
                }
            }
            return false;
        }
    }

    namespace
    {
        // CS-3: the module's final options set where it is created (the top of its file), and the
        // late wp.set_module_options removed; option-not-arrived: the global set at the entry
        // point before the import that creates the module, and the late assignment removed.
        void code_form(fix_plan& p, const fix_input& in)
        {
            const json cause = in.f.cause.value();
            if (in.f.mechanism == mechanism_ids::option_not_arrived)
            {
                json remove = json::array();
                if (!in.f.locations.empty())
                {
                    remove.push_back({{"file", in.f.locations[0].file}, {"line", in.f.locations[0].line}});
                }
                p.ops.push_back(config_at_entry(field_or(cause, "option", std::string()), field_or(cause, "config_value", json()),
                                                "before the import that creates the module, which copies it", remove));
                return;
            }
            json options = json::object();
            json remove = json::array();
            for (const auto& c : field_or(cause, "changes", json::array()))
            {
                const json changed = field_or(field_or(c, "detail", json::object()), "options", json::object());
                for (const auto& [k, v] : changed.items())
                {
                    options[k] = field_or(v, "new", json());
                }
                if (c.contains("location") && c["location"].is_object())
                {
                    remove.push_back(c["location"]);
                }
            }
            const std::string file = module_file(in.cold, in.f.module);
            if (options.empty() || file.empty())
            {
                p.no_form = options.empty() ? "the records name no option that changed" : "the records do not say which file creates module " + in.f.module.str();
                return;
            }
            p.ops.push_back({{"op", "module_options"}, {"file", file}, {"options", options}, {"remove", remove}});
        }
    }

    extern const lever_def options_at_creation{
        {"options-at-creation", "sets each named module's final options as Warp creates it, so it is never loaded "
                                "under the options it had before",
         "options_at_creation.cpp"},
        &plan,
        nullptr,
        &still_rebuilt,
        &code_form};
}
