// The registry of a report's formats: each one's writer (a part of its view) and help.
#include "xwarp/render/formats.hpp"

#include <stdexcept>


namespace xwarp
{
    namespace
    {
        view whole_report(const report& r, const report_page& page)
        {
            return report_view(r, page);
        }

        view timeline_of(const report& r, const report_page&)
        {
            return trace_view(r);
        }
    }

    const std::vector<report_renderer>& report_renderers()
    {
        static const std::vector<report_renderer> table = {
            {report_format::text, "the default: plain text, as measure prints it", &whole_report, view_part::text},
            {report_format::html, "a self-contained page", &whole_report, view_part::page},
            {report_format::json, "the report as the contract has it", &whole_report, view_part::data},
            {report_format::trace, "the build timeline as Chrome trace-event JSON", &timeline_of, view_part::data},
        };
        return table;
    }

    void report_renderer::write(std::ostream& out, const report& r, const report_page& page) const
    {
        write_view(out, make(r, page), part);
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
