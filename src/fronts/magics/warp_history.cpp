// %warp_history [filters] | --session: the runs in the history store, or this kernel's runs.
#include "common.hpp"
#include "xwarp/jobs/usecases/use_cases.hpp"

namespace xwarp
{
    namespace
    {
        using namespace magic_parts;

        class warp_history_line : public line_magic
        {
        public:
            explicit warp_history_line(std::shared_ptr<probe_session> s) : m_session(std::move(s)) {}

            void run(const std::string& line, magic_host& host) override
            {
                CLI::App app("%warp_history: the runs in the history store, newest first (they outlive the kernel; "
                             "@ID names one for %warp_compare), or --session: this kernel's runs only",
                             "%warp_history");
                history_filter filter;
                bool session_only = false;
                app.add_option("--label", filter.label, "only runs with this label (a probe's --name)");
                app.add_option("--command", filter.command, "only runs whose command contains this text");
                add_run_kind_option(app, filter.kind);
                app.add_option("--limit", filter.limit, "at most this many (0: all)")->check(CLI::Range(0, 1000000));
                app.add_flag("--session", session_only, "this kernel's runs, oldest first, with their top finding");
                if (!parse_line(app, line, host))
                {
                    return;
                }
                std::string no_store;
                if (!session_only)
                {
                    std::vector<std::string> notes;
                    std::optional<fronts::stored_runs> stored;
                    try
                    {
                        stored = fronts::history_runs(m_session->history_option, filter, no_store, notes);
                    }
                    catch (const std::exception& e)
                    {
                        throw magic_error(std::string("%warp_history: ") + e.what());
                    }
                    if (stored)
                    {
                        host.show(view_bundle(history_list_view(stored->runs, stored->path)), "", false);
                        return;
                    }
                }
                const std::string why = no_store.empty() ? "" : no_store + ": this kernel's runs only\n";
                host.show(view_bundle(session_runs_view(m_session->named_runs, why)), "", false);
            }

        private:
            std::shared_ptr<probe_session> m_session;
        };
    }

    std::shared_ptr<line_magic> make_warp_history(std::shared_ptr<probe_session> session)
    {
        return std::make_shared<warp_history_line>(std::move(session));
    }
}
