// warp-probe report REPORT|@ID|--records DIR [--format text|html|json|trace] [-o F]: a saved
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
#include "xwarp/render/formats.hpp"
#include "xwarp/render/printable.hpp"

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
                auto* input = sub->add_option("report", m_input,
                                              "a JSON report written by measure --json, a stored run (@ID), or a label of the "
                                              "history");
                auto* records = sub->add_option("--records", m_records,
                                                "a folder of recorded passes instead (contracts/recorded_run.schema.json): a "
                                                "run recorded with --keep-records, or the one pass pytest --warp-builds "
                                                "recorded")
                                    ->check(CLI::ExistingDirectory);
                input->excludes(records);
                add_history_option(sub, m_history);
                std::vector<std::string> formats;
                for (const auto& r : report_renderers())
                {
                    formats.push_back(word_of(r.format));
                }
                sub->add_option("--format,-f", m_format_word, report_formats_help())->check(CLI::IsMember(formats));
                sub->add_option("--output,-o", m_output,
                                "write to this file instead of stdout (beside it first, then renamed over it: a failed "
                                "write leaves the old file; a device or pipe is written in place)");
                return sub;
            }

            int run() override
            {
                m_format = parse_member<report_format>(m_format_word);  // one of the registry's words (checked)
                if (!m_records.empty())
                {
                    m_input = m_records;
                }
                if (m_input.empty())
                {
                    return fail(exit_code::usage, "report: give a report (a file, @ID or a label) or --records DIR");
                }
                fronts::resolved_run run;
                if (int code = resolve_arg(m_input, m_history, run))
                {
                    return code;
                }
                // The report's series in the history, when there is one: the page's sparklines and its step.
                fronts::shown_report shown = fronts::show(std::move(run), m_history, m_format == report_format::html);
                print_notes(shown.notes);
                report& r = shown.analysed;
                const std::optional<run_series>& history = shown.history;
                // Streamed: the pretty-printed JSON of a large report is several times its model,
                // and a page or a text held whole was held twice or more as it grew.
                const guide_sections guide = m_format == report_format::html ? parse_guide(installed_guide_text()) : guide_sections{};
                const report_page page{"warp-probe report " + r.label, &guide, history ? &*history : nullptr};
                const report_renderer& format = renderer_for(m_format);
                const int written = write_view_part(m_output, format.make(r, page), format.part);
                leave_to_exit(r);
                return written;
            }

        private:
            std::string m_input;
            std::string m_records;
            std::string m_history;
            std::string m_format_word = "text";
            report_format m_format = report_format::text;
            std::string m_output;
        };
    }

    std::unique_ptr<subcommand> report_command()
    {
        return std::make_unique<report_cmd>();
    }
}
