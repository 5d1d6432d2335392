// preregister-overloads: before a module's first load, the generic instances the baseline built
// are registered (add_overload), so the module builds once with all of them (CS-6).
#include <map>
#include <set>

#include "lever.hpp"

namespace xwarp::levers
{
    namespace
    {
        using nlohmann::json;

        void plan(lever_plan& p, const plan_input& in)
        {
            std::set<std::string> wanted;  // modules with late instances (all, when asked by name)
            for (const auto* f : in.findings)
            {
                wanted.insert(f->module);
            }
            std::map<std::string, const module_load*> last;
            for (const auto& l : in.cold.module_loads)
            {
                if (l.snapshot && (wanted.empty() || wanted.count(l.module)))
                {
                    last[l.module] = &l;
                }
            }
            json instances = json::array();
            std::set<std::string> seen;
            for (const auto& [m, l] : last)
            {
                for (const auto& k : l->snapshot->kernels)
                {
                    if (!k.generic || !k.types.is_array())
                    {
                        continue;
                    }
                    json inst = {{"module", m}, {"kernel", k.key}, {"types", k.types}};
                    if (seen.insert(inst.dump()).second)
                    {
                        instances.push_back(inst);
                        add_unique(p.modules, m);
                    }
                }
            }
            p.params["instances"] = instances;
            if (instances.empty())
            {
                p.not_applicable = "no generic instance was recorded with its argument types";
            }
        }
    }

    namespace
    {
        // wp.overload for every instance signature the run created, after the generic kernel's
        // definition, in the module's file.
        void code_form(fix_plan& p, const fix_input& in)
        {
            const std::string file = module_file(in.cold, in.f.module);
            if (file.empty())
            {
                p.no_form = "the records do not say which file defines module " + in.f.module.str();
                return;
            }
            const module_load* last = nullptr;
            for (const auto& l : in.cold.module_loads)
            {
                if (l.module == in.f.module && l.snapshot)
                {
                    last = &l;
                }
            }
            std::map<std::string, json> by_kernel;
            for (const auto& k : last ? last->snapshot->kernels : std::vector<kernel_entry>{})
            {
                if (k.generic && k.types.is_array())
                {
                    by_kernel[k.key].push_back(k.types);
                }
            }
            for (const auto& [kernel, instances] : by_kernel)
            {
                p.ops.push_back({{"op", "overloads"}, {"file", file}, {"kernel", kernel}, {"instances", instances}});
            }
            if (p.ops.empty())
            {
                p.no_form = "no generic instance was recorded with its argument types";
            }
        }
    }

    extern const lever_def preregister_overloads{
        {"preregister-overloads", "before each module's first load, registers the generic instances the baseline "
                                  "built (add_overload), so the module builds once with all of them",
         "preregister_overloads.cpp"},
        &plan,
        nullptr,
        nullptr,
        &code_form};
}
