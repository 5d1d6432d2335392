// CS-5: one module built at several block_dims. Every variant compiles every kernel the module
// holds, including kernels never launched at that block_dim. Judged on the kernel definitions
// the module reaches at each block_dim (generic kernels by name, whatever instances they had
// by then): variants that differ only by generic instances created late are still the same
// module, and their lateness is CS-6.
#include <map>
#include <set>

#include "detector.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp::detect
{
    namespace
    {
        using nlohmann::json;

        void detect(const context& ctx, sink& out)
        {
            const run_result& run = ctx.first_cold();
            for (const auto& g : ctx.r.result.rebuilt)
            {
                if (g.kind != rebuild_kind::block_dim_spread || !g.kernel_sets_known)
                {
                    continue;
                }
                bool preload_variant = false;  // a preload's variant is preload-block-dim, not CS-5
                std::map<int, const module_load*> last;  // per block_dim, in load order
                for (const auto& l : run.module_loads)
                {
                    if (l.module != g.module || l.device != g.device || !l.block_dim || !l.snapshot)
                    {
                        continue;
                    }
                    preload_variant = preload_variant || ctx.unused_preload_variant(l);
                    last[*l.block_dim] = &l;
                }
                if (preload_variant || last.size() < 2)
                {
                    continue;
                }
                std::set<std::set<std::string>> distinct;
                for (const auto& [bd, l] : last)
                {
                    distinct.insert(definitions(*l->snapshot));
                }
                if (distinct.size() != 1)
                {
                    continue;  // different kernels at each block_dim: churn, reported as such
                }
                // Builds of kernels never launched at that block_dim are the duplication.
                auto lit = ctx.launched().find({g.module, g.device});
                double wasted = 0.0;
                double headers_ms = 0.0;  // precompiled headers these builds wrote (CPU): one per block_dim
                json coverage = json::object();
                std::vector<int> bds;
                for (const auto& [bd, l] : last)
                {
                    bds.push_back(bd);
                    std::set<std::string, std::less<>> keys;  // looked up by the launches' views
                    for (const auto& k : l->snapshot->kernels)
                    {
                        keys.insert(k.key);
                    }
                    std::set<std::string> used;
                    if (lit != ctx.launched().end() && lit->second.count(bd))
                    {
                        for (const auto& k : lit->second.at(bd))
                        {
                            if (keys.count(k))
                            {
                                used.emplace(k);
                            }
                        }
                    }
                    headers_ms += l->header_cost_ms(ctx.estimates_on());
                const auto total = static_cast<double>(keys.size());
                    if (total > 0)
                    {
                        wasted += removable(*l, ctx.estimates_on()) * (1.0 - static_cast<double>(used.size()) / total);
                    }
                    std::vector<std::string> unused;
                    for (const auto& k : keys)
                    {
                        if (!used.count(k))
                        {
                            unused.push_back(k);
                        }
                    }
                    coverage[std::to_string(bd)] = {{"kernels_in_module", keys.size()},
                                                    {"kernels_launched", used.size()},
                                                    {"never_launched_here", unused}};
                }
                std::vector<std::string> bd_words;
                for (int b : bds)
                {
                    bd_words.push_back(std::to_string(b));
                }
                if (wasted <= 0.0)
                {
                    declined_lever d = make_declined("CS-5", g.module, g.device);
                    d.reason = "module " + g.module + " on " + g.device + " is built at block_dims " + join(bd_words)
                               + ", but every kernel it holds is launched at each of them: splitting it by block_dim "
                                 "would compile the same kernels again";
                    d.numbers = {{"block_dims", bds}, {"coverage", coverage}};
                    out.declined.push_back(d);
                    continue;
                }
                finding f = make_finding("CS-5", g.module, g.device);
                f.cause = json_text(nlohmann::json{{"block_dims", bds}, {"coverage", coverage}});
                f.evidence = "module " + g.module + " on " + g.device + " was built at " + std::to_string(bds.size())
                             + " block_dims (" + join(bd_words) + ") with the same kernel definitions ("
                             + std::to_string(g.builds) + " builds, " + format_ms(g.ms)
                             + "); every build compiles every kernel; builds of kernels never launched at their "
                               "block_dim: " + format_ms(wasted)
                             + (headers_ms > 0.0 ? "; " + format_ms(headers_ms)
                                                       + " more went into precompiled headers, which Warp writes per "
                                                         "block_dim: a split keeps every block_dim, so it keeps them"
                                                 : std::string());
                f.recommendation = "Put kernels launched at one stable block_dim in a named module of their own (one "
                                   "module per stable block_dim), or use fewer distinct block_dims. Keep a runtime-chosen "
                                   "block_dim in its own module. Never merge or drop kernels to fix this.";
                if (headers_ms > 0.0)
                {
                    // the split's saving is the estimate; the headers are most of such builds on the
                    // CPU, and only their own lever (CS-12, pch-off) measures them
                    f.recommendation = f.recommendation.str()
                                       + " A split saves only the estimate: each block_dim's precompiled header stays, "
                                         "so measure pch-off (CS-12) for those.";
                }
                f.savings_ms = wasted;
                out.findings.push_back(std::move(f));
            }
        }
    }

    extern const detector cs05_block_dim_spread{
        {"CS-5", "one module built at several block_dims", finding_kind::diagnosis, "cs-5", "",
         "the block_dims are launch parameters of the program; splitting its module by block_dim is a code change",
         "cs05_block_dim_spread.cpp"},
        &detect};
}
