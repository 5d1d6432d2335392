// %warp_report RUN [--name NAME]: a run shown as a probe shows it, without running anything: a run
// of this notebook, a stored run (@ID or a label), or a JSON report file (one recorded on another
// machine, a GPU machine for instance). With --name it joins this notebook's runs, so that
// %warp_compare can name it as it names a probed run.
#include "common.hpp"
#include "xwarp/model/json_io.hpp"

namespace xwarp
{
    namespace
    {
        using namespace magic_parts;

        class warp_report_line : public line_magic
        {
        public:
            explicit warp_report_line(std::shared_ptr<probe_session> s) : m_session(std::move(s)) {}

            void run(const std::string& line, magic_host& host) override
            {
                std::string what;
                std::string name;
                CLI::App app("%warp_report RUN [--name NAME]: show a run's report without running anything (a run of "
                             "this notebook, a stored run @ID or label, or a JSON report file, such as one recorded "
                             "on a GPU machine)",
                             "%warp_report");
                app.add_option("run", what, "the run or the report file")->required();
                app.add_option("--name", name,
                               "keep it among this notebook's runs under NAME, so %warp_compare can name it (a run of "
                               "this notebook with that name is replaced)");
                if (!parse_line(app, line, host))
                {
                    return;
                }
                // re-analysed as `warp-probe report` does: the findings are this xwarp's
                report r = fronts::show(resolve_run(*m_session, what, "%warp_report"), m_session->history_option, false).analysed;
                if (!name.empty())
                {
                    m_session->store(name, r);
                    m_session->shown.insert(name);  // kept for %warp_compare, never taken for a run made here
                }
                const guide_sections guide = parse_guide(m_session->guide_text);
                host.show(view_bundle(notebook_report_view(r, {"", &guide})), "", false);
            }

        private:
            std::shared_ptr<probe_session> m_session;
        };
    }

    std::shared_ptr<line_magic> make_warp_report(std::shared_ptr<probe_session> session)
    {
        return std::make_shared<warp_report_line>(std::move(session));
    }
}
