// The candidates of CS-4 and CS-9: modules small enough that their per-build fixed cost is
// what merging would save, grouped by what a merge must keep equal.
#include <limits>
#include <tuple>
#include <unordered_map>

#include "detector.hpp"
#include "xwarp/analysis/mechanisms.hpp"
#include "xwarp/analysis/stats.hpp"
#include "xwarp/model/format.hpp"

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
    void append_merge_group(std::string& groups, int block_dim, const std::vector<const module_load*>& modules)
    {
        std::vector<std::string_view> names;
        names.reserve(modules.size());
        for (const auto* l : modules)
        {
            names.emplace_back(l->module);
        }
        groups += (groups.empty() ? "{\"block_dim\":" : ",{\"block_dim\":") + std::to_string(block_dim)
                  + ",\"modules\":" + json_string_array(names) + "}";
    }

    void set_merge_saving(finding& f, const std::vector<double>& per_sample_ms, const std::string& groups,
                          const std::vector<std::string_view>& modules, xwarp::clock on)
    {
        f.savings_ms = median(per_sample_ms);
        const double high = f.savings_ms.value_or(0.0) / fixed_cost_share;
        f.cause = merge_cause(high, groups, modules);
        f.evidence += "; merging them saves about " + format_ms(f.savings_ms.value_or(0)) + " of " + clock_name(on) + " (between "
                      + format_ms(0.5 * high) + " and " + format_ms(high)
                      + ", depending on how much of each build is fixed cost)";
    }

    json_text merge_cause(double upper_bound_ms, const std::string& groups, const std::vector<std::string_view>& modules)
    {
        const nlohmann::json estimate = {
            {"fixed_cost_share", fixed_cost_share}, {"upper_bound_ms", upper_bound_ms}, {"lower_bound_ms", 0.5 * upper_bound_ms}};
        // members in the order dump() writes them (sorted)
        return json_text::of_compact_text("{\"estimate\":" + json_text(estimate).text() + ",\"groups\":[" + groups
                                          + "],\"modules\":" + json_string_array(modules) + "}");
    }

    granular_modules granular(const run_result& run, xwarp::clock on)
    {
        // Per (pid, device, module), in first-seen order: its last build, and whether it built at
        // more than one block_dim. Keys are views of the loads' strings; a report of 100,000
        // identities passes 50,000 modules through here, and copies of their names (and a set
        // per module) were most of CS-4's and CS-9's time.
        struct per_module
        {
            const module_load* last = nullptr;
            int block_dim = -1;
            bool several_block_dims = false;
        };
        using pid_device_name = std::tuple<std::int64_t, std::string_view, std::string_view>;
        std::unordered_map<pid_device_name, std::size_t, tuple_hash> index_of;
        index_of.reserve(run.module_loads.size());
        std::vector<per_module> modules;
        for (const auto& l : run.module_loads)
        {
            if (l.status != load_status::compiled || !l.snapshot || warps_own_module(l.module))
            {
                continue;
            }
            const int bd = l.block_dim.value_or(-1);
            const auto [it, first] = index_of.try_emplace(pid_device_name(l.pid, l.device, l.module), modules.size());
            if (first)
            {
                modules.push_back({&l, bd, false});
                continue;
            }
            per_module& m = modules[it->second];
            m.last = &l;
            m.several_block_dims = m.several_block_dims || m.block_dim != bd;
        }
        granular_modules out;
        double smallest = std::numeric_limits<double>::infinity();
        // (pid, device, block_dim, options without block_dim): views of the loads' devices and of
        // the option texts below, which live until the groups are made
        using group_key = std::tuple<std::int64_t, std::string_view, int, std::string_view>;
        std::unordered_map<group_key, std::size_t, tuple_hash> unique_index, small_index;
        std::unordered_map<const nlohmann::json*, std::string> options_text;  // without block_dim
        for (const auto& m : modules)
        {
            const module_load& l = *m.last;
            const auto& ks = l.snapshot->kernels;
            const std::string_view kernel = unique_module_kernel(l.module);
            const bool unique = !kernel.empty() && ks.size() == 1 && ks[0].key == kernel;
            const bool small = !unique && ks.size() <= 2;
            if (!unique && !small)
            {
                continue;
            }
            if (m.several_block_dims)
            {
                if (small)
                {
                    out.spread_small.push_back(l.module);
                }
                continue;
            }
            smallest = std::min(smallest, removable(l, on));
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
            auto& index = unique ? unique_index : small_index;
            auto& groups = unique ? out.unique : out.small;
            const auto [it, new_group] = index.try_emplace(group_key(l.pid, l.device, bd, written->second), groups.size());
            if (new_group)
            {
                groups.push_back({l.pid, l.device, bd, {}});
            }
            groups[it->second].modules.push_back(&l);
        }
        out.smallest_ms = std::isfinite(smallest) ? smallest : 0.0;
        return out;
    }
    merge_estimates estimate_merges(const context& ctx, std::size_t min_modules,
                                    const std::vector<module_group>& (*groups_of)(const granular_modules&))
    {
        merge_estimates out;
        for (std::size_t gi = 0; gi < ctx.good.size(); ++gi)
        {
            const auto& g = ctx.granular_of(gi);
            std::map<std::string, double> total;
            for (const auto& grp : groups_of(g))
            {
                if (grp.modules.size() < min_modules)
                {
                    continue;
                }
                total[grp.device] += static_cast<double>(grp.modules.size() - 1) * g.smallest_ms * fixed_cost_share;
                if (gi == 0)
                {
                    for (const auto* l : grp.modules)
                    {
                        out.names[grp.device].emplace_back(l->module);
                    }
                    append_merge_group(out.groups_text[grp.device], grp.block_dim, grp.modules);
                }
            }
            for (const auto& [d, t] : total)
            {
                out.per_device[d].push_back(t);
            }
        }
        return out;
    }

    finding merge_finding(const context& ctx, const std::string& mechanism, const merge_estimates& merges,
                          const std::string& device, const std::string& evidence, const std::string& recommendation)
    {
        const std::vector<std::string_view>& modules = merges.names.at(device);
        finding f = make_finding(mechanism, join(modules), device);
        f.evidence = evidence;
        set_merge_saving(f, merges.per_device.at(device), merges.groups_text.at(device), modules, ctx.estimates_on());
        f.recommendation = recommendation;
        note_created_between_launches(f, created_after_first_load(ctx.first_cold(), modules), modules.size());
        return f;
    }
}
