// %warp_warmup RUN [options]: a run of this notebook as a warm-up file that builds every
// identity it built before the program runs (a cell's kernels travel in the file with the
// cell's code), and with --verify the proof on fresh private caches.
#include "common.hpp"
#include "xwarp/fronts/use_cases.hpp"
#include "xwarp/render/html.hpp"
#include "xwarp/render/warmup.hpp"

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
                warmup_options options;
                CLI::App app("%warp_warmup RUN [options]: write a Python file (needing only Warp) that builds every module "
                             "identity a run of this notebook built, before the program runs; with --verify, prove it on "
                             "fresh private caches",
                             "%warp_warmup");
                app.add_option("name", name, "the run (see %warp_history)")->required();
                add_warmup_options(app, options, front::notebook);
                if (!parse_line(app, line, host))
                {
                    return;
                }
                const report* found = &own_run(*m_session, name, "%warp_warmup");
                rerun again = rerun_of(*found, name, *m_session, host);
                warmup_job job;
                job.plan.source = "run " + name + " of this notebook";
                job.plan.workers = options.workers;
                job.plan.device = options.device;
                job.plan.arch = options.arch;
                job.out_path = options.out;
                job.verify = options.verify;
                job.samples = options.samples;
                progress_display progress(host, false);
                warmup_plan plan;
                try
                {
                    plan = fronts::warm_up(*found, again.options, job, &progress, [&] { return host.interrupt_requested(); });
                }
                catch (const std::exception& e)
                {
                    throw magic_error(std::string("%warp_warmup: ") + e.what());
                }
                if (plan.check && plan.check->verdict == "interrupted")
                {
                    interrupted(progress);
                }
                progress.finish("warp-probe: warm-up of " + name + ": " + std::to_string(plan.covered) + " of "
                                + std::to_string(plan.covered + plan.uncovered) + " identities covered"
                                + (plan.check ? ", " + plan.check->verdict : std::string()));
                const std::string text = render_warmup_text(plan);
                std::string html = render_preformatted_html(text);
                if (plan.script_path.empty())
                {
                    html += "<details><summary>warp_warmup.py</summary>" + render_preformatted_html(plan.script) + "</details>";
                }
                host.show({{"text/html", html}, {"text/plain", plan.script_path.empty() ? text + "\n" + plan.script : text}}, "",
                          false);
                if (plan.check && plan.check->verdict != "verified")
                {
                    throw magic_error("%warp_warmup: the warm-up did not verify: "
                                      + (plan.check->reasons.empty() ? plan.check->verdict : plan.check->reasons.front()));
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
