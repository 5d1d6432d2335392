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
