// Diagnoses: runs every detector of the registry (probe/analysis/mechanisms/) on the report's
// good samples and orders what they found by the time at stake.
#include "xwarp/analysis/diagnose.hpp"

#include <algorithm>

#include "mechanisms/detector.hpp"

namespace xwarp
{
    void diagnose(report& r)
    {
        r.findings.clear();
        r.declined.clear();
        if (!r.result.valid)
        {
            return;
        }
        detect::context ctx(r);
        if (ctx.good.empty())
        {
            return;
        }
        detect::sink out;
        for (const auto* d : detect::detectors())
        {
            d->detect(ctx, out);
            if (out.stop)
            {
                break;
            }
        }
        std::stable_sort(out.findings.begin(),
                         out.findings.end(),
                         [](const finding& a, const finding& b)
                         {
                             // by ms at stake; unestimated last; a diagnosis before an advisory on a tie
                             const double sa = a.savings_ms.value_or(-1.0);
                             const double sb = b.savings_ms.value_or(-1.0);
                             if (sa != sb)
                             {
                                 return sa > sb;
                             }
                             return a.kind == "diagnosis" && b.kind != "diagnosis";
                         });
        r.findings = std::move(out.findings);
        r.declined = std::move(out.declined);
    }
}
