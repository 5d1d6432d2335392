// keep-lto-cache: each replayed sample's cold pass starts on an empty Warp kernel cache and CUDA
// cache but the LTO cache (<kernel cache>/<version>/lto) a cold pass of the program filled just
// before: what Warp's own LTO cache serves to a run whose kernel cache was emptied (MathDx tile
// kernels). Nothing changes inside the process.
#include "lever.hpp"

namespace xwarp::levers
{
    namespace
    {
        void plan(lever_plan& p, const plan_input& in)
        {
            const auto& loads = in.cold.module_loads;
            const bool built = std::any_of(loads.begin(), loads.end(), [](const module_load& l)
                                           { return std::any_of(l.lto.begin(), l.lto.end(), [](const lto_artifact& a) { return a.built; }); });
            if (!built && in.cold.cache.lto_files == 0)
            {
                p.not_applicable = "the cold pass built no LTO artifact (no MathDx tile kernel): the LTO cache holds nothing";
            }
        }

        double stake(const lever_plan&, const run_result& cold)
        {
            double ms = 0.0;
            for (const auto& l : cold.module_loads)
            {
                for (const auto& a : l.lto)
                {
                    ms += a.built ? a.ms : 0.0;
                }
            }
            return ms;
        }
    }

    extern const lever_def keep_lto_cache{
        {"keep-lto-cache", "starts each replayed cold pass on an empty Warp kernel cache and CUDA cache but the LTO cache a "
                           "cold pass of the program filled just before: nothing changes in the process",
         "keep_lto_cache.cpp"},
        &plan,
        nullptr,
        nullptr,
        nullptr,
        "the LTO cache is kept outside the program: keep <cache>/<version>/lto between runs (references/ci.md)",
        &stake};
}
