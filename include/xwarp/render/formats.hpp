// The formats a report is written in: one registry, so that the CLI's --format, its help and
// a notebook's MIME bundle name the same set, and a front never picks a renderer by a word.
#ifndef XWARP_RENDER_FORMATS_HPP
#define XWARP_RENDER_FORMATS_HPP

#include <array>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "xwarp/model/history.hpp"
#include "xwarp/model/report.hpp"
#include "xwarp/model/verdicts.hpp"
#include "xwarp/render/html.hpp"

namespace xwarp
{
    enum class report_format
    {
        text,
        html,
        json,
        trace,
    };
    template <>
    struct enum_words<report_format>
    {
        static constexpr std::array<std::string_view, 4> words{"text", "html", "json", "trace"};
    };

    // What a page of a report shows beside the report itself.
    struct report_page
    {
        std::string title;                    // the HTML page's title
        const guide_sections* guide = nullptr;  // the mechanism guide's sections the HTML links
        const run_series* history = nullptr;    // the report's series in the history (sparklines)
    };

    struct report_renderer
    {
        report_format format;
        std::string_view mime;  // its MIME type in a notebook's bundle
        std::string_view help;  // what --format says of it
        void (*write)(std::ostream& out, const report& r, const report_page& page);
    };

    // Every format, in the order --format lists them.
    const std::vector<report_renderer>& report_renderers();
    const report_renderer& renderer_for(report_format format);
    // "text (...), html (...), ...": for a help text.
    std::string report_formats_help();
}

#endif
