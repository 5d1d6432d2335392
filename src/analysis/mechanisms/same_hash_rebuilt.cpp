// same-hash-rebuilt: one module identity compiled more than once in one pass: the cache was
// bypassed or cleared between the loads, or processes built it at the same time.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "detector.hpp"
#include "xwarp/analysis/stats.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/analysis/suite.hpp"

namespace xwarp::detect
{
    namespace
    {
        std::size_t distinct_pids(const std::vector<const module_load*>& loads)
        {
            std::set<std::int64_t> pids;
            for (const auto* l : loads)
            {
                pids.insert(l->pid);
            }
            return pids.size();
        }

        void detect(const context& ctx, sink& out)
        {
            const bool suite = is_suite(ctx.first_cold());
            std::map<identity_key, std::vector<double>> extra_per_sample;
            std::map<identity_key, int> builds_first;
            for (std::size_t gi = 0; gi < ctx.good.size(); ++gi)
            {
                // Each identity's first compiled load in a hash table, and in order only those
                // compiled again, with all their loads: an ordered map of every compiled identity
                // compared module names a dozen times per load.
                std::unordered_map<identity_key, const module_load*, tuple_hash> first_build;
                first_build.reserve(ctx.good[gi]->cold.module_loads.size());
                std::map<identity_key, std::vector<const module_load*>> compiled;
                for (const auto& l : ctx.good[gi]->cold.module_loads)
                {
                    if (l.status != load_status::compiled || l.hash.empty())
                    {
                        continue;
                    }
                    const auto [first, added] = first_build.try_emplace(key_of(l), &l);
                    if (!added)
                    {
                        auto& builds = compiled[first->first];
                        if (builds.empty())
                        {
                            builds.push_back(first->second);
                        }
                        builds.push_back(&l);
                    }
                }
                for (const auto& [k, v] : compiled)
                {
                    if (v.size() < 2 || (suite && distinct_pids(v) > 1))
                    {
                        continue;  // in a test suite, repeats across worker processes are repeated-across-workers
                    }
                    double extra = 0.0;
                    for (std::size_t i = 1; i < v.size(); ++i)
                    {
                        extra += removable(*v[i], ctx.estimates_on());
                    }
                    extra_per_sample[k].push_back(extra);
                    if (gi == 0)
                    {
                        builds_first[k] = static_cast<int>(v.size());
                    }
                }
            }
            const auto causes = cache_causes(ctx.first_cold(), nullptr);
            for (const auto& [k, v] : extra_per_sample)
            {
                const std::string module(std::get<0>(k));
                const std::string hash(std::get<1>(k).substr(0, 7));
                const std::string device(std::get<2>(k));
                finding f = make_finding("same-hash-rebuilt", module, device);
                f.cause = json_text(nlohmann::json{{"hash", hash}, {"block_dim", std::get<3>(k)}, {"builds", builds_first[k]}});
                f.evidence = "identity " + module + " " + hash + " on " + device
                             + " was compiled " + std::to_string(builds_first[k])
                             + " times in one pass: the cache was bypassed or cleared between loads, or processes "
                               "built it concurrently";
                std::vector<std::string> what;
                for (const auto& c : causes)
                {
                    if (c.kind != "clear_lto_cache")
                    {
                        add_location(f, c.file, c.line, c.what);
                        what.push_back(c.what);
                    }
                }
                if (!what.empty())
                {
                    f.evidence += "; this run did: " + join(what, "; ");
                }
                f.recommendation = "Look for wp.config.cache_kernels = False, verify_autograd_array_access = True, "
                                   "wp.clear_kernel_cache() or module unloads between the loads; remove them outside "
                                   "debugging sessions.";
                f.savings_ms = median(v);
                out.findings.push_back(std::move(f));
            }
        }
    }

    extern const detector same_hash_rebuilt{
        {"same-hash-rebuilt", "the same module identity compiled more than once", finding_kind::diagnosis, "same-hash-rebuilt",
         "keep-cache", "", "same_hash_rebuilt.cpp"},
        &detect};
}
