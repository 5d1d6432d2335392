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
                scoped_temp_dir tmp("xwarp-cell-");
                const std::string setup = m_session->setup_code;
                const auto [script, setup_lines] = write_cell_script(tmp, setup, cell);
                run_and_show(cell_command(script, host), o, *m_session, host, [&](report& r)
                             {
                                 relabel_cell_locations(r, script, setup_lines);
                                 r.command = {"python", "<cell>"};
                                 r.cell_code = cell;
                                 if (!setup.empty())
                                 {
                                     r.setup_code = setup;
                                 }
                             });
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
                app.add_option("command", o.command, "the command, after --");
                if (!parse_line(app, line, host))
                {
                    return;
                }
                if (o.command.empty())
                {
                    throw magic_error("%warp_probe: no command; use %warp_probe [options] -- COMMAND ... (or the cell "
                                      "magic %%warp_probe to probe a cell)");
                }
                measure_options mo;
                mo.command = o.command;
                run_and_show(mo, o, *m_session, host, [](report&) {});
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
