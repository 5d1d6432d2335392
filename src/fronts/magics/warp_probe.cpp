// %%warp_probe (a cell) and %warp_probe -- COMMAND (an external command): probed in fresh
// processes, cold then warm on private caches, the report shown in place.
#include "common.hpp"

namespace xwarp
{
    namespace
    {
        using namespace magic_parts;

        class warp_probe_cell : public cell_magic
        {
        public:
            explicit warp_probe_cell(std::shared_ptr<probe_session> s) : m_session(std::move(s)) {}

            void run(const std::string& line, const std::string& cell, magic_host& host) override
            {
                probe_magic_options o;
                CLI::App app("%%warp_probe [options]: probe this cell (after the %%warp_setup code) in fresh "
                             "processes, cold then warm on private Warp and CUDA caches",
                             "%%warp_probe");
                add_probe_magic_options(app, o);
                if (!parse_line(app, line, host))
                {
                    return;
                }
                if (cell.find_first_not_of(" \t\r\n") == std::string::npos)
                {
                    throw magic_error("%%warp_probe: the cell is empty; put the code to probe below the magic line");
                }
                // The script lives in a private temporary folder, never in the notebook's.
                o.request.cell_code = cell;
                o.request.setup_code = m_session->setup_code;
                run_and_show(o, *m_session, host);
            }

        private:
            std::shared_ptr<probe_session> m_session;
        };

        class warp_probe_line : public line_magic
        {
        public:
            explicit warp_probe_line(std::shared_ptr<probe_session> s) : m_session(std::move(s)) {}

            void run(const std::string& line, magic_host& host) override
            {
                probe_magic_options o;
                CLI::App app("%warp_probe [options] -- COMMAND...: probe an external command, as warp-probe measure "
                             "does (run in the notebook's folder)",
                             "%warp_probe");
                add_probe_magic_options(app, o);
                app.add_option("command", o.request.command, "the command, after --");
                if (!parse_line(app, line, host))
                {
                    return;
                }
                if (o.request.command.empty())
                {
                    throw magic_error("%warp_probe: no command; use %warp_probe [options] -- COMMAND ... (or the cell "
                                      "magic %%warp_probe to probe a cell)");
                }
                run_and_show(o, *m_session, host);
            }

        private:
            std::shared_ptr<probe_session> m_session;
        };
    }

    std::shared_ptr<cell_magic> make_warp_probe_cell(std::shared_ptr<probe_session> session)
    {
        return std::make_shared<warp_probe_cell>(std::move(session));
    }

    std::shared_ptr<line_magic> make_warp_probe_line(std::shared_ptr<probe_session> session)
    {
        return std::make_shared<warp_probe_line>(std::move(session));
    }
}
