// One result as every front shows it: as text, as an HTML fragment (and the title of its page)
// and as data under its MIME type. A renderer makes a view; the CLI writes the parts its flags
// name (write_view: --json the data, --html the page, the text to the terminal) and a notebook
// shows the parts as one bundle (view_bundle). No front pairs a MIME type with a rendering or
// picks a renderer itself.
//
// The parts are writers, called when a front asks for them: a report's page is written as it is
// made, never held whole. A view refers to what it was made from, which must outlive it.
#ifndef XWARP_RENDER_VIEW_HPP
#define XWARP_RENDER_VIEW_HPP

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "xwarp/model/budget.hpp"
#include "xwarp/model/comparison.hpp"
#include "xwarp/model/history.hpp"
#include "xwarp/model/report.hpp"
#include "xwarp/model/warmup.hpp"
#include "xwarp/render/html.hpp"

namespace xwarp
{
    // The MIME types of the data a view carries in a notebook's bundle. Not application/json:
    // JupyterLab and Notebook 7 rank their JSON viewer above HTML and would show a JSON tree
    // instead of the report; a vendor type is carried along and left to tools.
    inline constexpr const char* text_mime = "text/plain";
    inline constexpr const char* html_mime = "text/html";
    inline constexpr const char* report_mime = "application/vnd.xwarp.report+json";
    inline constexpr const char* comparison_mime = "application/vnd.xwarp.comparison+json";
    inline constexpr const char* expectation_mime = "application/vnd.xwarp.expectation+json";
    inline constexpr const char* warmup_plan_mime = "application/vnd.xwarp.warmup-plan+json";

    struct view
    {
        using writer = std::function<void(std::ostream&)>;
        std::string title;      // the HTML page's title
        writer text;            // plain text
        writer html;            // an HTML fragment
        std::string mime;       // the data's type; empty: the view has no data part
        writer data;            // the result as JSON
    };

    // The parts a front writes of a view.
    enum class view_part
    {
        text,
        html,  // the HTML fragment, for a page of one's own
        page,  // the HTML fragment in a self-contained page
        data,
    };
    void write_view(std::ostream& out, const view& v, view_part part);
    std::string view_text(const view& v, view_part part);
    // A notebook's display bundle: text/plain, text/html and, when the view has data, its MIME type.
    nlohmann::json view_bundle(const view& v);

    // What a page of a report shows beside the report itself.
    struct report_page
    {
        std::string title;                      // the HTML page's title
        const guide_sections* guide = nullptr;  // the mechanism guide's sections the HTML links
        const run_series* history = nullptr;    // the report's series in the history (sparklines)
    };

    // Which text a report's view shows: the whole report (measure, report), or what the job that
    // made it did (fix: each patch and its verdict; whatif: the replays and the declined ledger).
    enum class report_words
    {
        whole,
        fix,
        whatif,
    };
    // A report: its text, its page, and its JSON whole.
    view report_view(const report& r, const report_page& page, report_words words = report_words::whole);
    // The same as a notebook shows it: the JSON cut to at most notebook_report_bytes
    // (notebook_report_data).
    view notebook_report_view(const report& r, const report_page& page, report_words words = report_words::whole);
    // A report's JSON whole up to notebook_report_bytes; beyond, without the samples' records
    // (loads, launches, processes), which the summary already holds in tables, then with the
    // summary's long tables cut to their first rows, and a warning naming what was cut
    // (%warp_export writes it whole). A 20,000-worker report was 33 MB sent to the browser, where
    // the HTML page is 0.7 MB.
    inline constexpr std::size_t notebook_report_bytes = std::size_t{4} << 20;
    // The text part a notebook keeps (the front-end shows it where it shows no HTML, and the
    // notebook file stores it): its first lines up to this many bytes, then where the whole text
    // is. A report of thousands of identities had 3 MB of text/plain beside its 0.7 MB page.
    inline constexpr std::size_t notebook_text_bytes = std::size_t{256} << 10;
    nlohmann::json notebook_report_data(const report& r);
    // The findings so far, under a banner and dimmed; no data (the final report replaces it).
    view provisional_view(const std::string& banner, const report& so_far);
    // The build timeline as Chrome trace-event JSON (its data only).
    view trace_view(const report& r);

    view comparison_view(const comparison& c, const report* before = nullptr, const report* after = nullptr);
    // An expectation's or a budget's limits, met or not; the data says whether all were met and
    // what was asked.
    view budget_view(const std::vector<budget_result>& results, const std::string& title, bool met,
                     const std::string& asked);
    // A warm-up plan: its coverage and verification, and the plan file's text when it was not
    // written to a file; the data is the plan.
    view warmup_view(const warmup_plan& plan, const std::string& title);
    view history_list_view(const std::vector<history_run>& runs, const std::string& store);
    // A notebook's own runs, after `preface` (why the history is not shown).
    view session_runs_view(const std::vector<std::pair<std::string, report>>& runs, const std::string& preface);
    // Plain text as it is (a message, a help text), its HTML an escaped <pre>.
    view text_view(std::string text);
}

#endif
