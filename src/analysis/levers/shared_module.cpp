// shared-module: the one-kernel module="unique" modules a CS-9 finding names are declared in one
// shared module instead (their kernels keep their names and options).
#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "lever.hpp"
#include "xwarp/analysis/mechanisms.hpp"

namespace xwarp::levers
{
    using nlohmann::json;

    namespace
    {
        void plan(lever_plan& p, const plan_input& in)
        {
            if (const finding* late = created_between_launches(in.findings))
            {
                p.not_applicable = "the kernels of " + late->mechanism.str() + " are created between launches: shared as "
                                   "they are, the module would rebuild at each new kernel; the fix also moves their "
                                   "creation, which only warp-probe fix --verify can measure";
                return;
            }
            const std::vector<std::string> names = cause_modules(in.findings);
            std::vector<std::string> kernels;
            for (const auto& l : in.cold.module_loads)
            {
                const bool named = names.empty() ? !unique_module_kernel(l.module).empty()
                                                 : std::find(names.begin(), names.end(), l.module) != names.end();
                if (named && l.snapshot && l.snapshot->kernels.size() == 1)
                {
                    add_unique(kernels, l.snapshot->kernels[0].key);
                    add_unique(p.modules, l.module);
                }
            }
            p.params["kernels"] = kernels;
            if (kernels.empty())
            {
                p.not_applicable = "no module=\"unique\" kernel was built";
            }
        }
    }

    namespace
    {
        // The replay's own records: the shared module built more than once, as its kernels were
        // created between launches.
        bool rebuilt_as_kernels_arrived(whatif_result& w, const lever_plan&, const report&, const report& replay)
        {
            return note_module_rebuilt(w, replay, "xwarp_whatif_shared", "shared");
        }
    }

    namespace
    {
        // A named module instead of module="unique": at the factory's keyword default when the
        // "unique" came from one, else at each declaration; and, when the kernels were created
        // between launches, their creation moved before the first launch. Kernels that share a
        // declaration are one group (the edit of that place moves them all); the fixer moves each
        // group that can move and says why the others stay unique (a plugin's kernel made in a
        // loop, say), so one kernel that cannot move never blocks the rest.
        void code_form(fix_plan& p, const fix_input& in)
        {
            const json cause = in.f.cause.value();
            const std::vector<std::string> modules = strings_of(field_or(cause, "modules", json::array()));
            struct group
            {
                json kernels = json::array();
                json places = json::array();
                json hoists = json::array();
                std::vector<std::string> modules;
            };
            std::vector<group> groups;
            std::string stem;
            for (const auto& proc : in.cold.processes)
            {
                for (const auto& c : proc.calls)
                {
                    const std::string module = field_or(c.args, "module", std::string());
                    if (c.function != "kernel" || std::find(modules.begin(), modules.end(), module) == modules.end())
                    {
                        continue;
                    }
                    const json def = field_or(c.args, "default", json());
                    const json at = def.is_object() ? json{{"file", def.value("file", "")}, {"line", def.value("line", 0)}}
                                                    : place(c.file, c.line);
                    if (at.is_null())
                    {
                        continue;
                    }
                    auto g = std::find_if(groups.begin(), groups.end(), [&](const group& x)
                                          { return std::find(x.places.begin(), x.places.end(), at) != x.places.end(); });
                    if (g == groups.end())
                    {
                        g = groups.insert(groups.end(), group{});
                        g->places.push_back(at);
                    }
                    const std::string key = field_or(c.args, "key", std::string("?"));
                    if (std::find(g->kernels.begin(), g->kernels.end(), key) == g->kernels.end())
                    {
                        g->kernels.push_back(key);
                    }
                    g->modules.push_back(module);
                    if (stem.empty())
                    {
                        // the shared module is named after the file that declares the first of them
                        const std::string file = at.value("file", std::string());
                        const auto slash = file.rfind('/');
                        std::string base = file.substr(slash == std::string::npos ? 0 : slash + 1);
                        base = base.substr(0, base.rfind('.'));
                        for (char& ch : base)
                        {
                            ch = std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' ? ch : '_';
                        }
                        stem = base.empty() || base == "__main__" || base == "__init__" || std::isdigit(static_cast<unsigned char>(base[0]))
                                   ? "shared"
                                   : base;
                    }
                }
            }
            if (groups.empty())
            {
                p.no_form = "the records do not say where the module=\"unique\" kernels were declared";
                return;
            }
            for (const auto& l : field_or(cause, "late", json::array()))
            {
                if (!l.is_object() || !l.value("file", json()).is_string())
                {
                    continue;
                }
                const std::string module = l.value("module", std::string());
                for (auto& g : groups)
                {
                    if (std::find(g.modules.begin(), g.modules.end(), module) != g.modules.end())
                    {
                        g.hoists.push_back({{"file", l["file"]}, {"line", l.value("line", 0)}, {"stack", l.value("stack", json::array())}});
                    }
                }
            }
            json out = json::array();
            for (auto& g : groups)
            {
                out.push_back({{"kernels", g.kernels}, {"places", g.places}, {"hoist_calls", g.hoists}});
            }
            p.ops.push_back({{"op", "named_module"}, {"name", stem + "_kernels"}, {"groups", out}});
        }
    }

    extern const lever_def shared_module{
        {"shared-module", "declares the named module=\"unique\" kernels in one shared module instead (a kernel with "
                          "module options of its own stays unique)",
         "shared_module.cpp"},
        &plan,
        nullptr,
        &rebuilt_as_kernels_arrived,
        &code_form};
}
