// CS-2: the warm pass compiled again on the cache its cold pass had just filled: the program
// throws its cache away (clear calls, cache_kernels=False, a per-run cache directory, the
// driver's cache disabled). Every cause found gets its own location.
#include <algorithm>
#include <set>
#include <tuple>

#include "detector.hpp"
#include "xwarp/analysis/stats.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp::detect
{
    namespace
    {
        void detect(const context& ctx, sink& out)
        {
            // A warm build counts only when the same sample's cold pass loaded that identity: the
            // cache it had just filled held it. A warm pass that builds an identity the cold pass
            // never did (a suite's tests split otherwise over its workers, code that differs from
            // run to run) says nothing about the cache, and is counted apart.
            using identity_key = std::tuple<std::string, std::string, std::string, int>;
            std::vector<double> warm_compiled_ms;
            int passes_with_builds = 0;
            int new_in_warm = 0;
            for (const auto* s : ctx.good)
            {
                double ms = 0.0;
                bool any = false;
                if (!s->warm)
                {
                    continue;  // one pass: no warm pass to have reused the cache
                }
                std::set<identity_key> cold;
                for (const auto& l : s->cold.module_loads)
                {
                    cold.insert({l.module.str(), l.hash.str(), l.device.str(), l.block_dim.value_or(-1)});
                }
                for (const auto& l : s->warm->module_loads)
                {
                    if (l.status != load_status::compiled)
                    {
                        continue;
                    }
                    if (!cold.count({l.module.str(), l.hash.str(), l.device.str(), l.block_dim.value_or(-1)}))
                    {
                        new_in_warm += s == ctx.good.front() ? 1 : 0;
                        continue;
                    }
                    ms += l.cost_ms(ctx.estimates_on());
                    any = true;
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
            if (new_in_warm > 0)
            {
                f.evidence += "; " + std::to_string(new_in_warm) + " other warm build(s) were of identities the cold pass never "
                              "built (a suite's tests split otherwise over its workers), not counted";
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
