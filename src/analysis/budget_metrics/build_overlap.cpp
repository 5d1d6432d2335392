// build-overlap: summed build time / time a build was running (a floor: builds that overlap).
#include "metric.hpp"

namespace xwarp::budget_parts
{
    namespace
    {
        metric_reading measure(const metric_input& in)
        {
            metric_reading out;
            out.value = in.r.result.overlap_factor.median;
            if (!out.value && !in.r.result.overlap_note.empty())
            {
                out.detail = in.r.result.overlap_note;
            }
            return out;
        }
    }

    extern const budget_metric build_overlap_metric{"build-overlap", &measure};
}
