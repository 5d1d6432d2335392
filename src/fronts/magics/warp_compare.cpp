// %warp_compare BEFORE AFTER [--until-settled]: two runs compared as warp-probe compare does.
#include "common.hpp"
#include "xwarp/jobs/usecases/judging.hpp"
#include "xwarp/fronts/options/validators.hpp"
#include "xwarp/jobs/usecases/use_cases.hpp"
#include "xwarp/model/json_io.hpp"

namespace xwarp
{
    namespace
    {
        using namespace magic_parts;

        class warp_compare_line : public line_magic
        {
        public:
            explicit warp_compare_line(std::shared_ptr<probe_session> s) : m_session(std::move(s)) {}

            void run(const std::string& line, magic_host& host) override
            {
                std::string a;
                std::string b;
                std::string json_path;
                CLI::App app("%warp_compare BEFORE AFTER: compare two runs (names from this notebook, stored runs "
                             "@ID, labels of stored runs, or JSON report paths)",
                             "%warp_compare");
                app.add_option("before", a, "the baseline run")->required();
                app.add_option("after", b, "the run after the change")->required();
                app.add_option("--json", json_path, "also write the comparison as JSON");
                bool until_settled = false;
                int max_samples = default_max_samples;
                app.add_flag("--until-settled", until_settled,
                             "re-run both runs (their cells, or commands), one sample a side at a time, until the "
                             "verdict is settled or each side has --max-samples; the runs of this notebook keep "
                             "the added samples");
                app.add_option("--max-samples", max_samples, "with --until-settled: the most samples a side (default 10)")
                    ->check(whole_number(2, 1000));
                bool run_foreign = false;
                app.add_flag("--run", run_foreign,
                             "with --until-settled: re-run a stored run or report file your history does not show "
                             "you ran on this machine (a report is data: without this, its command is shown, not run)");
                if (!parse_line(app, line, host))
                {
                    return;
                }
                const fronts::resolved_run before_run = resolve_run(*m_session, a, "%warp_compare");
                const fronts::resolved_run after_run = resolve_run(*m_session, b, "%warp_compare");
                if (until_settled)
                {
                    require_run(before_run, run_foreign, "%warp_compare");
                    require_run(after_run, run_foreign, "%warp_compare");
                }
                report before = before_run.saved;
                report after = after_run.saved;
                comparison c;
                try
                {
                    c = until_settled ? settled(before_run, after_run, before, after, max_samples, run_foreign, host)
                                      : fronts::compare(before, after, a, b);
                }
                catch (const fronts::job_error& e)
                {
                    throw magic_error(std::string("%warp_compare: ") + e.what());
                }
                const view shown = comparison_view(c, &before, &after);
                if (!json_path.empty())
                {
                    try
                    {
                        save_streamed(json_path, [&](std::ostream& out) { write_view(out, shown, view_part::data); });
                    }
                    catch (const std::exception& e)
                    {
                        throw magic_error(std::string("--json: ") + e.what());
                    }
                }
                host.show(view_bundle(shown), "", false);
            }

        private:
            // Both runs re-run until the verdict settles; a run of this notebook keeps the added samples.
            comparison settled(const fronts::resolved_run& before_run, const fronts::resolved_run& after_run, report& before,
                               report& after, int max_samples, bool consented, magic_host& host)
            {
                progress_display progress(host, false);
                fronts::compare_outcome outcome = fronts::compare_until_settled(
                    before_run, after_run, max_samples, job_context_of(*m_session, host, &progress, consented), std::nullopt);
                if (outcome.interrupted)
                {
                    interrupted(progress);
                }
                progress.finish("warp-probe: " + outcome.result.until_settled->stopped_because);
                before = std::move(outcome.before);
                after = std::move(outcome.after);
                for (const auto& [name, r] : {std::pair<const std::string&, const report&>(before_run.ref, before),
                                              {after_run.ref, after}})
                {
                    if (m_session->find(name))
                    {
                        m_session->store(name, r);
                    }
                }
                return std::move(outcome.result);
            }

            std::shared_ptr<probe_session> m_session;
        };
    }

    std::shared_ptr<line_magic> make_warp_compare(std::shared_ptr<probe_session> session)
    {
        return std::make_shared<warp_compare_line>(std::move(session));
    }
}
