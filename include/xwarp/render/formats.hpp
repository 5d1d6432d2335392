// The formats a report is written in (`warp-probe report --format`): one registry of the parts
// of its view (view.hpp) and its trace, so that --format, its help and the writer name the same
// set, and a front never picks a renderer by a word.
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
#include "xwarp/render/view.hpp"

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

    struct report_renderer
    {
        report_format format;
        std::string_view help;  // what --format says of it
        view (*make)(const report& r, const report_page& page);  // the view it writes a part of
        view_part part;
        void write(std::ostream& out, const report& r, const report_page& page) const;
    };

    // Every format, in the order --format lists them.
    const std::vector<report_renderer>& report_renderers();
    const report_renderer& renderer_for(report_format format);
    // "text (...), html (...), ...": for a help text.
    std::string report_formats_help();
}

#endif
