#include <gtest/gtest.h>

#include "xwarp/analysis/stats.hpp"

using namespace xwarp;

TEST(Stats, MedianOddEvenEmpty)
{
    EXPECT_DOUBLE_EQ(*median({3, 1, 2}), 2.0);
    EXPECT_DOUBLE_EQ(*median({4, 1, 3, 2}), 2.5);
    EXPECT_FALSE(median({}));
}

TEST(Stats, MadIsMedianOfAbsoluteDeviations)
{
    // median 3, deviations {2,1,0,1,97} -> 1
    EXPECT_DOUBLE_EQ(*mad({1, 2, 3, 4, 100}), 1.0);
    EXPECT_DOUBLE_EQ(*mad({5}), 0.0);
    EXPECT_FALSE(mad({}));
}

TEST(Stats, MakeStatKeepsValues)
{
    auto s = make_stat({10, 20, 30});
    EXPECT_EQ(s.values.size(), 3u);
    EXPECT_DOUBLE_EQ(*s.median, 20.0);
    EXPECT_DOUBLE_EQ(*s.mad, 10.0);
}

// Reference p-values below were computed with SciPy 1.x scipy.stats.mannwhitneyu.
TEST(MannWhitney, ExactCompleteSeparation)
{
    auto r = mann_whitney_u({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
    EXPECT_TRUE(r.exact);
    EXPECT_DOUBLE_EQ(r.u, 0.0);
    EXPECT_NEAR(r.p_value, 0.007936507936507936, 1e-12);  // 2 / C(10,5)
}

TEST(MannWhitney, ExactOverlapping)
{
    auto r = mann_whitney_u({10.1, 10.4, 9.8, 10.0, 10.2}, {9.1, 9.3, 9.9, 9.0, 9.2});
    EXPECT_DOUBLE_EQ(r.u, 24.0);
    EXPECT_NEAR(r.p_value, 0.015873015873015872, 1e-12);
    auto small = mann_whitney_u({1.0, 2.0, 3.0}, {1.5, 2.5, 3.5, 4.5});
    EXPECT_DOUBLE_EQ(small.u, 3.0);
    EXPECT_NEAR(small.p_value, 0.4, 1e-12);
}

TEST(MannWhitney, NormalApproximationWithTies)
{
    auto r = mann_whitney_u({3, 4, 2, 6, 2, 5}, {9, 7, 5, 10, 6, 8});
    EXPECT_FALSE(r.exact);
    EXPECT_DOUBLE_EQ(r.u, 2.0);
    EXPECT_NEAR(r.p_value, 0.012591911490379705, 1e-9);
}

TEST(MannWhitney, NormalApproximationLargeSamples)
{
    std::vector<double> a, b;
    for (int i = 0; i < 40; ++i)
    {
        a.push_back(i);
        b.push_back(i + 5.5);
    }
    auto r = mann_whitney_u(a, b);
    EXPECT_FALSE(r.exact);
    EXPECT_DOUBLE_EQ(r.u, 595.0);
    EXPECT_NEAR(r.p_value, 0.049090804709638, 1e-9);
}

TEST(MannWhitney, IdenticalSamplesGiveNoEvidence)
{
    auto r = mann_whitney_u({5, 5, 5}, {5, 5, 5});
    EXPECT_DOUBLE_EQ(r.p_value, 1.0);
}
