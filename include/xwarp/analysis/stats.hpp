// Robust statistics used by the summary and by compare.
#ifndef XWARP_ANALYSIS_STATS_HPP
#define XWARP_ANALYSIS_STATS_HPP

#include <optional>
#include <vector>

#include "xwarp/model/report.hpp"

namespace xwarp
{
    std::optional<double> median(std::vector<double> values);

    // Median absolute deviation from the median (unscaled).
    std::optional<double> mad(const std::vector<double>& values);

    stat make_stat(const std::vector<double>& values);

    // Two-sided Mann-Whitney U test with tie correction (normal approximation with
    // continuity correction). Returns U for the first sample and the p-value.
    struct mann_whitney_result
    {
        double u = 0.0;
        double p_value = 1.0;
    };
    mann_whitney_result mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);
}

#endif
