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
            // A finding per churning module and per rebuilt group is the most a large report
            // makes; more grow the vector as usual. Its unused end is never written (no page).
            std::size_t expected = 32 + r.result.rebuilt.size();
            for (const auto& moves : ctx.moves)
            {
                expected += moves.size();
            }
            out.findings.reserve(expected);
            for (const auto* d : detect::detectors())
            {
                d->detect(ctx, out);
                if (out.stop)
                {
                    break;
                }
            }
        }
        // Sorted as indices, then put in that order in place (cycle by cycle, by swaps): a
        // finding is a few hundred bytes, and a second vector held them twice.
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
        // order[i] is the finding that belongs at i: follow each cycle once
        for (std::size_t start = 0; start < order.size(); ++start)
        {
            std::size_t at = start;
            while (order[at] != start)
            {
                const std::size_t from = order[at];
                std::swap(out.findings[at], out.findings[from]);
                order[at] = at;
                at = from;
            }
            order[at] = at;
        }
        r.findings = std::move(out.findings);
        r.declined = std::move(out.declined);
    }
}
