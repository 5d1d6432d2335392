#include "xwarp/analysis/stats.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace xwarp
{
    std::optional<double> median(std::vector<double> values)
    {
        if (values.empty())
        {
            return std::nullopt;
        }
        std::sort(values.begin(), values.end());
        const auto n = values.size();
        return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
    }

    std::optional<double> mad(const std::vector<double>& values)
    {
        auto m = median(values);
        if (!m)
        {
            return std::nullopt;
        }
        std::vector<double> dev;
        dev.reserve(values.size());
        for (double v : values)
        {
            dev.push_back(std::fabs(v - *m));
        }
        return median(dev);
    }

    stat make_stat(const std::vector<double>& values)
    {
        stat s;
        s.values = values;
        s.median = median(values);
        s.mad = mad(values);
        return s;
    }

    namespace
    {
        // P(U <= u) under the null hypothesis for sample sizes m and n, no ties: the number
        // of orderings with U = k, c(m, n, k) = c(m-1, n, k-n) + c(m, n-1, k), over C(m+n, m).
        double exact_u_cdf(int m, int n, double u)
        {
            const int max_u = m * n;
            // counts[i][j] holds the distribution for sizes (i, j); rolled over i.
            std::vector<std::vector<std::vector<double>>> c(
                static_cast<std::size_t>(m + 1), std::vector<std::vector<double>>(static_cast<std::size_t>(n + 1)));
            for (int i = 0; i <= m; ++i)
            {
                for (int j = 0; j <= n; ++j)
                {
                    auto& cell = c[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
                    cell.assign(static_cast<std::size_t>(i * j + 1), 0.0);
                    if (i == 0 || j == 0)
                    {
                        cell[0] = 1.0;
                        continue;
                    }
                    const auto& left = c[static_cast<std::size_t>(i - 1)][static_cast<std::size_t>(j)];
                    const auto& down = c[static_cast<std::size_t>(i)][static_cast<std::size_t>(j - 1)];
                    for (int k = 0; k <= i * j; ++k)
                    {
                        double v = 0.0;
                        if (k - j >= 0 && k - j < static_cast<int>(left.size()))
                        {
                            v += left[static_cast<std::size_t>(k - j)];
                        }
                        if (k < static_cast<int>(down.size()))
                        {
                            v += down[static_cast<std::size_t>(k)];
                        }
                        cell[static_cast<std::size_t>(k)] = v;
                    }
                }
            }
            const auto& dist = c[static_cast<std::size_t>(m)][static_cast<std::size_t>(n)];
            double total = 0.0;
            double below = 0.0;
            for (int k = 0; k <= max_u; ++k)
            {
                total += dist[static_cast<std::size_t>(k)];
                if (k <= u + 1e-9)
                {
                    below += dist[static_cast<std::size_t>(k)];
                }
            }
            return below / total;
        }
    }

    mann_whitney_result mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b)
    {
        mann_whitney_result r;
        const double n1 = static_cast<double>(a.size());
        const double n2 = static_cast<double>(b.size());
        if (a.empty() || b.empty())
        {
            return r;
        }
        // Rank the pooled values, averaging ranks over ties.
        std::vector<std::pair<double, int>> pooled;
        for (double v : a)
        {
            pooled.emplace_back(v, 0);
        }
        for (double v : b)
        {
            pooled.emplace_back(v, 1);
        }
        std::sort(pooled.begin(), pooled.end());
        const std::size_t n = pooled.size();
        std::vector<double> rank(n);
        double tie_term = 0.0;
        for (std::size_t i = 0; i < n;)
        {
            std::size_t j = i;
            while (j + 1 < n && pooled[j + 1].first == pooled[i].first)
            {
                ++j;
            }
            const double avg = 0.5 * (static_cast<double>(i) + static_cast<double>(j)) + 1.0;
            for (std::size_t k = i; k <= j; ++k)
            {
                rank[k] = avg;
            }
            const double t = static_cast<double>(j - i + 1);
            tie_term += t * t * t - t;
            i = j + 1;
        }
        double r1 = 0.0;
        for (std::size_t k = 0; k < n; ++k)
        {
            if (pooled[k].second == 0)
            {
                r1 += rank[k];
            }
        }
        const double u1 = r1 - n1 * (n1 + 1.0) / 2.0;
        r.u = u1;
        if (tie_term == 0.0 && a.size() <= exact_limit && b.size() <= exact_limit)
        {
            const double u_low = std::min(u1, n1 * n2 - u1);
            r.p_value = std::min(1.0, 2.0 * exact_u_cdf(static_cast<int>(a.size()), static_cast<int>(b.size()), u_low));
            r.exact = true;
            return r;
        }
        const double mu = n1 * n2 / 2.0;
        const double nn = n1 + n2;
        const double sigma2 = n1 * n2 / 12.0 * ((nn + 1.0) - tie_term / (nn * (nn - 1.0)));
        if (sigma2 <= 0.0)
        {
            r.p_value = 1.0;  // every value tied: no evidence either way
            return r;
        }
        const double z = (std::fabs(u1 - mu) - 0.5) / std::sqrt(sigma2);
        r.p_value = std::min(1.0, std::erfc(std::max(z, 0.0) / std::sqrt(2.0)));
        return r;
    }
}
