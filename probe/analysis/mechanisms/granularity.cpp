// The candidates of CS-4 and CS-9: modules small enough that their per-build fixed cost is
// what merging would save, grouped by what a merge must keep equal.
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

#include "detector.hpp"
#include "xwarp/analysis/mechanisms.hpp"

namespace xwarp
{
    std::string_view unique_module_kernel(std::string_view module)
    {
        constexpr std::size_t suffix = 9;  // "_" and 8 lowercase hex digits
        if (module.size() <= suffix || module[module.size() - suffix] != '_')
        {
            return {};
        }
        for (char c : module.substr(module.size() - suffix + 1))
        {
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            {
                return {};
            }
        }
        return module.substr(0, module.size() - suffix);
    }
}

namespace xwarp::detect
{
    granular_modules granular(const run_result& run)
    {
        struct per_module
        {
            const module_load* last = nullptr;
            std::set<int> block_dims;
        };
        using pid_device_name = std::tuple<std::int64_t, std::string_view, std::string_view>;  // views of the loads'
        std::unordered_map<pid_device_name, per_module, tuple_hash> modules;
        std::vector<pid_device_name> order;
        for (const auto& l : run.module_loads)
        {
            if (l.status != load_status::compiled || !l.snapshot || is_warp_internal(l.module))
            {
                continue;
            }
            const pid_device_name key(l.pid, l.device, l.module);
            auto it = modules.find(key);
            if (it == modules.end())
            {
                order.push_back(key);
                it = modules.emplace(key, per_module{}).first;
            }
            it->second.last = &l;
            it->second.block_dims.insert(l.block_dim.value_or(-1));
        }
        granular_modules out;
        double smallest = std::numeric_limits<double>::infinity();
        std::map<std::tuple<std::int64_t, std::string, int, std::string>, std::size_t> unique_index, small_index;
        std::unordered_map<const nlohmann::json*, std::string> options_text;  // without block_dim
        for (const auto& key : order)
        {
            const auto& m = modules.at(key);
            const module_load& l = *m.last;
            const auto& ks = l.snapshot->kernels;
            const std::string_view kernel = unique_module_kernel(l.module);
            const bool unique = !kernel.empty() && ks.size() == 1 && ks[0].key == kernel;
            const bool small = !unique && ks.size() <= 2;
            if (!unique && !small)
            {
                continue;
            }
            if (m.block_dims.size() > 1)
            {
                if (small)
                {
                    out.spread_small.push_back(l.module);
                }
                continue;
            }
            smallest = std::min(smallest, removable(l));
            // Equal option sets are one shared object (shared_options): each is written once.
            auto [written, first] = options_text.try_emplace(&*l.snapshot->options);
            if (first)
            {
                nlohmann::json options = *l.snapshot->options;
                if (options.is_object())
                {
                    options.erase("block_dim");
                }
                written->second = options.dump();
            }
            const int bd = l.block_dim.value_or(-1);
            auto gkey = std::make_tuple(l.pid, l.device, bd, written->second);
            auto& index = unique ? unique_index : small_index;
            auto& groups = unique ? out.unique : out.small;
            auto it = index.find(gkey);
            if (it == index.end())
            {
                it = index.emplace(gkey, groups.size()).first;
                groups.push_back({l.pid, l.device, bd, {}});
            }
            groups[it->second].modules.push_back(&l);
        }
        out.smallest_ms = std::isfinite(smallest) ? smallest : 0.0;
        return out;
    }
}
