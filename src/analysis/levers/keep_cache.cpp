// keep-cache: the program's cache destroyers are held (CS-2): clear_kernel_cache and
// clear_lto_cache skipped, cache_kernels and kernel_cache_dir and the cache variables kept as
// the probe set them. Judged on the warm pass, where a thrown-away cache shows.
#include <algorithm>

#include "lever.hpp"

namespace xwarp::levers
{
    namespace
    {
        void plan(lever_plan& p, const plan_input& in)
        {
            const auto& loads = in.warm.module_loads;
            const bool warm_builds = std::any_of(loads.begin(), loads.end(),
                                                 [](const module_load& l) { return l.status == load_status::compiled; });
            if (!warm_builds && in.findings.empty())
            {
                p.not_applicable = "the warm pass compiled nothing: the cache was already reused";
            }
        }

        // Builds left in the replay's warm passes: the lever held what it could, and something
        // else still keeps the cache from being reused.
        bool warm_builds_left(whatif_result& w, const lever_plan&, const report&, const report& replay)
        {
            int warm_builds = 0;
            for (const auto& s : replay.samples)
            {
                if (s.warm)
                {
                    for (const auto& l : s.warm->module_loads)
                    {
                        warm_builds += l.status == load_status::compiled;
                    }
                }
            }
            if (warm_builds > 0)
            {
                w.reason += (w.reason.empty() ? "" : "; ") + std::to_string(warm_builds)
                            + " warm-pass build(s) remain: something else keeps the cache from being reused";
            }
            return false;
        }
    }

    namespace
    {
        // The incidental cache destroyers removed; one under a condition is a deliberate
        // maintenance path, left as it is (the fixer names it).
        void code_form(fix_plan& p, const fix_input& in)
        {
            nlohmann::json places = nlohmann::json::array();
            for (const auto& c : field_or(in.f.cause.value(), "causes", nlohmann::json::array()))
            {
                if (!field_or(c, "file", std::string()).empty() && field_or(c, "line", 0) > 0)
                {
                    places.push_back({{"file", c["file"]}, {"line", c["line"]}, {"what", field_or(c, "what", std::string())}});
                }
            }
            if (places.empty())
            {
                p.no_form = "the records locate no statement that throws the cache away (the environment it ran in did)";
                return;
            }
            p.ops.push_back({{"op", "remove_statements"}, {"places", places}});
        }
    }

    extern const lever_def keep_cache{
        {"keep-cache", "skips clear_kernel_cache and clear_lto_cache, and holds cache_kernels, kernel_cache_dir and "
                       "the cache environment variables at the probe's values",
         "keep_cache.cpp"},
        &plan,
        nullptr,
        &warm_builds_left,
        &code_form};
}
