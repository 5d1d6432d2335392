// CS-8: concurrent first CPU loads raced Warp's native JIT lookup (Warp 1.16 and older): the
// output says a module or kernel was not found after loads that reported success.
#include "detector.hpp"

namespace xwarp::detect
{
    namespace
    {
        void detect(const context& ctx, sink& out)
        {
            for (const auto* s : ctx.good)
            {
                for (const auto* run : {&s->cold, s->warm ? &*s->warm : nullptr})
                {
                    if (!run)
                    {
                        continue;  // a one-pass sample
                    }
                    const auto& tail = run->stderr_tail;
                    if (tail.find("Failed to find module: wp_") == std::string::npos
                        && tail.find("Failed to find forward kernel") == std::string::npos)
                    {
                        continue;
                    }
                    finding f = make_finding("CS-8", "", "cpu");
                    f.evidence = "the output says 'Failed to find module' / 'Failed to find forward kernel' after loads "
                                 "that reported success";
                    f.recommendation = "Keep max_workers <= 1 for every load that may target the CPU (device=None and "
                                       "mixed device lists included) on Warp 1.16 or older; the race is fixed in later "
                                       "releases. Retries and prewarming only hide it.";
                    out.findings.push_back(std::move(f));
                    return;
                }
            }
        }
    }

    extern const detector cs08_cpu_jit_race{
        {"CS-8", "concurrent first CPU loads raced the native JIT", finding_kind::diagnosis, "cs-8", "",
         "a Warp bug fixed after 1.16: the fix is max_workers <= 1 on the CPU or a newer Warp", "cs08_cpu_jit_race.cpp"},
        &detect};
}
