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

// The text page copies a comparison without its receipts (a row per module) to escape it: what
// the copy holds is the comparison but the receipts, its texts made inert.
TEST(Printable, AComparisonsOutlineIsAllButItsReceiptsAndInert)
{
    comparison c;
    c.created_utc = "2026-12-04T00:00:00Z";
    c.before.path = "before.json";
    c.after.path = "after\x1b[2J.json";
    c.verdict = xwarp::verdict::improved;
    c.exit_code = 3;
    c.reasons = {"a reason"};
    c.notes = {"a note"};
    c.workload.status = workload_status::same;
    c.clocks.emplace_back();
    c.clocks[0].clock = xwarp::clock::cold_module_work;
    c.judged_on = {xwarp::clock::cold_module_work, "why \x1b[2J"};
    c.same_structure = true;
    c.structure.push_back({"identities", 1.0, 2.0});
    c.option_checks.emplace_back();
    c.option_checks[0].message = "an option";
    c.until_settled = settling{1, 2, 10, true, "settled"};
    hash_receipt r;
    r.module = "m";
    r.before = {shared_text("0123456789")};
    c.receipts.push_back(r);

    comparison from_outline;
    static_cast<comparison_outline&>(from_outline) = printable_outline(c);
    EXPECT_EQ(from_outline.after.path, "after\\x1b[2J.json");
    EXPECT_EQ(from_outline.judged_on.why, "why \\x1b[2J");
    c.after.path = from_outline.after.path;  // the two texts that needed their escape
    c.judged_on.why = from_outline.judged_on.why;
    auto whole = comparison_to_json(c);
    whole.erase("receipts");
    auto outline = comparison_to_json(from_outline);
    EXPECT_EQ(outline["receipts"], nlohmann::json::array());
    outline.erase("receipts");
    EXPECT_EQ(outline, whole);
}

// A page taken over is escaped as printable_block escapes it, and kept as it is when clean.
TEST(Printable, APageTakenOverIsEscapedAsABlock)
{
    for (const std::string text : {"", "two\nlines\tand a tab\n", "a \x1b[2J clear", "bidi \xe2\x80\xae here",
                                   "not utf-8 \xff", "caf\xc3\xa9\n"})
    {
        EXPECT_EQ(printable_page(text), printable_block(text)) << text;
    }
}

TEST(Printable, InvisibleCharactersAndBackslashesCannotBeConfused)
{
    // A zero-width joiner (or space, or a BOM) would make two names that differ read the same.
    EXPECT_EQ(one_line("mo\xe2\x80\x8d" "dule"), "mo\\u200ddule");
    EXPECT_EQ(one_line("a\xe2\x80\x8b" "b\xef\xbb\xbf" "c"), "a\\u200bb\\ufeffc");
    EXPECT_EQ(one_line("tag\xf3\xa0\x80\x81"), "tag\\U000e0001");
    // The text \x1b (four characters) never reads like an escaped ESC (one character).
    EXPECT_EQ(one_line("\\x1b[31m"), "\\\\x1b[31m");
    EXPECT_EQ(one_line("\x1b[31m"), "\\x1b[31m");
    EXPECT_NE(one_line("\\x1b"), one_line("\x1b"));
    EXPECT_EQ(one_line("\\u202e"), "\\\\u202e");
    EXPECT_EQ(one_line("a\\\\b"), "a\\\\\\b");  // the first doubled (a backslash follows it), the second kept
    // a backslash that starts no escape of ours stays as it is
    EXPECT_EQ(one_line("\\d+\\.\\w"), "\\d+\\.\\w");
    EXPECT_EQ(printable_block("line\\n\nnext"), "line\\\\n\nnext");
}

TEST(Printable, EveryTextFieldOfAReportsFixesSettingsAndPhasesHasItsBackslashesDoubled)
{
    // a report file's text: "\x1b" written out must never read as an escaped ESC
    report r;
    r.run_settings.stopped_because = "stop \\x1b here";
    fix_result f;
    for (std::string* x : {&f.finding, &f.lever, &f.reason, &f.together, &f.patch_file, &f.module})
    {
        *x = "a \\x1b b";
    }
    r.fixes.push_back(f);
    const report out = printable_outline(r, 30, false);
    EXPECT_EQ(out.run_settings.stopped_because, "stop \\\\x1b here");
    const fix_result& g = out.fixes.front();
    for (const std::string* x : {&g.finding, &g.lever, &g.reason, &g.together, &g.patch_file, &g.module})
    {
        EXPECT_EQ(*x, "a \\\\x1b b");
    }
}
