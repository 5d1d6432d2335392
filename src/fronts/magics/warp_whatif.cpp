// %warp_whatif NAME [LEVER...]: the levers replayed on a run of this notebook (its cell, or its
// command), against fresh baseline samples interleaved with them.
#include "common.hpp"
#include "xwarp/fronts/options/front_options.hpp"
#include "xwarp/jobs/usecases/use_cases.hpp"

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
                bool run_flag = false;
                app.add_option("name", name, "the run: its name in this notebook, @ID, a label of the history, or a "
                                             "report file (see %warp_history)")->required();
                add_lever_positional(app, request.levers, "levers to replay, or auto: " + lever_names());
                add_replay_options(app, request);
                add_run_flag(app, run_flag);
                if (!parse_line(app, line, host))
                {
                    return;
                }
                const fronts::resolved_run run = resolve_run(*m_session, name, "%warp_whatif");
                require_run(run, run_flag, "%warp_whatif");
                progress_display progress(host, false);
                const fronts::job_outcome outcome = run_job("%warp_whatif", progress, [&] {
                    return fronts::replay(run, request, job_context_of(*m_session, host, &progress, run_flag), run_kind::whatif);
                });
                show(name, outcome, host, progress);
            }

        private:
            void show(const std::string& name, const fronts::job_outcome& outcome, magic_host& host, progress_display& progress)
            {
                const report& r = outcome.result;
                m_session->store(name, r);
                show_report_outcome("warp-probe: " + std::to_string(r.whatif.size()) + " lever(s) of " + name + " replayed",
                                    outcome, report_words::whatif, m_session->guide_text, host, progress);
            }

            std::shared_ptr<probe_session> m_session;
        };
    }

    std::shared_ptr<line_magic> make_warp_whatif(std::shared_ptr<probe_session> session)
    {
        return std::make_shared<warp_whatif_line>(std::move(session));
    }
}
