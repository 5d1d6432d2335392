// option-not-arrived: a wp.config value set after the module copied it at creation (Warp
// copies enable_backward, max_unroll, lineinfo, ... when a module is created), so the module
// was built without it.
#include <set>

#include "detector.hpp"

namespace xwarp::detect
{
    namespace
    {
        using nlohmann::json;

        void detect(const context& ctx, sink& out)
        {
            const run_result& run = ctx.first_cold();
            std::set<std::pair<std::string, std::string>> reported;
            for (const auto& l : run.module_loads)
            {
                if (l.config_mismatch.is_empty_object())
                {
                    continue;
                }
                const json mismatch = l.config_mismatch.value();
                if (!mismatch.is_object() || mismatch.empty())
                {
                    continue;
                }
                const process_record* p = process_of(run, l.pid);
                if (!p)
                {
                    continue;
                }
                for (const auto& [key, v] : mismatch.items())
                {
                    if (reported.count({l.module, key}) || !v.is_object())
                    {
                        continue;
                    }
                    // The user's assignment of that global, and when the module was created.
                    const config_set_event* set = nullptr;
                    for (const auto& c : p->config_sets)
                    {
                        if (c.key == key && c.new_value == field_or(v, "config", json()))
                        {
                            set = &c;
                        }
                    }
                    if (!set)
                    {
                        continue;  // the global was never set by user code: nothing was meant
                    }
                    const module_created_event* created = nullptr;
                    for (const auto& m : p->modules_created)
                    {
                        if (m.module == l.module)
                        {
                            created = &m;
                            break;
                        }
                    }
                    if (created && created->seq > set->seq)
                    {
                        continue;  // set before creation: a later module option overrode it on purpose
                    }
                    // An explicit module option wins over the global on purpose.
                    bool explicit_option = false;
                    for (const auto& c : p->calls)
                    {
                        if (sets_module_option(c, key) && field_or(c.args, "module", json()) == l.module)
                        {
                            explicit_option = true;
                        }
                    }
                    if (explicit_option)
                    {
                        continue;
                    }
                    reported.insert({l.module, key});
                    finding f = make_finding(mechanism_ids::option_not_arrived, l.module, l.device);
                    add_location(f, set->file, set->line, "wp.config." + key + " set here, after the module was created");
                    if (created)
                    {
                        add_location(f, created->file, created->line, "module " + l.module + " created here");
                    }
                    f.cause = json_text(nlohmann::json{{"option", key},
                               {"module_value", field_or(v, "module", json())},
                               {"config_value", field_or(v, "config", json())},
                               {"module_created_at",
                                created && created->file ? json{{"file", *created->file}, {"line", created->line.value_or(0)}}
                                                         : json()}});
                    f.evidence = "module " + l.module + " was built with " + key + "="
                                 + field_or(v, "module", json()).dump() + " while wp.config." + key + " was "
                                 + field_or(v, "config", json()).dump() + ": the global was set after the module was created"
                                 + (created && created->file ? " (at " + *created->file + ":"
                                                                   + std::to_string(created->line.value_or(0)) + ")"
                                                             : "");
                    f.recommendation = "Set wp.config." + key + " at the application entry point before importing the "
                                       "module (modules copy it when they are created), or set the module's own option "
                                       "with wp.set_module_options before its first load. Then check with warp-probe "
                                       "compare that the module's hash moved.";
                    out.findings.push_back(std::move(f));
                }
            }
        }
    }

    extern const detector option_not_arrived{
        {mechanism_ids::option_not_arrived, "a wp.config option never reached the module", finding_kind::diagnosis, "option-not-arrived",
         "options-at-creation", "", "option_not_arrived.cpp"},
        &detect};
}
