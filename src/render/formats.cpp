// The registry of a report's formats: each one's writer, MIME type and help.
#include "xwarp/render/formats.hpp"

#include <stdexcept>

#include "xwarp/model/json_io.hpp"
#include "xwarp/render/text.hpp"
#include "xwarp/render/trace.hpp"

namespace xwarp
{
    namespace
    {
        void write_text(std::ostream& out, const report& r, const report_page&)
        {
            render_text(out, r);
        }

        void write_html(std::ostream& out, const report& r, const report_page& page)
        {
            static const guide_sections no_guide;
            write_html_page(out, page.title, [&](std::ostream& fragment)
                            { render_html(fragment, r, page.guide ? *page.guide : no_guide, page.history); });
        }

        void write_json(std::ostream& out, const report& r, const report_page&)
        {
            write_report_json(out, r, 2);
            out << '\n';
        }

        void write_trace(std::ostream& out, const report& r, const report_page&)
        {
            out << render_trace(r).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        }
    }

    const std::vector<report_renderer>& report_renderers()
    {
        static const std::vector<report_renderer> table = {
            {report_format::text, "text/plain", "the default: plain text, as measure prints it", &write_text},
            {report_format::html, "text/html", "a self-contained page", &write_html},
            {report_format::json, "application/json", "the report as the contract has it", &write_json},
            {report_format::trace, "application/json", "the build timeline as Chrome trace-event JSON", &write_trace},
        };
        return table;
    }

    const report_renderer& renderer_for(report_format format)
    {
        for (const auto& r : report_renderers())
        {
            if (r.format == format)
            {
                return r;
            }
        }
        throw std::logic_error("no renderer for the format " + word_of(format));
    }

    std::string report_formats_help()
    {
        std::string help;
        for (const auto& r : report_renderers())
        {
            help += (help.empty() ? "" : ", ") + word_of(r.format) + " (" + std::string(r.help) + ")";
        }
        return help;
    }
}
