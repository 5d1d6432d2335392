// %%warp_setup [--append] [--clear]: code every later %%warp_probe cell runs first.
#include "common.hpp"

namespace xwarp
{
    namespace
    {
        using namespace magic_parts;

        class warp_setup_cell : public cell_magic
        {
        public:
            explicit warp_setup_cell(std::shared_ptr<probe_session> s) : m_session(std::move(s)) {}

            void run(const std::string& line, const std::string& cell, magic_host& host) override
            {
                bool append = false;
                bool clear = false;
                CLI::App app("%%warp_setup [--append] [--clear]: code every later %%warp_probe cell runs first "
                             "(imports, data); it does not run here",
                             "%%warp_setup");
                app.add_flag("--append", append, "add to the stored setup instead of replacing it");
                app.add_flag("--clear", clear, "forget the stored setup");
                if (!parse_line(app, line, host))
                {
                    return;
                }
                if (clear)
                {
                    m_session->setup_code.clear();
                    host.show(text_bundle("warp_setup cleared"), "", false);
                    return;
                }
                std::string code = cell;
                while (!code.empty() && (code.back() == '\n' || code.back() == ' '))
                {
                    code.pop_back();
                }
                m_session->setup_code = append && !m_session->setup_code.empty() ? m_session->setup_code + "\n" + code : code;
                const auto lines = std::count(m_session->setup_code.begin(), m_session->setup_code.end(), '\n') + 1;
                host.show(text_bundle("warp_setup stored (" + std::to_string(lines)
                                      + " lines): every %%warp_probe cell runs it first"),
                          "", false);
            }

        private:
            std::shared_ptr<probe_session> m_session;
        };
    }

    std::shared_ptr<cell_magic> make_warp_setup(std::shared_ptr<probe_session> session)
    {
        return std::make_shared<warp_setup_cell>(std::move(session));
    }
}
