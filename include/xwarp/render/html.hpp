// Self-contained HTML rendering of reports and comparisons, for notebooks (JupyterLab,
// Notebook 7, VS Code, nbconvert) and files. Inline styles only: no <style>, no script,
// no external resource, so sanitizers keep it readable and nothing leaks into the page.
// Every string from a report is escaped. Renderers only format what analysis computed.
#ifndef XWARP_RENDER_HTML_HPP
#define XWARP_RENDER_HTML_HPP

#include <functional>
#include <iosfwd>
#include <map>
#include <string>

#include "xwarp/model/comparison.hpp"
#include "xwarp/model/history.hpp"
#include "xwarp/model/report.hpp"

namespace xwarp
{
    // & < > " ' escaped; safe in text and in double- or single-quoted attributes.
    std::string html_escape(const std::string& text);

    // Optional guide text per mechanism id (from references/mechanisms.md), shown under each
    // finding; empty entries are skipped.
    using guide_sections = std::map<std::string, std::string>;

    // With `history`, a History section: sparklines of the run's series and its steps.
    std::string render_html(const report& r, const guide_sections& guide = {}, const run_series* history = nullptr);
    // The same, written to `out` as it is made: a report's page is not held whole (twice, as it
    // grew) beside the model it is drawn from.
    void render_html(std::ostream& out, const report& r, const guide_sections& guide = {},
                     const run_series* history = nullptr);
    std::string render_compare_html(const comparison& c, const report* before = nullptr, const report* after = nullptr);

    // Text shown as it is (a magic's message, its help), escaped, in a <pre>.
    std::string render_preformatted_html(const std::string& text);
    // The findings so far, under a banner, dimmed: replaced by the final report when it comes.
    std::string render_provisional_html(const std::string& banner, const std::string& report_html);

    // A whole HTML page around a fragment (for `warp-probe report --format html`).
    std::string html_page(const std::string& title, const std::string& fragment);
    // The page written to `out`, with the fragment writer called between its head and its end.
    void write_html_page(std::ostream& out, const std::string& title, const std::function<void(std::ostream&)>& fragment);

    // The sections of a mechanisms.md text keyed by their "## id" heading.
    guide_sections parse_guide(const std::string& markdown);
}

#endif
