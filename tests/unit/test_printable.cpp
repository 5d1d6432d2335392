// What reaches a terminal: control and bidirectional characters and bytes that are not UTF-8
// shown as visible escapes, everything else kept byte for byte.
#include <gtest/gtest.h>

#include "xwarp/render/printable.hpp"

using namespace xwarp;

TEST(Printable, PlainTextIsKeptAndControlsAreEscaped)
{
    EXPECT_EQ(one_line(""), "");
    EXPECT_EQ(one_line("pkg.sub1.module_1 (kernel scale)"), "pkg.sub1.module_1 (kernel scale)");
    EXPECT_EQ(one_line("a\nb\tc\rd"), "a\\nb\\tc\\rd");
    EXPECT_EQ(one_line("\x1b]0;owned\x07"), "\\x1b]0;owned\\x07");
    EXPECT_EQ(one_line("x\x7fy"), "x\\x7fy");
    // bidirectional controls, C1 controls and the line separators; other UTF-8 kept
    EXPECT_EQ(one_line("safe\xe2\x80\xae" "cod.exe"), "safe\\u202ecod.exe");
    EXPECT_EQ(one_line("\xc2\x85|\xe2\x80\xa8|\xe2\x81\xa6"), "\\u0085|\\u2028|\\u2066");
    EXPECT_EQ(one_line("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80"), "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80");
    // bytes that are not UTF-8, a truncated sequence at the end included
    EXPECT_EQ(one_line("a\xff" "b\xc3"), "a\\xffb\\xc3");
    EXPECT_EQ(one_line("\xe2\x28\xa1"), "\\xe2(\\xa1");
}

TEST(Printable, ABlockKeepsItsLinesAndTabs)
{
    EXPECT_EQ(printable_block("line 1\n\tline 2\n"), "line 1\n\tline 2\n");
    EXPECT_EQ(printable_block("a\r\nb\x1b[2Jc"), "a\\r\nb\\x1b[2Jc");
    const std::string long_plain(100000, 'x');
    EXPECT_EQ(printable_block(long_plain + "\n\xe2\x80\xae" + long_plain), long_plain + "\n\\u202e" + long_plain);
}
