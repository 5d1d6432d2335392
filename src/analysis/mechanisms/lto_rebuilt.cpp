// lto-rebuilt: the same MathDx LTO artifact built more than once in one run, because the LTO
// cache was thrown away between the builds (wp.clear_lto_cache) or kept nothing. Points at the
// call that discarded the first builds.
#include <map>

#include "detector.hpp"
#include "xwarp/analysis/stats.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp::detect
{
    namespace
    {
        struct built
        {
            const module_load* load;
            const lto_artifact* artifact;
        };

        std::map<std::string, std::vector<built>> builds_by_symbol(const run_result& run)
        {
            std::map<std::string, std::vector<built>> out;
            for (const auto& l : run.module_loads)
            {
                for (const auto& a : l.lto)
                {
                    if (a.built && !a.symbol.empty())
                    {
                        out[a.symbol].push_back({&l, &a});
                    }
                }
            }
            return out;
        }

        void detect(const context& ctx, sink& out)
        {
            std::vector<double> per_sample;
            for (const auto* s : ctx.good)
            {
                double extra = 0.0;
                for (const auto& [sym, v] : builds_by_symbol(s->cold))
                {
                    for (std::size_t i = 1; i < v.size(); ++i)
                    {
                        extra += v[i].artifact->ms;
                    }
                }
                per_sample.push_back(extra);
            }
            const run_result& run = ctx.first_cold();
            int repeated = 0;
            int extra_builds = 0;
            unique_names rebuilt_in;
            std::vector<std::pair<const module_load*, const module_load*>> pairs;  // first build, a later one
            for (const auto& [sym, v] : builds_by_symbol(run))
            {
                if (v.size() < 2)
                {
                    continue;
                }
                ++repeated;
                extra_builds += static_cast<int>(v.size()) - 1;
                for (std::size_t i = 1; i < v.size(); ++i)
                {
                    pairs.push_back({v[i - 1].load, v[i].load});
                    rebuilt_in.add(v[i].load->module);
                }
            }
            if (repeated == 0)
            {
                return;
            }
            const auto& modules = rebuilt_in.names();
            finding f = make_finding("lto-rebuilt", join(modules), "");
            // The discarding calls between a first build and its repeat (same process), else any
            // in the run.
            std::vector<cache_cause> between;
            const auto causes = cache_causes(run, nullptr);
            for (const auto& c : causes)
            {
                for (const auto& [a, b] : pairs)
                {
                    if (c.pid == a->pid && c.pid == b->pid && c.seq > a->seq && c.seq < b->seq)
                    {
                        between.push_back(c);
                        break;
                    }
                }
            }
            if (between.empty())
            {
                between = causes;
            }
            std::vector<std::string> what;
            for (const auto& c : between)
            {
                add_location(f, c.file, c.line, c.what);
                what.push_back(c.what + (c.file && c.line ? " (" + *c.file + ":" + std::to_string(*c.line) + ")" : ""));
            }
            f.savings_ms = median(per_sample);
            f.cause = json_text(nlohmann::json{{"artifacts_rebuilt", repeated}, {"extra_builds", extra_builds}, {"modules", modules}});
            f.evidence = std::to_string(repeated) + " MathDx LTO artifact(s) were built again in one run ("
                         + std::to_string(extra_builds) + " extra build(s), " + format_ms(f.savings_ms.value_or(0.0))
                         + ") with the same artifact hashes";
            f.evidence += what.empty() ? std::string("; no call that discards the LTO cache was recorded")
                                       : "; the cache was thrown away between the builds: " + join(what, "; ");
            f.recommendation = "Do not clear the LTO cache while the program runs: remove wp.clear_lto_cache() (and "
                               "wp.clear_kernel_cache()) from the code path, and persist WARP_CACHE_PATH between runs. "
                               "Clearing a live cache can also break other processes that use it.";
            out.findings.push_back(std::move(f));
        }
    }

    extern const detector lto_rebuilt{
        {"lto-rebuilt", "MathDx LTO artifacts built twice in one run", finding_kind::diagnosis, "lto-rebuilt", "keep-cache", "",
         "lto_rebuilt.cpp"},
        &detect};
}
