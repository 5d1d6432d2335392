// CS-4: many small named modules, each paying a module's fixed cost. Only modules that a merge
// would keep at one block_dim and one set of options are counted together: merged modules
// launched at different block_dims would build at each of them, and save nothing.
#include <map>
#include <string_view>

#include "detector.hpp"
#include "xwarp/analysis/stats.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp::detect
{
    namespace
    {
        using nlohmann::json;
        constexpr std::size_t min_modules = 4;

        void detect(const context& ctx, sink& out)
        {
            const merge_estimates merges = estimate_merges(
                ctx, min_modules, [](const granular_modules& g) -> const std::vector<module_group>& { return g.small; });
            const auto& names = merges.names;
            if (!ctx.good.empty())
            {
                const auto& g = ctx.granular_of(0);
                // Enough small modules in all, but no group a merge could keep together: say so.
                std::map<std::string, std::size_t> count;
                for (const auto& grp : g.small)
                {
                    count[grp.device] += grp.modules.size();
                }
                for (const auto& [device, c] : count)
                {
                    if (names.count(device) || c + g.spread_small.size() < min_modules)
                    {
                        continue;
                    }
                    json apart = json::array();
                    std::vector<std::string> words;
                    for (const auto& grp : g.small)
                    {
                        if (grp.device != device)
                        {
                            continue;
                        }
                        std::vector<std::string> n;
                        for (const auto* l : grp.modules)
                        {
                            n.push_back(l->module);
                        }
                        words.push_back("block_dim " + std::to_string(grp.block_dim) + ": " + join(n));
                        apart.push_back({{"block_dim", grp.block_dim}, {"modules", std::move(n)}});
                    }
                    declined_lever d = make_declined("CS-4", "", device);
                    d.reason = std::to_string(c + g.spread_small.size()) + " small modules were built on " + device
                               + ", but no " + std::to_string(min_modules)
                               + " of them launch at one block_dim with the same options (" + join(words, "; ")
                               + (g.spread_small.empty() ? std::string() : "; at several block_dims: " + join(g.spread_small))
                               + "): merged, a module builds at every block_dim its kernels launch at, so merging them "
                                 "saves no build";
                    d.numbers = {{"groups", std::move(apart)}, {"spread", g.spread_small}};
                    out.declined.push_back(d);
                }
            }
            for (const auto& [device, n] : names)
            {
                out.findings.push_back(merge_finding(
                    ctx, "CS-4", merges, device,
                    std::to_string(n.size()) + " small modules (at most two kernels each, launched at one block_dim with "
                                               "the same options) were built separately on " + device,
                    "Group kernels that load together into fewer named modules, by lifecycle. Keep apart kernels with "
                    "different options, different stable block_dims or independent edit cycles: a bigger module also "
                    "rebuilds whole on every edit."));
            }
        }
    }

    extern const detector cs04_granular_modules{
        {"CS-4", "module boundaries too granular", finding_kind::advisory, "cs-4", "merge-modules", "", "cs04_granular_modules.cpp"},
        &detect};
}
