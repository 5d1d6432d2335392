// CS-2: the warm pass compiled again on the cache its cold pass had just filled: the program
// throws its cache away (clear calls, cache_kernels=False, a per-run cache directory, the
// driver's cache disabled). Every cause found gets its own location.
#include <algorithm>

#include "detector.hpp"
#include "xwarp/analysis/stats.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp::detect
{
    namespace
    {
        void detect(const context& ctx, sink& out)
        {
            std::vector<double> warm_compiled_ms;
            int passes_with_builds = 0;
            for (const auto* s : ctx.good)
            {
                double ms = 0.0;
                bool any = false;
                if (!s->warm)
                {
                    continue;  // one pass: no warm pass to have reused the cache
                }
                for (const auto& l : s->warm->module_loads)
                {
                    if (l.status == load_status::compiled)
                    {
                        ms += l.cost_ms(ctx.estimates_on());
                        any = true;
                    }
                }
                warm_compiled_ms.push_back(ms);
                passes_with_builds += any;
            }
            if (passes_with_builds == 0)
            {
                return;
            }
            const run_result& warm = ctx.first_warm();
            finding f = make_finding("CS-2", "", "");
            nlohmann::json causes = nlohmann::json::array();
            for (const auto& c : cache_causes(warm, &ctx.first_cold()))
            {
                causes.push_back({{"what", c.what}, {"kind", c.kind}, {"file", c.file.value_or("")}, {"line", c.line.value_or(0)}});
                add_location(f, c.file, c.line, c.what);
            }
            unique_names modules;
            for (const auto& l : warm.module_loads)
            {
                if (l.status == load_status::compiled)
                {
                    modules.add(l.module);
                }
            }
            f.module = join(modules.names());
            f.cause = json_text(nlohmann::json{{"causes", causes}, {"warm_passes_with_builds", passes_with_builds}});
            f.evidence = std::to_string(passes_with_builds) + " of " + std::to_string(ctx.good.size())
                         + " warm pass(es) compiled again on the cache their cold pass had just filled (median "
                         + format_ms(median(warm_compiled_ms).value_or(0.0)) + " of builds)";
            if (!causes.empty())
            {
                std::vector<std::string> c;
                for (const auto& x : causes)
                {
                    c.push_back(field_or(x, "what", std::string()));
                }
                f.evidence += ": " + join(c, "; ");
            }
            f.recommendation = "Let the kernel cache persist: remove wp.clear_kernel_cache()/clear_lto_cache() calls, "
                               "cache_kernels=False, per-run temporary or timestamped cache directories, "
                               "CUDA_CACHE_DISABLE and verify_autograd_array_access outside debugging; persist "
                               "WARP_CACHE_PATH and CUDA_CACHE_PATH between runs (in CI, cache them keyed on the Warp "
                               "version and the sources). Never clear a live cache another process may be using.";
            f.savings_ms = median(warm_compiled_ms);
            out.findings.push_back(std::move(f));
        }
    }

    extern const detector cs02_cache_not_reused{
        {"CS-2", "cache never reused", finding_kind::diagnosis, "cs-2", "keep-cache", "", "cs02_cache_not_reused.cpp"}, &detect};
}
