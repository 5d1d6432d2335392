// %warp_whatif NAME [LEVER...]: the levers replayed on a run of this notebook (its cell, or its
// command), against fresh baseline samples interleaved with them.
#include "common.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/analysis/whatif.hpp"
#include "xwarp/fronts/use_cases.hpp"
#include "xwarp/history/store.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/render/html.hpp"
#include "xwarp/render/text.hpp"

namespace xwarp
{
    namespace
    {
        using namespace magic_parts;

        class warp_whatif_line : public line_magic
        {
        public:
            explicit warp_whatif_line(std::shared_ptr<probe_session> s) : m_session(std::move(s)) {}

            void run(const std::string& line, magic_host& host) override
            {
                std::string name;
                replay_request request;
                CLI::App app("%warp_whatif NAME [LEVER...]: replay levers on a run of this notebook, unmodified, and "
                             "measure each (default: auto, the levers of its findings)",
                             "%warp_whatif");
                app.add_option("name", name, "the run (see %warp_history)")->required();
                app.add_option("levers", request.levers, "levers to replay, or auto: " + lever_names());
                add_replay_options(app, request);
                if (!parse_line(app, line, host))
                {
                    return;
                }
                const report* found = &own_run(*m_session, name, "%warp_whatif");
                rerun again = rerun_of(*found, name, *m_session, host);
                progress_display progress(host, false);
                report r;
                try
                {
                    r = fronts::replay(*found, again.options, request, &progress, [&] { return host.interrupt_requested(); });
                }
                catch (const probe_error& e)
                {
                    throw magic_error(std::string("%warp_whatif: ") + e.what());
                }
                catch (const unknown_lever& e)
                {
                    throw magic_error(std::string("%warp_whatif: ") + e.what());
                }
                if (r.status == "interrupted")
                {
                    interrupted(progress);
                }
                if (found->cell_code)
                {
                    again.relabel(r);
                    analyze(r);
                }
                show(name, r, host, progress);
            }

        private:
            void show(const std::string& name, const report& r, magic_host& host, progress_display& progress)
            {
                m_session->store(name, r);
                std::vector<std::string> notes;
                const auto stored = remember_run(locate_history(m_session->history_option), r, "whatif", notes);
                std::string done = "warp-probe: " + std::to_string(r.whatif.size()) + " lever(s) of " + name + " replayed"
                                   + (stored ? ", stored as @" + std::to_string(*stored) : std::string());
                for (const auto& n : notes)
                {
                    done += "\nwarp-probe: " + n;
                }
                progress.finish(done);
                host.show({{"text/html", render_html(r, parse_guide(m_session->guide_text))},
                           {"text/plain", render_whatif_text(r)},
                           {report_mime, report_to_json(r)}},
                          "", false);
            }

            std::shared_ptr<probe_session> m_session;
        };
    }

    std::shared_ptr<line_magic> make_warp_whatif(std::shared_ptr<probe_session> session)
    {
        return std::make_shared<warp_whatif_line>(std::move(session));
    }
}
