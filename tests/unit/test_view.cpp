// The views (render/view.hpp): every front writes or shows a result's parts from one view, so each
// part must be the result's own rendering, and a format of `report` a part of the report's view.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "builders.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/render/formats.hpp"
#include "xwarp/render/html.hpp"
#include "xwarp/render/text.hpp"
#include "xwarp/render/trace.hpp"
#include "xwarp/render/view.hpp"

using namespace xwarp;
using namespace xwarp::testing;

namespace
{
    report small_report()
    {
        report r;
        r.label = "small <one>";
        r.samples.push_back(make_sample(1, pass(100, {load("a", "1111111", 10)}), pass(10, {})));
        summarize(r);
        finding f;
        f.mechanism = "CS-1";
        f.title = "a finding";
        f.guide = "cs-1";
        r.findings.push_back(f);
        return r;
    }
}

TEST(View, EachPartOfAReportsViewIsTheReportsOwnRendering)
{
    const report r = small_report();
    const guide_sections guide = {{"cs-1", "the guide's section"}};
    const view v = report_view(r, {"a page <title>", &guide});
    const nlohmann::json bundle = view_bundle(v);
    EXPECT_EQ(bundle.size(), 3u) << bundle.dump();
    EXPECT_EQ(bundle[text_mime], render_text(r));
    EXPECT_EQ(bundle[html_mime], render_html(r, guide));
    EXPECT_NE(bundle[html_mime].get<std::string>().find("the guide&#39;s section"), std::string::npos);
    EXPECT_EQ(bundle[report_mime], report_to_json(r));
    EXPECT_EQ(nlohmann::json::parse(view_text(v, view_part::data)), report_to_json(r));
    const std::string page = view_text(v, view_part::page);
    EXPECT_EQ(page, html_page("a page <title>", render_html(r, guide)));
    // a job's own words in place of the report's
    EXPECT_EQ(view_text(report_view(r, {}, report_words::fix), view_part::text), render_fix_text(r));
    EXPECT_EQ(view_text(report_view(r, {}, report_words::whatif), view_part::text), render_whatif_text(r));
}

TEST(View, EveryFormatOfReportWritesAPartOfTheReportsView)
{
    const report r = small_report();
    const report_page page{"t"};
    ASSERT_EQ(report_renderers().size(), 4u);
    for (const auto& format : report_renderers())
    {
        std::ostringstream written;
        format.write(written, r, page);
        EXPECT_EQ(written.str(), view_text(format.make(r, page), format.part)) << word_of(format.format);
        EXPECT_FALSE(written.str().empty()) << word_of(format.format);
    }
    std::ostringstream trace;
    renderer_for(report_format::trace).write(trace, r, page);
    EXPECT_EQ(nlohmann::json::parse(trace.str()), render_trace(r));
    std::ostringstream json;
    renderer_for(report_format::json).write(json, r, page);
    EXPECT_EQ(nlohmann::json::parse(json.str()), report_to_json(r));
}

TEST(View, AViewWithoutDataShowsNoDataPartAndItsTextEscaped)
{
    const nlohmann::json bundle = view_bundle(text_view("a <b> & c"));
    EXPECT_EQ(bundle.size(), 2u) << bundle.dump();
    EXPECT_EQ(bundle[text_mime], "a <b> & c");
    EXPECT_EQ(bundle[html_mime], render_preformatted_html("a <b> & c"));
    EXPECT_EQ(bundle[html_mime].get<std::string>().find("<b>"), std::string::npos);
    EXPECT_EQ(view_text(text_view("x"), view_part::data), "");
}

TEST(View, AnExpectationsDataSaysWhetherItWasMetAndWhatWasAsked)
{
    budget_result over;
    over.metric = "identities";
    over.limit = 1;
    over.value = 2;
    over.exceeded = true;
    over.message = "identities 2 > 1";
    const nlohmann::json bundle = view_bundle(budget_view({over}, "Expectation", false, "identities<=1"));
    EXPECT_EQ(bundle[expectation_mime], (nlohmann::json{{"met", false}, {"expect", "identities<=1"}}));
    EXPECT_NE(bundle[text_mime].get<std::string>().find("identities 2 > 1"), std::string::npos);
}

// A notebook gets the report as a MIME bundle: a 20,000-worker report was 33 MB there. Past
// notebook_report_bytes the samples' records go (the summary's tables stay) and a warning says so;
// a report under it is sent whole.
TEST(View, TheNotebooksCopyOfAHugeReportLeavesOutTheRecordsAndSaysSo)
{
    report small;
    small.samples.push_back(make_sample(1, pass(100, {load("a", "1111111", 10)}), pass(10, {})));
    summarize(small);
    EXPECT_EQ(notebook_report_data(small), report_to_json(small));

    report huge;
    std::vector<module_load> loads;
    for (int i = 0; i < 20000; ++i)
    {
        loads.push_back(load("module_" + std::to_string(i), std::to_string(1000000 + i), 10));
    }
    huge.samples.push_back(make_sample(1, pass(1000, loads), pass(10, {})));
    summarize(huge);
    const std::string whole = report_json_text(huge);
    ASSERT_GT(whole.size(), notebook_report_bytes);
    const nlohmann::json sent = notebook_report_data(huge);
    EXPECT_LE(sent.dump().size(), notebook_report_bytes);
    EXPECT_TRUE(sent["samples"][0]["cold"]["module_loads"].empty());
    // the identities table keeps its first rows, and the warning says how many there were
    EXPECT_LT(sent["summary"]["identities"].size(), 20000u);
    EXPECT_EQ(sent["summary"]["identities"][0], report_to_json(huge)["summary"]["identities"][0]);
    EXPECT_TRUE(std::any_of(sent["warnings"].begin(), sent["warnings"].end(), [](const nlohmann::json& w)
                            { return w.get<std::string>().find("identities (20000)") != std::string::npos; }))
        << sent["warnings"].dump();
    const auto& warnings = sent["warnings"];
    EXPECT_TRUE(std::any_of(warnings.begin(), warnings.end(), [](const nlohmann::json& w)
                            { return w.get<std::string>().find("leaves out the samples' records") != std::string::npos; }))
        << warnings.dump();
    // its text part: the first lines, up to notebook_text_bytes, and where the rest is; the CLI's
    // view of the same report keeps the text whole
    const report_page page;
    std::ostringstream shown;
    notebook_report_view(huge, page).text(shown);
    std::ostringstream whole_text;
    report_view(huge, page).text(whole_text);
    ASSERT_GT(whole_text.str().size(), notebook_text_bytes);
    EXPECT_LE(shown.str().size(), notebook_text_bytes + 200);
    EXPECT_EQ(whole_text.str().rfind(shown.str().substr(0, 1000), 0), 0u);  // the same text, from its start
    EXPECT_NE(shown.str().find("more: warp-probe report, or the file %warp_export writes, holds it whole"), std::string::npos);
    std::ostringstream small_text;
    notebook_report_view(small, page).text(small_text);
    EXPECT_EQ(small_text.str().find("the text goes on for"), std::string::npos);
}
