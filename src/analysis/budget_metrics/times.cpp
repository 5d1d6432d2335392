// cold-module-ms, cold-wall-ms, compile-elapsed-ms: the summary's medians, each named with the
// heaviest module. Three metrics of one kind in one file: each is one line below.
#include "metric.hpp"

#include "xwarp/model/format.hpp"

namespace xwarp::budget_parts
{
    namespace
    {
        // A time of the summary, named with the heaviest module.
        metric_reading time_reading(const stat& figure, const metric_input& in)
        {
            metric_reading out;
            out.value = figure.median;
            if (in.heaviest)
            {
                out.module = where(*in.heaviest);
                out.detail = "the heaviest module is " + out.module + " (" + format_ms(in.heaviest->ms) + ")";
            }
            return out;
        }
    }

    extern const budget_metric cold_module_ms_metric{
        "cold-module-ms", [](const metric_input& in) { return time_reading(in.r.result.cold_module_ms, in); }};
    extern const budget_metric cold_wall_ms_metric{
        "cold-wall-ms", [](const metric_input& in) { return time_reading(in.r.result.cold_wall_ms, in); }};
    extern const budget_metric compile_elapsed_ms_metric{
        "compile-elapsed-ms", [](const metric_input& in) { return time_reading(in.r.result.compile_elapsed_ms, in); }};
}
