// The lever table: every lever, in the order --help lists them. Adding a lever means a file
// here, one row below and one class in the shim's LEVERS table (a test checks both list it).
#include "xwarp/analysis/levers.hpp"

#include <algorithm>

#include "levers/lever.hpp"
#include "xwarp/model/contracts.hpp"

namespace xwarp
{
    namespace levers
    {
        extern const lever_def backward_off;
        extern const lever_def pch_off;
        extern const lever_def parallel_preload;
        extern const lever_def options_at_creation;
        extern const lever_def preregister_overloads;
        extern const lever_def shared_module;
        extern const lever_def merge_modules;
        extern const lever_def keep_cache;
        extern const lever_def mathdx_off;
        extern const lever_def xdist_loadfile;
        extern const lever_def xdist_workers;
        extern const lever_def keep_cuda_cache;
        extern const lever_def keep_lto_cache;

        const std::vector<const lever_def*>& table()
        {
            static const std::vector<const lever_def*> rows = {
                &backward_off,
                &pch_off,
                &parallel_preload,
                &options_at_creation,
                &preregister_overloads,
                &shared_module,
                &merge_modules,
                &keep_cache,
                &mathdx_off,
                &xdist_loadfile,
                &xdist_workers,
                &keep_cuda_cache,
                &keep_lto_cache,
            };
            return rows;
        }

        const lever_def* find(const std::string& name)
        {
            for (const auto* d : table())
            {
                if (d->info.name == name)
                {
                    return d;
                }
            }
            return nullptr;
        }


        void add_unique(std::vector<std::string>& v, const std::string& s)
        {
            if (!s.empty() && std::find(v.begin(), v.end(), s) == v.end())
            {
                v.push_back(s);
            }
        }

        std::vector<std::string> strings_of(const nlohmann::json& j)
        {
            std::vector<std::string> out;
            for (const auto& x : j.is_array() ? j : nlohmann::json::array())
            {
                if (x.is_string())
                {
                    out.push_back(x.get<std::string>());
                }
            }
            return out;
        }

        std::vector<std::string> cause_modules(const std::vector<const finding*>& findings)
        {
            std::vector<std::string> out;
            for (const auto* f : findings)
            {
                for (const auto& m : strings_of(field_or(f->cause.value(), "modules", nlohmann::json::array())))
                {
                    add_unique(out, m);
                }
            }
            return out;
        }
    }

    namespace levers
    {
        const finding* created_between_launches(const std::vector<const finding*>& findings)
        {
            for (const auto* f : findings)
            {
                if (field_or(f->cause.value(), "created_between_launches", false))
                {
                    return f;
                }
            }
            return nullptr;
        }

        nlohmann::json config_at_entry(const std::string& key, const nlohmann::json& value, const std::string& why,
                                       const nlohmann::json& remove)
        {
            return {{"op", "config_at_entry"}, {"key", key}, {"value", value}, {"why", why}, {"remove", remove}};
        }

        nlohmann::json place(const std::optional<std::string>& file, const std::optional<int>& line)
        {
            if (!file || !line)
            {
                return nullptr;
            }
            return {{"file", *file}, {"line", *line}};
        }

        int cold_builds_of(const report& replay, const std::string& module)
        {
            for (const auto& s : replay.samples)
            {
                if (!s.ok())
                {
                    continue;
                }
                int builds = 0;
                for (const auto& l : s.cold.module_loads)
                {
                    builds += l.module == module && l.status == load_status::compiled ? 1 : 0;
                }
                return builds;
            }
            return 0;
        }

        bool note_module_rebuilt(whatif_result& w, const report& replay, const std::string& module, const char* which)
        {
            const int builds = cold_builds_of(replay, module);
            if (builds > 1)
            {
                w.needs = "the replay built the " + std::string(which)
                          + " module " + std::to_string(builds) + " times, once per kernel created between launches: "
                            "the fix also needs those kernels created before the first launch (warp-probe fix writes "
                            "both changes)";
            }
            return false;
        }
    }

    const std::vector<lever_info>& lever_registry()
    {
        static const std::vector<lever_info> infos = []
        {
            std::vector<lever_info> v;
            for (const auto* d : levers::table())
            {
                v.push_back(d->info);
            }
            return v;
        }();
        return infos;
    }

    const std::vector<std::string>& known_levers()
    {
        static const std::vector<std::string> names = []
        {
            std::vector<std::string> v;
            for (const auto& l : lever_registry())
            {
                v.push_back(l.name);
            }
            return v;
        }();
        return names;
    }

    const lever_info* find_lever(const std::string& name)
    {
        const auto* d = levers::find(name);
        return d ? &d->info : nullptr;
    }

    nlohmann::json levers_to_json()
    {
        nlohmann::json out = nlohmann::json::array();
        for (const auto* d : levers::table())
        {
            out.push_back({{"name", d->info.name},
                           {"changes", d->info.changes},
                           {"effects", contract_effects(d->info.name)},
                           {"source", "src/analysis/levers/" + d->info.source}});
        }
        return out;
    }
}
