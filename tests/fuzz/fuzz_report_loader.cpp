// libFuzzer target for the report loader and everything a loaded report flows into:
// analysis, the text renderer and compare. Any input must give a report or a report_error,
// never a crash, a hang or another exception type. Reading records directly from the
// parser's events must give up or give what the schema-checked reading gives, and the JSON
// written record by record must be what dumping the report's tree gives.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "xwarp/analysis/compare.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/render/html.hpp"
#include "xwarp/render/text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::string text(reinterpret_cast<const char*>(data), size);
    std::optional<xwarp::report> direct;
    try
    {
        direct = xwarp::report_from_text(text, xwarp::record_reading::direct);
    }
    catch (const xwarp::report_error&)
    {
    }
    if (direct)
    {
        try
        {
            const auto checked = xwarp::report_from_text(text, xwarp::record_reading::checked);
            if (!checked || xwarp::report_json_text(*checked) != xwarp::report_json_text(*direct))
            {
                std::abort();  // the two readings differ
            }
        }
        catch (const xwarp::report_error&)
        {
            std::abort();  // read directly what the check refuses
        }
    }
    try
    {
        xwarp::report r = xwarp::report_from_text(text);
        xwarp::analyze(r);
        (void)xwarp::render_text(r);
        (void)xwarp::render_html(r);
        for (const int indent : {-1, 2})
        {
            // written record by record (a finding's cause re-indented from its text): the tree's dump
            if (xwarp::report_json_text(r, indent)
                != xwarp::report_to_json(r).dump(indent, ' ', false, nlohmann::json::error_handler_t::replace))
            {
                std::abort();
            }
        }
        try
        {
            auto other = r;
            auto c = xwarp::compare_reports(r, other, "a", "b");
            (void)xwarp::render_compare_text(c);
            (void)xwarp::render_compare_html(c, &r, &r);
        }
        catch (const xwarp::compare_input_error&)
        {
        }
    }
    catch (const xwarp::report_error&)
    {
    }
    return 0;
}
