#include <cstdio>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "xwarp/model/format.hpp"

using namespace xwarp;

namespace
{
    std::string printf_fixed(double v, int precision)
    {
        char text[128];
        std::snprintf(text, sizeof text, "%.*f", precision, v);
        return text;
    }
}

// Figures read as printf writes them in the C locale, rounding included (half-way cases go to
// the even digit on the binary value, as printf does), and a damaged report's huge number stays short.
TEST(Format, FixedFiguresReadAsPrintfWritesThem)
{
    for (double v : {0.0, -0.0, 0.5, 1.5, 2.5, 0.125, 0.375, 1234.5, 812.4999, 812.5, -3.14159, 99.995, 1e-7, 119999.99,
                     999999999999.0, 123456.789})
    {
        for (int precision : {0, 1, 2, 3})
        {
            EXPECT_EQ(format_fixed(v, precision), printf_fixed(v, precision)) << v << " at " << precision;
        }
    }
    EXPECT_EQ(format_fixed(1e12, 0), "1.00e+12");
    EXPECT_EQ(format_fixed(-2.5e300, 1), "-2.50e+300");
    EXPECT_EQ(format_fixed(std::numeric_limits<double>::quiet_NaN(), 1), "n/a");
    EXPECT_EQ(format_fixed(std::numeric_limits<double>::infinity(), 1), "n/a");
    EXPECT_EQ(format_ms(812.4), "812 ms");
    EXPECT_EQ(format_ms(0.25), "0.25 ms");
}
