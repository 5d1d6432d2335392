// CS-7: MathDx LTO artifacts (tile GEMM, FFT, solvers on CUDA) generated inside codegen. A
// trade-off between build time and kernel speed, never removable time: no saving is claimed.
#include <map>
#include <set>

#include "detector.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp::detect
{
    namespace
    {
        void detect(const context& ctx, sink& out)
        {
            double lto_ms = 0.0;
            int builds = 0;
            std::set<std::string> symbols;
            std::set<std::string> modules;
            for (const auto& l : ctx.first_cold().module_loads)
            {
                for (const auto& a : l.lto)
                {
                    if (a.built)
                    {
                        lto_ms += a.ms;
                        ++builds;
                        symbols.insert(a.symbol);
                        modules.insert(l.module);
                    }
                }
            }
            if (builds == 0)
            {
                return;
            }
            finding f = make_finding("CS-7", join(std::vector<std::string>(modules.begin(), modules.end())), "");
            f.cause = json_text(nlohmann::json{{"lto_artifacts_built", symbols.size()}, {"lto_builds", builds}, {"lto_ms", lto_ms}});
            f.evidence = std::to_string(symbols.size()) + " MathDx LTO artifact(s) were generated"
                         + (builds > static_cast<int>(symbols.size()) ? " (" + std::to_string(builds) + " builds: see lto-rebuilt)" : std::string())
                         + ", " + format_ms(lto_ms) + " inside codegen, outside the NVRTC compile; MathDx buys kernel "
                           "speed with build time, so no saving is claimed";
            f.recommendation = "Check CS-10 first: backward code triples the GEMM links. Then measure "
                               "enable_mathdx_gemm (or _fft/_solver) both ways, build time and steady-state kernel time: "
                               "it is a numerics and speed trade-off (float16 GEMMs were about 2.9x faster with MathDx in "
                               "one test), so never turn it off blindly. Ask which matters: a fast edit-run loop or "
                               "production start-up.";
            out.findings.push_back(std::move(f));
        }
    }

    extern const detector cs07_mathdx_lto{
        {"CS-7", "MathDx LTO built without amortization", finding_kind::advisory, "cs-7", "mathdx-off", "", "cs07_mathdx_lto.cpp"},
        &detect};
}
