// %warp_fix RUN [options]: each finding of a run of this notebook written as a patch (for a
// cell, against the cell's script: the %%warp_setup code, then the cell) and, with --verify,
// proved on a copy with compare.
#include "common.hpp"
#include "xwarp/fronts/options/front_options.hpp"
#include "xwarp/jobs/usecases/use_cases.hpp"

namespace xwarp
{
    namespace
    {
        using namespace magic_parts;

        class warp_fix_line : public line_magic
        {
        public:
            explicit warp_fix_line(std::shared_ptr<probe_session> s) : m_session(std::move(s)) {}

            void run(const std::string& line, magic_host& host) override
            {
                std::string name;
                fix_request request;
                CLI::App app("%warp_fix RUN [options]: write each finding of a run of this notebook as a patch and, with "
                             "--verify, prove it on a copy with compare (a cell's patch is against its script: the "
                             "%%warp_setup code, then the cell)",
                             "%warp_fix");
                bool run_flag = false;
                app.add_option("name", name, "the run: its name in this notebook, @ID, a label of the history, or a "
                                             "report file (see %warp_history)")->required();
                add_fix_options(app, request, front::notebook);
                add_run_flag(app, run_flag);
                if (!parse_line(app, line, host))
                {
                    return;
                }
                const fronts::resolved_run run = resolve_run(*m_session, name, "%warp_fix");
                if (request.verify)
                {
                    require_run(run, run_flag, "%warp_fix");
                }
                progress_display progress(host, false);
                const fronts::job_outcome outcome = run_job("%warp_fix", progress, [&] {
                    return fronts::fix(run, request, job_context_of(*m_session, host, &progress, run_flag), run_kind::fix);
                });
                show(name, outcome, host, progress);
            }

        private:
            void show(const std::string& name, const fronts::job_outcome& outcome, magic_host& host, progress_display& progress)
            {
                const report& r = outcome.result;
                show_report_outcome("warp-probe: " + std::to_string(r.fixes.size()) + " finding(s) of " + name + " fixed",
                                    outcome, report_words::fix, m_session->guide_text, host, progress);
            }

            std::shared_ptr<probe_session> m_session;
        };
    }

    std::shared_ptr<line_magic> make_warp_fix(std::shared_ptr<probe_session> session)
    {
        return std::make_shared<warp_fix_line>(std::move(session));
    }
}
