// lto-cache-empty: the cold pass built MathDx LTO artifacts (tile kernels' GEMM, FFT, solver),
// which Warp keeps in its LTO cache (<kernel cache>/<version>/lto, 1.7+) apart from the modules: a
// run whose kernel cache was emptied but whose LTO cache was kept skips their generation, most of
// a tile kernel's build (29.2 s of 36.9 s for a 32x32 tile GEMM on an H200).
#include "detector.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp::detect
{
    namespace
    {
        void detect(const context& ctx, sink& out)
        {
            const run_result& cold = ctx.first_cold();
            double lto_ms = 0.0;
            int built = 0;
            unique_names modules;
            std::string device;
            for (const auto& l : cold.module_loads)
            {
                for (const auto& a : l.lto)
                {
                    if (a.built)
                    {
                        lto_ms += a.ms;
                        ++built;
                        modules.add(l.module);
                        device = l.device;
                    }
                }
            }
            if (built == 0)
            {
                return;
            }
            finding f = make_finding("lto-cache-empty", join(modules.names()), device);
            f.cause = json_text(nlohmann::json{{"lto_artifacts_built", built},
                                               {"lto_ms", lto_ms},
                                               {"lto_cache_files", cold.cache.lto_files},
                                               {"lto_cache_bytes", cold.cache.lto_bytes}});
            f.evidence = std::to_string(built) + " MathDx LTO artifact(s) took " + format_ms(lto_ms)
                         + " to generate on an empty LTO cache (" + format_bytes(static_cast<double>(cold.cache.lto_bytes))
                         + " written to <cache>/" + "<version>/lto)";
            f.recommendation = "Keep Warp's whole cache folder between runs, its lto/ folder included (wp.clear_kernel_cache() "
                               "leaves it; wp.clear_lto_cache() removes it): the artifacts are keyed by the GEMM's shape and "
                               "types, not by the module, so a module that changed still reuses them. The what-if lever "
                               "keep-lto-cache measures it: each cold pass on an empty kernel cache and the LTO cache a cold "
                               "pass just filled.";
            f.savings_ms = lto_ms;
            out.findings.push_back(std::move(f));
        }
    }

    extern const detector lto_cache_empty{
        {"lto-cache-empty", "MathDx LTO artifacts generated on an empty LTO cache", finding_kind::advisory, "lto-cache-empty",
         "keep-lto-cache", "", "lto_cache_empty.cpp"},
        &detect};
}
