// mathdx-off: wp.config.enable_mathdx_* held at False (CS-7): tile GEMM, FFT and solvers fall
// back to Warp's own code, without MathDx LTO artifacts. Both sides time the steady-state
// launches of the affected kernels: a build saving is weighed against the kernels' speed.
#include <algorithm>
#include <map>

#include "lever.hpp"
#include "xwarp/analysis/stats.hpp"

namespace xwarp::levers
{
    namespace
    {
        using nlohmann::json;

        void plan(lever_plan& p, const plan_input& in)
        {
            std::vector<std::string> kernels;
            for (const auto& l : in.cold.module_loads)
            {
                const bool built = std::any_of(l.lto.begin(), l.lto.end(), [](const lto_artifact& a) { return a.built; });
                if (!built)
                {
                    continue;
                }
                add_unique(p.modules, l.module);
                if (l.snapshot)
                {
                    for (const auto& k : l.snapshot->kernels)
                    {
                        add_unique(kernels, k.key);
                    }
                }
            }
            p.params["timed_kernels"] = kernels;
            p.time_launches = true;
            if (p.modules.empty())
            {
                p.not_applicable = "no MathDx LTO artifact was built";
            }
        }

        // Median steady-state launch time per kernel, the first timed launch of each process left out.
        std::map<std::string, double> steady_launches(const report& r)
        {
            std::map<std::string, std::vector<double>> all;
            for (const auto& s : r.samples)
            {
                if (!s.ok())
                {
                    continue;
                }
                for (const auto& p : s.cold.processes)
                {
                    if (!p.launch_times.is_object())
                    {
                        continue;
                    }
                    for (const auto& [k, v] : p.launch_times.items())
                    {
                        for (std::size_t i = 1; v.is_array() && i < v.size(); ++i)
                        {
                            if (v[i].is_number())
                            {
                                all[k].push_back(v[i].get<double>());
                            }
                        }
                    }
                }
            }
            std::map<std::string, double> out;
            for (const auto& [k, v] : all)
            {
                if (auto m = median(v))
                {
                    out[k] = *m;
                }
            }
            return out;
        }

        // The build saving is shown beside the kernels' steady-state time; without that time
        // there is no recommendation.
        bool steady_state(whatif_result& w, const lever_plan&, const report& baseline, const report& replay)
        {
            const auto before = steady_launches(baseline);
            for (const auto& [k, ms] : steady_launches(replay))
            {
                const auto b = before.find(k);
                w.steady_state[k] = {{"replay_ms", ms}, {"baseline_ms", b == before.end() ? json() : json(b->second)}};
            }
            if (w.steady_state.empty())
            {
                w.reason += std::string(w.reason.empty() ? "" : "; ")
                            + "the steady-state launch time was not measured: no recommendation without it";
                if (w.verdict == verdict::improved)
                {
                    w.verdict = verdict::inconclusive;
                }
            }
            return false;
        }
    }

    extern const lever_def mathdx_off{
        {"mathdx-off", "holds wp.config.enable_mathdx_gemm, _fft and _solver at False: tile operations use Warp's own "
                       "code, without MathDx LTO artifacts; both sides time the affected kernels' launches",
         "mathdx_off.cpp"},
        &plan,
        nullptr,
        &steady_state,
        nullptr,
        "turning MathDx off trades the build for slower tile kernels at run time: weigh the replay's steady-state "
        "times first; not a mechanical edit"};
}
