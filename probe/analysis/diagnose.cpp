// Diagnoses: runs every detector of the registry (probe/analysis/mechanisms/) on the report's
// good samples and orders what they found by the time at stake.
#include "xwarp/analysis/diagnose.hpp"

#include <algorithm>
#include <numeric>

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
        detect::sink out;
        {
            // The context's tables (hash moves and their classes, sequences) are freed before
            // the findings are sorted into the report: at scale that step is the peak.
            const detect::context ctx(r);
            if (ctx.good.empty())
            {
                return;
            }
            for (const auto* d : detect::detectors())
            {
                d->detect(ctx, out);
                if (out.stop)
                {
                    break;
                }
            }
        }
        // Sorted as indices, then moved once each: a finding is a few hundred bytes, and a
        // report of thousands of churning modules has thousands of them.
        std::vector<std::size_t> order(out.findings.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::stable_sort(order.begin(),
                         order.end(),
                         [&out](std::size_t ia, std::size_t ib)
                         {
                             const finding& a = out.findings[ia];
                             const finding& b = out.findings[ib];
                             // by ms at stake; unestimated last; a diagnosis before an advisory on a tie
                             const double sa = a.savings_ms.value_or(-1.0);
                             const double sb = b.savings_ms.value_or(-1.0);
                             if (sa != sb)
                             {
                                 return sa > sb;
                             }
                             return a.kind == "diagnosis" && b.kind != "diagnosis";
                         });
        r.findings.clear();
        r.findings.reserve(order.size());
        for (const std::size_t i : order)
        {
            r.findings.push_back(std::move(out.findings[i]));
        }
        out.findings.clear();
        r.declined = std::move(out.declined);
    }
}
