// The HTML renderer: escaping, self-containment, and what each section shows.
#include <gtest/gtest.h>

#include <sstream>

#include "builders.hpp"
#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/compare.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/render/html.hpp"

using namespace xwarp;
using namespace xwarp::testing;

namespace
{
    report hostile_report()
    {
        report r;
        r.label = "<img src=x onerror=alert(1)>";
        r.command = {"python", "a&b.py"};
        auto a = load("<script>alert('m')</script>", "aaaa1111", 3000, load_status::compiled, 1, {"k\"1"});
        auto b = load("<script>alert('m')</script>", "bbbb2222", 400, load_status::compiled, 1, {"k\"1", "<b>k2</b>"});
        a.seq = 1;
        b.seq = 2;
        auto cold = pass(4000, {a, b});
        cold.launches[0].kernel = "</td><script>evil()</script>";
        r.samples.push_back(make_sample(1, cold, pass(500, {})));
        analyze(r);
        return r;
    }
}

TEST(Html, EscapesEveryCharacterThatMatters)
{
    EXPECT_EQ(html_escape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

TEST(Html, HostileNamesStayInert)
{
    std::string html = render_html(hostile_report());
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(html.find("<img"), std::string::npos);
    EXPECT_EQ(html.find("<b>k2"), std::string::npos);
    EXPECT_NE(html.find("&lt;script&gt;alert(&#39;m&#39;)&lt;/script&gt;"), std::string::npos);
    EXPECT_NE(html.find("&lt;/td&gt;&lt;script&gt;evil()"), std::string::npos);
}

TEST(Html, SelfContainedWithTheExpectedSections)
{
    std::string html = render_html(hostile_report(), {{"cs-1", "CS-1 in full"}});
    EXPECT_EQ(html.find("<style"), std::string::npos);
    EXPECT_EQ(html.find("http://"), std::string::npos);
    EXPECT_EQ(html.find("https://"), std::string::npos);
    for (const char* section : {"data-xwarp=\"summary\"", "data-xwarp=\"identities\"", "data-xwarp=\"finding\"",
                                "data-xwarp=\"launches\"", "data-xwarp=\"chart\"", "data-xwarp=\"group\"", "CS-1 in full"})
    {
        EXPECT_NE(html.find(section), std::string::npos) << section;
    }
}

// The CLI writes pages as they are made: the streamed page is the page, on the report's
// early way out (no good sample) too.
TEST(Html, TheStreamedPageIsThePageWhole)
{
    report failed;
    run_result bad = pass(100, {});
    bad.exit_code = 3;
    bad.stderr_tail = "Traceback: <boom>";
    failed.samples.push_back(make_sample(1, bad, pass(100, {})));
    failed.samples.back().warm.reset();
    analyze(failed);
    const report hostile = hostile_report();
    for (const report* r : {static_cast<const report*>(&failed), &hostile})
    {
        std::ostringstream streamed;
        write_html_page(streamed, "t <1>", [&](std::ostream& page) { render_html(page, *r); });
        const std::string page = html_page("t <1>", render_html(*r));
        EXPECT_EQ(streamed.str(), page);
        EXPECT_NE(page.find("<div class=\"xwarp-report\""), std::string::npos);
        EXPECT_EQ(page.substr(page.size() - 15), "</body></html>\n");
    }
    EXPECT_NE(html_page("t", render_html(failed)).find("No statistics"), std::string::npos);
}

TEST(Html, FailedRunShowsNoStatisticsAndTheError)
{
    report r;
    run_result bad;
    bad.exit_code = 2;
    bad.stderr_tail = "Traceback <boom>\n";
    sample s;
    s.index = 1;
    s.cold = bad;
    r.samples.push_back(s);
    analyze(r);
    std::string html = render_html(r);
    EXPECT_NE(html.find("No statistics"), std::string::npos);
    EXPECT_NE(html.find("Traceback &lt;boom&gt;"), std::string::npos);
    EXPECT_EQ(html.find("data-xwarp=\"summary\""), std::string::npos);
}

TEST(Html, CompareViewPutsVerdictFirstAndBothRunsSideBySide)
{
    report before = hostile_report();
    report after = before;
    auto c = compare_reports(before, after, "<before>", "after");
    std::string html = render_compare_html(c, &before, &after);
    auto verdict = html.find("data-xwarp=\"verdict\"");
    auto sides = html.find("data-xwarp=\"sides\"");
    ASSERT_NE(verdict, std::string::npos);
    ASSERT_NE(sides, std::string::npos);
    EXPECT_LT(verdict, sides);
    EXPECT_NE(html.find("data-xwarp=\"receipts\""), std::string::npos);
    EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(Html, GuideSectionsAreSplitByHeading)
{
    auto g = parse_guide("# title\n\n## cs-1\n\nfirst\n\n---\n\n## cs-2\n\nsecond\n");
    ASSERT_EQ(g.size(), 2u);
    EXPECT_EQ(g["cs-1"], "\nfirst");
    EXPECT_EQ(g["cs-2"], "\nsecond");
}

// A thousand modules with generated names of 2,000 characters (a factory's parametrised names can
// run long): every name the page shows is capped and every list stops, so the page stays under
// 2 MB; the full names stay in the report.
TEST(Html, LongNamesByTheThousandStayUnderTwoMegabytes)
{
    report r;
    r.command = {"python", "many.py"};
    std::vector<module_load> loads;
    for (int i = 0; i < 1000; ++i)
    {
        std::string name = "mod_" + std::to_string(i) + "_" + std::string(2000, 'x');
        auto first = load(name, "a" + std::to_string(i), 5.0 + i % 7, load_status::compiled, 1,
                          {std::string(2000, 'k') + std::to_string(i)});
        auto again = load(name, "b" + std::to_string(i), 3.0, load_status::compiled, 1, {"k" + std::to_string(i)});
        first.seq = 2 * i;
        again.seq = 2 * i + 1;
        loads.push_back(first);
        loads.push_back(again);
    }
    auto cold = pass(20000, loads);
    for (int i = 0; i < 1000; ++i)
    {
        launch_record l;
        l.kernel = std::string(2000, 'k') + std::to_string(i);
        l.module = loads[2 * i].module;
        l.device = "cpu";
        l.count = 1;
        cold.launches.push_back(l);
    }
    r.samples.push_back(make_sample(1, cold, pass(900, {})));
    analyze(r);
    const std::string page = html_page("many", render_html(r));
    EXPECT_LT(page.size(), 2u * 1000 * 1000) << "a page of " << page.size() << " bytes";
    EXPECT_EQ(r.samples[0].cold.module_loads[0].module.str().size(), 2000u + 6);
}
