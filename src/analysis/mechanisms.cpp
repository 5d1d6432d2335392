// The registry: the one table of detectors, in the order they run. Adding a mechanism means a
// detector file, one row here and a section in references/mechanisms.md (a test checks it).
#include "xwarp/analysis/mechanisms.hpp"

#include <map>

#include "mechanisms/detector.hpp"

namespace xwarp
{
    namespace detect
    {
        extern const detector compile_small_share;
        extern const detector cs01_late_kernels;
        extern const detector cs03_late_options;
        extern const detector cs06_late_generic_instances;
        extern const detector dependency_change;
        extern const detector unexplained_rebuild;
        extern const detector hash_thrash;
        extern const detector same_hash_rebuilt;
        extern const detector cs02_cache_not_reused;
        extern const detector lto_rebuilt;
        extern const detector ptx_load_compile;
        extern const detector cuda_cache_empty;
        extern const detector lto_cache_empty;
        extern const detector option_not_arrived;
        extern const detector preload_block_dim;
        extern const detector cs05_block_dim_spread;
        extern const detector cs09_unique_modules;
        extern const detector cs04_granular_modules;
        extern const detector cs10_unused_backward;
        extern const detector cs11_unroll_budget;
        extern const detector cs12_precompiled_header;
        extern const detector cs13_serial_builds;
        extern const detector cs07_mathdx_lto;
        extern const detector cs08_cpu_jit_race;
        extern const detector repeated_across_workers;
        extern const detector same_code_other_name;
        extern const detector many_tests_one_module;

        const std::vector<const detector*>& detectors()
        {
            // compile-small-share runs first: when compilation is not where the time goes, it
            // ends the diagnosis.
            static const std::vector<const detector*> table = {
                &compile_small_share,
                &cs01_late_kernels,
                &cs03_late_options,
                &cs06_late_generic_instances,
                &dependency_change,
                &unexplained_rebuild,
                &hash_thrash,
                &same_hash_rebuilt,
                &cs02_cache_not_reused,
                &lto_rebuilt,
                &ptx_load_compile,
                &cuda_cache_empty,
                &lto_cache_empty,
                &option_not_arrived,
                &preload_block_dim,
                &cs05_block_dim_spread,
                &cs09_unique_modules,
                &cs04_granular_modules,
                &cs10_unused_backward,
                &cs11_unroll_budget,
                &cs12_precompiled_header,
                &cs13_serial_builds,
                &cs07_mathdx_lto,
                &cs08_cpu_jit_race,
                &repeated_across_workers,
                &same_code_other_name,
                &many_tests_one_module,
            };
            return table;
        }
    }

    const detect::detector* detect::find_detector(const std::string& id)
    {
        for (const auto* d : detectors())
        {
            if (d->info.id == id)
            {
                return d;
            }
        }
        return nullptr;
    }

    namespace
    {
        // The claims, indexed once: every hash move of a report asks (50,000 in a large one).
        struct claim_index
        {
            std::map<change_kind, const std::string*> by_kind;
            const std::string* returning = nullptr;
            const std::string* any_other = nullptr;
        };

        const claim_index& claims()
        {
            static const claim_index index = []
            {
                claim_index out;
                for (const auto* d : detect::detectors())
                {
                    for (const auto& c : d->claims)
                    {
                        switch (c.what)
                        {
                            case detect::change_claim::of::kind: out.by_kind.emplace(c.kind, &d->info.id); break;
                            case detect::change_claim::of::returning: out.returning = &d->info.id; break;
                            case detect::change_claim::of::any_other: out.any_other = &d->info.id; break;
                        }
                    }
                }
                return out;
            }();
            return index;
        }
    }

    const std::string& detect::mechanism_of_change(change_kind kind)
    {
        const auto it = claims().by_kind.find(kind);
        return it != claims().by_kind.end() ? *it->second : *claims().any_other;
    }

    const std::string& detect::mechanism_of_returning()
    {
        return *claims().returning;
    }

    const std::vector<mechanism_info>& mechanism_registry()
    {
        static const std::vector<mechanism_info> infos = []
        {
            std::vector<mechanism_info> v;
            for (const auto* d : detect::detectors())
            {
                v.push_back(d->info);
            }
            return v;
        }();
        return infos;
    }

    const mechanism_info* find_mechanism(const std::string& id)
    {
        for (const auto& m : mechanism_registry())
        {
            if (m.id == id)
            {
                return &m;
            }
        }
        return nullptr;
    }

    nlohmann::json mechanisms_to_json()
    {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& m : mechanism_registry())
        {
            out.push_back({{"id", m.id},
                           {"title", m.title},
                           {"kind", m.kind},
                           {"guide", m.guide},
                           {"lever", m.lever.empty() ? nlohmann::json() : nlohmann::json(m.lever)},
                           {"no_lever", m.no_lever},
                           {"detector", "src/analysis/mechanisms/" + m.detector}});
        }
        return out;
    }
}
