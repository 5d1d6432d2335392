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

    // Two-sided Mann-Whitney U test. Exact null distribution when there are no ties and both
    // samples have at most exact_limit values; otherwise the normal approximation with tie and
    // continuity corrections. Returns U for the first sample and the p-value.
    inline constexpr std::size_t exact_limit = 30;
    struct mann_whitney_result
    {
        double u = 0.0;
        double p_value = 1.0;
        bool exact = false;
    };
    mann_whitney_result mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);
}

#endif
