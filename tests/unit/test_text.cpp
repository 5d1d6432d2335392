// The text report: the summary's tables are printed from the report row by row (not from a
// cleaned copy), so every name in them is made inert where it is printed.
#include <gtest/gtest.h>

#include <sstream>

#include "builders.hpp"
#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/render/printable.hpp"
#include "xwarp/render/text.hpp"

using namespace xwarp;
using namespace xwarp::testing;

namespace
{
    std::size_t count(const std::string& text, const std::string& what)
    {
        std::size_t n = 0;
        for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size()))
        {
            ++n;
        }
        return n;
    }
}

TEST(Text, TablesArePrintedWithEveryNameInertAndLongNamesWholeOnlyInTheIdentities)
{
    report r;
    const std::string name = std::string(120, 'm') + "\x1b[2J\nx";  // a newline would break its row
    auto a = load(name, "aaaa1111", 3000, load_status::compiled, 1, {"k"});
    auto b = load(name, "bbbb2222", 400, load_status::compiled, 1, {"k", "k2"});
    a.seq = 1;
    b.seq = 2;
    a.triggered_by = "step\t\r";
    r.samples.push_back(make_sample(1, pass(9000, {a, b}), pass(500, {})));
    analyze(r);
    ASSERT_EQ(r.result.rebuilt.size(), 1u);
    ASSERT_FALSE(r.result.timeline.spans.empty());
    const std::string text = render_text(r);
    EXPECT_EQ(text.find('\x1b'), std::string::npos);
    EXPECT_EQ(text.find('\r'), std::string::npos);
    const std::string inert = std::string(120, 'm') + "\\x1b[2J\\nx";
    EXPECT_EQ(count(text, inert), 2u) << text;  // the two identities' rows
    EXPECT_NE(text.find("hash churn        " + std::string(64, 'm')), std::string::npos) << text;
    EXPECT_NE(text.find("(130 characters)"), std::string::npos);
    EXPECT_NE(text.find("waited by the launch of step\\t\\r"), std::string::npos) << text;
    std::ostringstream streamed;
    render_text(streamed, r);
    EXPECT_EQ(streamed.str(), text);
}

TEST(Text, FindingsBeyondTheListedAreCountedFromTheWholeReport)
{
    report r;
    std::vector<module_load> loads;
    for (int m = 0; m < 600; ++m)
    {
        loads.push_back(load("m" + std::to_string(m), "a" + std::to_string(m), 100 + m, load_status::compiled, 1, {"k"}));
        loads.push_back(load("m" + std::to_string(m), "b" + std::to_string(m), 50, load_status::compiled, 1, {"k", "k2"}));
        loads[loads.size() - 2].seq = 2 * m;
        loads.back().seq = 2 * m + 1;
    }
    r.samples.push_back(make_sample(1, pass(600000, loads), pass(500, {})));
    analyze(r);
    ASSERT_GT(r.findings.size(), 600u);
    const std::string text = render_text(r);
    EXPECT_NE(text.find("  ... " + std::to_string(r.findings.size() - 30) + " more, one line each:\n"), std::string::npos);
    EXPECT_NE(text.find("  ... and " + std::to_string(r.findings.size() - 500) + " more (the JSON report has all)\n"),
              std::string::npos);
    EXPECT_NE(text.find("\n  500. ["), std::string::npos);
    EXPECT_EQ(text.find("\n  501. ["), std::string::npos);
}

// The outline's summary is every field but the five large tables (summary_without_tables).
TEST(Text, TheOutlineKeepsEveryFieldOfTheSummaryButItsTables)
{
    report r;
    auto a = load("m", "aaaa1111", 3000, load_status::compiled, 1, {"k"});
    auto b = load("m", "bbbb2222", 400, load_status::compiled, 1, {"k", "k2"});
    a.seq = 1;
    b.seq = 2;
    r.samples.push_back(make_sample(1, pass(9000, {a, b}), pass(8500, {b})));
    r.samples.push_back(make_sample(2, pass(100, {}), pass(100, {})));
    r.samples.back().cold.exit_code = 1;
    analyze(r);
    ASSERT_FALSE(r.result.warnings.empty());
    ASSERT_FALSE(r.result.flags.empty());
    auto without_tables = [](const report& of)
    {
        nlohmann::json j = report_to_json(of)["summary"];
        for (const char* table : {"identities", "rebuilt", "modules", "launch_kernels"})
        {
            j.erase(table);
        }
        j["timeline"].erase("spans");
        return j;
    };
    const report outline = printable_outline(r, 0, false);
    EXPECT_TRUE(outline.result.identities.empty() && outline.result.rebuilt.empty() && outline.findings.empty());
    EXPECT_EQ(without_tables(outline), without_tables(printable_copy(r)));
}

// A comparison's hash receipts are a report's texts too: module, device and each hash's
// prefix are printed on one line, inert (the page as a whole keeps its newlines, so a newline
// in a hash broke its row before).
TEST(Text, AComparisonPrintsItsReceiptsOnOneLineInert)
{
    comparison c;
    c.verdict = xwarp::verdict::inconclusive;
    hash_receipt r;
    r.module = "mod\x1b]0;x\a";
    r.device = "cpu\n";
    r.before = {shared_text("ab\ncdefgh")};
    r.after = {shared_text("1234567890")};
    r.changed = true;
    c.receipts.push_back(r);
    const std::string text = render_compare_text(c);
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
    EXPECT_EQ(text.find('\a'), std::string::npos) << text;
    EXPECT_NE(text.find("changed    mod\\x1b]0;x\\x07 on cpu\\n: ab\\ncdef -> 1234567\n"), std::string::npos) << text;
}
