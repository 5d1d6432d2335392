// warp-probe report REPORT|@ID|RECORDED_DIR [--format text|html|json|trace] [-o F]: a saved
// report re-analysed and rendered, streamed.
#include <filesystem>
#include <iostream>
#include <system_error>

#include "command.hpp"
#include "shared.hpp"
#include "xwarp/jobs/usecases/exit_codes.hpp"
#include "xwarp/jobs/usecases/use_cases.hpp"
#include "xwarp/engine/install/layout.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/render/html.hpp"
#include "xwarp/render/printable.hpp"
#include "xwarp/render/text.hpp"
#include "xwarp/render/trace.hpp"

namespace xwarp::cli
{
    namespace
    {
        class report_cmd : public subcommand
        {
        public:
            CLI::App* add(CLI::App& app) override
            {
                auto* sub = app.add_subcommand("report", "Re-analyse a saved JSON report and render it");
                sub->add_option("report", m_input,
                                "a JSON report written by measure --json, a stored run (@ID), or a run recorded with "
                                "--keep-records, or a label of the history")
                    ->required();
                add_history_option(sub, m_history);
                sub->add_option("--format,-f", m_format,
                                "text, html (a self-contained page), json, or trace (the build timeline as Chrome "
                                "trace-event JSON)")
                    ->check(CLI::IsMember({"text", "html", "json", "trace"}));
                sub->add_option("--output,-o", m_output,
                                "write to this file instead of stdout (beside it first, then renamed over it: a failed "
                                "write leaves the old file; a device or pipe is written in place)");
                return sub;
            }

            int run() override
            {
                fronts::resolved_run run;
                if (int code = resolve_arg(m_input, m_history, run))
                {
                    return code;
                }
                // The report's series in the history, when there is one: the page's sparklines and its step.
                fronts::shown_report shown = fronts::show(std::move(run), m_history, m_format == "html");
                print_notes(shown.notes);
                report& r = shown.analysed;
                const std::optional<run_series>& history = shown.history;
                // Streamed: the pretty-printed JSON of a large report is several times its model,
                // and a page or a text held whole was held twice or more as it grew.
                guide_sections guide;
                if (m_format == "html")
                {
                    guide = parse_guide(installed_guide_text());
                }
                const auto write = [&](std::ostream& out) { render(out, r, guide, history ? &*history : nullptr); };
                if (m_output.empty())
                {
                    write(std::cout);
                    std::cout.flush();
                }
                else
                {
                    // beside the file, then renamed over it: a failure leaves the old file whole
                    try
                    {
                        save_streamed(m_output, write);
                    }
                    catch (const std::system_error& e)
                    {
                        return fail(exit_code::cannot_write, e.what());
                    }
                }
                leave_to_exit(r);
                return exit_code::ok;
            }

        private:
            void render(std::ostream& out, const report& r, const guide_sections& guide, const run_series* history) const
            {
                if (m_format == "json")
                {
                    write_report_json(out, r, 2);
                    out << '\n';
                }
                else if (m_format == "text")
                {
                    render_text(out, r);
                }
                else if (m_format == "trace")
                {
                    out << render_trace(r).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
                }
                else
                {
                    write_html_page(out, "warp-probe report " + r.label,
                                    [&](std::ostream& page) { render_html(page, r, guide, history); });
                }
            }

            std::string m_input;
            std::string m_history;
            std::string m_format = "text";
            std::string m_output;
        };
    }

    std::unique_ptr<subcommand> report_command()
    {
        return std::make_unique<report_cmd>();
    }
}
