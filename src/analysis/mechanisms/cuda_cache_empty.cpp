// cuda-cache-empty: the cold pass compiled CUDA modules through NVRTC, which keeps its
// compilations in the CUDA cache (CUDA_CACHE_PATH, ~/.nv/ComputeCache by default; NVRTC 12.9 and
// later, inside the driver's compute cache). A run whose Warp cache is empty but whose CUDA cache
// was kept skips those compiles: on an H100 eight of Warp's test modules took 74.9 s with both
// caches empty and 29.1 s with only Warp's. Whether this NVRTC caches was checked on the machine
// (environment.nvrtc_cache); the figure is the NVRTC compile of each CUDA build.
#include <algorithm>
#include <map>

#include "detector.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp::detect
{
    namespace
    {
        void detect(const context& ctx, sink& out)
        {
            const auto state = ctx.r.env.nvrtc_cache;
            if (state == nvrtc_cache_state::no_driver || state == nvrtc_cache_state::not_supported)
            {
                return;  // this NVRTC keeps nothing: no kept cache would serve a compile
            }
            std::map<std::string, std::pair<double, double>> by_module;  // NVRTC ms, module work
            std::map<std::int64_t, double> by_process;                     // NVRTC ms per process
            double nvrtc_ms = 0.0;
            double work_ms = 0.0;
            int builds = 0;
            std::string device;
            const auto on = ctx.estimates_on();
            for (const auto& l : ctx.first_cold().module_loads)
            {
                if (l.status != load_status::compiled || l.device.str().rfind("cuda", 0) != 0 || !l.native_ms)
                {
                    continue;
                }
                // the native compile's share of the load, on the estimates' clock
                const double wall = l.work_ms();
                const double compile = wall > 0 ? l.cost_ms(on) * std::min(1.0, *l.native_ms / wall) : *l.native_ms;
                auto& m = by_module[l.module.str()];
                m.first += compile;
                m.second += l.cost_ms(on);
                nvrtc_ms += compile;
                by_process[l.pid] += compile;
                work_ms += l.cost_ms(on);
                ++builds;
                device = l.device;
            }
            if (builds == 0)
            {
                return;
            }
            std::vector<std::pair<std::string, std::pair<double, double>>> heaviest(by_module.begin(), by_module.end());
            std::stable_sort(heaviest.begin(), heaviest.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
            std::string listed;
            nlohmann::json modules = nlohmann::json::array();
            for (std::size_t i = 0; i < heaviest.size(); ++i)
            {
                const auto& [module, ms] = heaviest[i];
                modules.push_back({{"module", module}, {"nvrtc_ms", ms.first}, {"build_ms", ms.second}});
                if (i < 3)
                {
                    listed += (listed.empty() ? "" : ", ") + module + " " + format_ms(ms.first) + " of " + format_ms(ms.second);
                }
            }
            std::int64_t cache_bytes = 0;
            for (const auto& c : ctx.first_cold().caches)
            {
                cache_bytes = c.kind == cache_kind::cuda ? c.bytes_after : cache_bytes;
            }
            // Processes that compiled side by side (pytest-xdist workers) save the suite's wall at
            // most what the process with the most NVRTC time spent: the replay judges the wall, so
            // the estimate is stated on it, the sum over processes beside it.
            double wall_bound_ms = nvrtc_ms;
            if (by_process.size() > 1)
            {
                wall_bound_ms = 0.0;
                for (const auto& [pid, ms] : by_process)
                {
                    wall_bound_ms = std::max(wall_bound_ms, ms);
                }
            }
            finding f = make_finding("cuda-cache-empty", "", device);
            f.cause = json_text(nlohmann::json{{"cuda_builds", builds},
                                               {"nvrtc_ms", nvrtc_ms},
                                               {"build_ms", work_ms},
                                               {"nvrtc_share", work_ms > 0 ? nvrtc_ms / work_ms : 0.0},
                                               {"processes", by_process.size()},
                                               {"nvrtc_wall_bound_ms", wall_bound_ms},
                                               {"modules", modules},
                                               {"nvrtc_cache", word_of(state)},
                                               {"cuda_cache_bytes", cache_bytes},
                                               {"cuda_cache_maxsize", ctx.r.env.cuda_cache_maxsize}});
            f.evidence = std::to_string(builds) + " CUDA build(s) spent " + format_ms(nvrtc_ms) + " of their " + format_ms(work_ms)
                         + " in NVRTC's compile (" + format_fixed(work_ms > 0 ? 100.0 * nvrtc_ms / work_ms : 0.0, 0)
                         + "%), on an empty CUDA cache: " + listed
                         + (heaviest.size() > 3 ? " and " + std::to_string(heaviest.size() - 3) + " more" : std::string())
                         + (state == nvrtc_cache_state::caches
                                ? ". This NVRTC keeps its compilations in CUDA_CACHE_PATH (checked: a second compile was served from it)"
                                : state == nvrtc_cache_state::disabled
                                      ? ". CUDA_CACHE_DISABLE is set: NVRTC keeps nothing until it is unset"
                                      : ". NVRTC 12.9 and later keep their compilations in CUDA_CACHE_PATH (whether this one does "
                                        "was not checked: warp-probe doctor says)")
                         + "; the cold pass wrote " + format_bytes(static_cast<double>(cache_bytes)) + " there"
                         + (ctx.r.env.cuda_cache_maxsize.empty() ? std::string()
                                                                 : " (CUDA_CACHE_MAXSIZE is " + ctx.r.env.cuda_cache_maxsize + " bytes)")
                         + (by_process.size() > 1
                                ? ". " + std::to_string(by_process.size()) + " processes compiled side by side: on the wall a "
                                      "kept CUDA cache saves at most " + format_ms(wall_bound_ms)
                                      + " (the process with the most NVRTC time), the " + format_ms(nvrtc_ms)
                                      + " above being their sum"
                                : std::string());
            f.recommendation = "Keep the CUDA cache between runs as well as Warp's kernel cache: a run that empties only "
                               "WARP_CACHE_PATH is not cold, and one that keeps only it still pays NVRTC. In CI, cache "
                               "CUDA_CACHE_PATH (~/.nv/ComputeCache) with a key that includes the driver and NVRTC versions "
                               "(references/ci.md), and keep CUDA_CACHE_MAXSIZE above what a run writes. The what-if lever "
                               "keep-cuda-cache measures it: each cold pass on an empty Warp cache and the CUDA cache a cold "
                               "pass just filled.";
            f.savings_ms = wall_bound_ms;  // on the clock the keep-cuda-cache replay judges
            out.findings.push_back(std::move(f));
        }
    }

    extern const detector cuda_cache_empty{
        {"cuda-cache-empty", "NVRTC compiled on an empty CUDA cache", finding_kind::advisory, "cuda-cache-empty",
         "keep-cuda-cache", "", "cuda_cache_empty.cpp"},
        &detect};
}
