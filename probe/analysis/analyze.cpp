#include <algorithm>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "xwarp/analysis/diagnose.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/analysis/whatif.hpp"

namespace xwarp
{
    void analyze(report& r)
    {
        summarize_figures(r);
        diagnose(r);
#if defined(__GLIBC__)
        // The detectors' context is gone: hand its pages back before the timeline is drawn.
        // glibc keeps freed memory below the top of the heap resident, so the timeline's spans
        // took new pages beside it (28 MB of peak RSS at 100,000 identities).
        malloc_trim(0);
#endif
        draw_timeline(r);
        apply_whatif(r);
        if (!r.result.valid && r.status != "interrupted")
        {
            const std::string msg = "every sample failed: no measurement";
            if (std::find(r.errors.begin(), r.errors.end(), msg) == r.errors.end())
            {
                r.errors.push_back(msg);
            }
        }
    }
}
