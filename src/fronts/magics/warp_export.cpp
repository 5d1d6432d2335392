// %warp_export NAME PATH: a run of this notebook written as a JSON report, or an HTML page.
#include <fstream>

#include "common.hpp"
#include "xwarp/jobs/usecases/replay_trust.hpp"
#include "xwarp/model/json_io.hpp"

namespace xwarp
{
    namespace
    {
        using namespace magic_parts;

        class warp_export_line : public line_magic
        {
        public:
            explicit warp_export_line(std::shared_ptr<probe_session> s) : m_session(std::move(s)) {}

            void run(const std::string& line, magic_host& host) override
            {
                std::string name;
                std::string path;
                CLI::App app("%warp_export NAME PATH: write a run as a JSON report (or a self-contained HTML page when "
                             "PATH ends in .html)",
                             "%warp_export");
                app.add_option("name", name, "the run: its name in this notebook, @ID, a label of the history, or a report file "
                                             "(see %warp_history)")->required();
                app.add_option("path", path, "where to write it")->required();
                if (!parse_line(app, line, host))
                {
                    return;
                }
                const auto resolved = resolve_run(*m_session, name, "%warp_export");
                const report& r = resolved.saved;
                try
                {
                    const bool html = path.size() >= 5 && path.compare(path.size() - 5, 5, ".html") == 0;
                    if (!html && resolved.ran_here)
                    {
                        // the user's own run: its bytes are recorded, and the file reads back as theirs
                        std::vector<std::string> notes;
                        fronts::write_own_report(path, r, m_session->history_option, notes);
                    }
                    else
                    {
                        // beside the file, then renamed over it: a failure leaves the old file whole
                        const guide_sections guide = parse_guide(m_session->guide_text);
                        const view shown = report_view(r, {"warp-probe " + name, &guide});
                        save_streamed(path, [&](std::ostream& out) { write_view(out, shown, html ? view_part::page : view_part::data); });
                    }
                }
                catch (const std::exception& e)
                {
                    throw magic_error(std::string("%warp_export: ") + e.what());
                }
                host.show(text_bundle("wrote " + name + " to " + path), "", false);
            }

        private:
            std::shared_ptr<probe_session> m_session;
        };
    }

    std::shared_ptr<line_magic> make_warp_export(std::shared_ptr<probe_session> session)
    {
        return std::make_shared<warp_export_line>(std::move(session));
    }
}
