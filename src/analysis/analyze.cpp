#include "xwarp/analysis/analyze.hpp"

#include <algorithm>

#include "xwarp/analysis/diagnose.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/analysis/replay_plans.hpp"
#include "xwarp/model/release.hpp"

namespace xwarp
{
    void analyze(report& r)
    {
        summarize_figures(r);
        give_back_freed_pages();
        diagnose(r);
        give_back_freed_pages();
        draw_timeline(r);  // after the detectors' context is freed: no detector reads it
        apply_whatif(r);
        if (!r.result.valid && r.status != run_status::interrupted)
        {
            const std::string msg = "every sample failed: no measurement";
            if (std::find(r.errors.begin(), r.errors.end(), msg) == r.errors.end())
            {
                r.errors.push_back(msg);
            }
        }
    }
}
