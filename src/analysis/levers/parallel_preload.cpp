// parallel-preload: at the first launch, the modules the baseline built are loaded through
// Warp's force_load with several workers (CS-13), per device and block_dim.
#include <algorithm>
#include <map>

#include "lever.hpp"
#include "../mechanisms/detector.hpp"
#include "xwarp/analysis/mechanisms.hpp"

namespace xwarp::levers
{
    extern const lever_def parallel_preload;

    namespace
    {
        using nlohmann::json;

        void plan(lever_plan& p, const plan_input& in)
        {
            std::map<std::pair<std::string, int>, std::vector<std::string>> groups;
            for (const auto& l : in.cold.module_loads)
            {
                if (l.status == load_status::compiled && !warps_own_module(l.module))
                {
                    add_unique(groups[{l.device, l.block_dim.value_or(-1)}], l.module);
                }
            }
            json g = json::array();
            for (const auto& [k, mods] : groups)
            {
                if (mods.size() >= 2)
                {
                    g.push_back({{"device", k.first}, {"block_dim", k.second}, {"modules", mods}});
                    for (const auto& m : mods)
                    {
                        add_unique(p.modules, m);
                    }
                }
            }
            p.params["groups"] = g;
            p.params["workers"] = std::max(1, std::min(4, in.baseline.env.cpu_count));
            if (g.empty())
            {
                p.not_applicable = "fewer than two modules were built on any device: nothing to overlap";
            }
        }

        // A preload of fewer than two modules overlapped nothing: the modules were created after
        // the first launch, which the preload cannot move.
        bool overlapped(whatif_result& w, const lever_plan&, const report&, const report&)
        {
            if (w.verdict == verdict::invalid)
            {
                return false;
            }
            const double preloaded = field_or(w.applied, "modules_preloaded", 0.0);
            if (preloaded >= 2)
            {
                return false;
            }
            w.verdict = verdict::not_applied;
            w.reason = "only " + std::to_string(static_cast<int>(preloaded)) + " module(s) existed at the first launch ("
                       + std::to_string(static_cast<int>(field_or(w.applied, "modules_missing", 0.0)))
                       + " were created later): a preload had nothing to overlap";
            return true;
        }
    }

    namespace
    {
        // A preload of the modules the run built, at the block_dims the launches used, with
        // several workers, at the entry point once they exist and before anything launches.
        void code_form(fix_plan& p, const fix_input& in)
        {
            lever_plan plan;
            plan.lever = "parallel-preload";
            const std::vector<const finding*> none;
            levers::parallel_preload.plan(plan, plan_input{in.r, in.cold, in.cold, none});
            if (!plan.not_applicable.empty())
            {
                p.no_form = plan.not_applicable;
                return;
            }
            // Only modules that exist at the entry point: not a factory's unique modules, nor
            // modules created after the first launch (a preload there cannot reach them).
            std::vector<std::string_view> all(plan.modules.begin(), plan.modules.end());
            const auto late = detect::created_after_first_load(in.cold, all);
            json groups = json::array();
            std::size_t kept = 0;
            for (const auto& g : plan.params["groups"])
            {
                json modules = json::array();
                for (const auto& m : g["modules"])
                {
                    const std::string name = m.get<std::string>();
                    const bool made_late = std::any_of(late.begin(), late.end(), [&](const auto& l) { return l.module == name; });
                    if (!made_late && unique_module_kernel(name).empty())
                    {
                        modules.push_back(name);
                    }
                }
                kept += modules.size();
                if (modules.size() >= 2)
                {
                    groups.push_back({{"device", g["device"]}, {"block_dim", g["block_dim"]}, {"modules", modules}});
                }
            }
            if (groups.empty())
            {
                p.no_form = std::to_string(plan.modules.size() - kept) + " of the " + std::to_string(plan.modules.size())
                            + " modules are made during the run (a factory's unique modules, or modules created after the "
                              "first launch): a preload at the entry point cannot reach them";
                return;
            }
            p.ops.push_back({{"op", "preload"}, {"groups", groups}, {"workers", plan.params["workers"]}});
        }
    }

    extern const lever_def parallel_preload{
        {"parallel-preload", "at the first launch, loads the modules the baseline built through wp.force_load with "
                             "several workers, at the device and block_dim each was launched with",
         "parallel_preload.cpp"},
        &plan,
        &overlapped,
        nullptr,
        &code_form};
}
