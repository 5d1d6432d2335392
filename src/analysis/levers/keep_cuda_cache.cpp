// keep-cuda-cache: each replayed sample's cold pass starts on an empty Warp cache and the CUDA
// cache (CUDA_CACHE_PATH) a cold pass of the program filled just before: what NVRTC's own cache
// (12.9+, the driver's compute cache) serves to a run whose Warp cache was emptied, as a CI job
// that keeps ~/.nv/ComputeCache but not Warp's cache does. Nothing changes inside the process.
#include "lever.hpp"

namespace xwarp::levers
{
    namespace
    {
        bool cuda_build(const module_load& l)
        {
            return l.status == load_status::compiled && l.device.str().rfind("cuda", 0) == 0;
        }

        void plan(lever_plan& p, const plan_input& in)
        {
            const auto& loads = in.cold.module_loads;
            if (std::none_of(loads.begin(), loads.end(), cuda_build))
            {
                p.not_applicable = "the cold pass built no CUDA module: NVRTC compiled nothing a CUDA cache could keep";
            }
        }

        // What NVRTC's cache can serve: the native compile of every CUDA build.
        double stake(const lever_plan&, const run_result& cold)
        {
            double ms = 0.0;
            for (const auto& l : cold.module_loads)
            {
                ms += cuda_build(l) ? l.native_ms.value_or(0.0) : 0.0;
            }
            return ms;
        }
    }

    extern const lever_def keep_cuda_cache{
        {"keep-cuda-cache", "starts each replayed cold pass on an empty Warp cache and the CUDA cache a cold pass of the "
                            "program filled just before (NVRTC's compilations, 12.9+): nothing changes in the process",
         "keep_cuda_cache.cpp"},
        &plan,
        nullptr,
        nullptr,
        nullptr,
        "the CUDA cache is kept outside the program: keep CUDA_CACHE_PATH between runs (references/ci.md)",
        &stake};
}
