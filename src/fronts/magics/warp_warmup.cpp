// %warp_warmup RUN [options]: a run of this notebook as a warm-up file that builds every
// identity it built before the program runs (a cell's kernels travel in the file with the
// cell's code), and with --verify the proof on fresh private caches.
#include "common.hpp"
#include "xwarp/fronts/options/front_options.hpp"
#include "xwarp/jobs/usecases/use_cases.hpp"

namespace xwarp
{
    namespace
    {
        using namespace magic_parts;

        class warp_warmup_line : public line_magic
        {
        public:
            explicit warp_warmup_line(std::shared_ptr<probe_session> s) : m_session(std::move(s)) {}

            void run(const std::string& line, magic_host& host) override
            {
                std::string name;
                warmup_request request;
                CLI::App app("%warp_warmup RUN [options]: write a Python file (needing only Warp) that builds every module "
                             "identity a run of this notebook built, before the program runs; with --verify, prove it on "
                             "fresh private caches",
                             "%warp_warmup");
                bool run_flag = false;
                app.add_option("name", name, "the run: its name in this notebook, @ID, a label of the history, or a "
                                             "report file (see %warp_history)")->required();
                add_warmup_options(app, request, front::notebook);
                add_run_flag(app, run_flag);
                if (!parse_line(app, line, host))
                {
                    return;
                }
                const fronts::resolved_run run = resolve_run(*m_session, name, "%warp_warmup");
                // a file made from a run not measured here runs that run's names as code
                require_run(run, run_flag, "%warp_warmup");
                progress_display progress(host, false);
                const warmup_plan plan = run_job("%warp_warmup", progress, [&] {
                    return fronts::warm_up(run, request, job_context_of(*m_session, host, &progress, run_flag));
                }).plan;
                progress.finish("warp-probe: warm-up of " + name + ": " + std::to_string(plan.covered) + " of "
                                + std::to_string(plan.covered + plan.uncovered) + " identities covered"
                                + (plan.check ? ", " + word_of(plan.check->verdict) : std::string()));
                host.show(view_bundle(warmup_view(plan, "%warp_warmup " + name)), "", false);
                if (plan.covered == 0)
                {
                    throw magic_error("%warp_warmup: the warm-up could build none of the run's identities (each NOT line says why)");
                }
                if (plan.check && plan.check->verdict != warmup_verdict::verified)
                {
                    throw magic_error("%warp_warmup: the warm-up did not verify: "
                                      + (plan.check->reasons.empty() ? word_of(plan.check->verdict) : plan.check->reasons.front()));
                }
            }

        private:
            std::shared_ptr<probe_session> m_session;
        };
    }

    std::shared_ptr<line_magic> make_warp_warmup(std::shared_ptr<probe_session> session)
    {
        return std::make_shared<warp_warmup_line>(std::move(session));
    }
}
