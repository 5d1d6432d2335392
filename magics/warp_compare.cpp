// %warp_compare BEFORE AFTER [--until-settled]: two runs compared as warp-probe compare does.
#include "common.hpp"
#include "xwarp/analysis/compare.hpp"
#include "xwarp/fronts/exit_codes.hpp"
#include "xwarp/fronts/options.hpp"
#include "xwarp/fronts/replay_trust.hpp"
#include "xwarp/fronts/use_cases.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/render/html.hpp"
#include "xwarp/render/text.hpp"

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
                report before = resolve_run(*m_session, a, "%warp_compare");
                report after = resolve_run(*m_session, b, "%warp_compare");
                if (until_settled && !run_foreign)
                {
                    refuse_foreign(a, before);
                    refuse_foreign(b, after);
                }
                comparison c;
                try
                {
                    c = until_settled ? settled(before, after, a, b, max_samples, host) : compare_reports(before, after, a, b);
                    c.exit_code = exit_code_for(c.verdict);
                }
                catch (const compare_input_error& e)
                {
                    throw magic_error(e.what());
                }
                catch (const probe_error& e)
                {
                    throw magic_error(std::string("%warp_compare: ") + e.what());
                }
                if (!json_path.empty())
                {
                    try
                    {
                        save_json(json_path, comparison_to_json(c));
                    }
                    catch (const std::exception& e)
                    {
                        throw magic_error(std::string("--json: ") + e.what());
                    }
                }
                host.show({{"text/html", render_compare_html(c, &before, &after)},
                           {"text/plain", render_compare_text(c)},
                           {comparison_mime, comparison_to_json(c)}},
                          "", false);
            }

        private:
            // A run of this notebook was made here; any other (a stored run, a file) is re-run
            // only when the history shows this user ran it on this machine, or with --run.
            void refuse_foreign(const std::string& name, const report& r)
            {
                if (m_session->measured_here(name))
                {
                    return;
                }
                const fronts::replay_check check = fronts::check_replay(r, m_session->history_option);
                if (!check.ran_here)
                {
                    throw magic_error("%warp_compare: " + name + " asks to run what you have not run here (" + check.why
                                      + "):\n" + what_a_replay_runs(r)
                                      + "not run: a report is data; add --run to re-run it");
                }
            }

            // Both runs re-run until the verdict settles; a run of this notebook keeps the added samples.
            comparison settled(report& before, report& after, const std::string& a, const std::string& b,
                               int max_samples, magic_host& host)
            {
                rerun before_again = rerun_of(before, a, *m_session, host);
                rerun after_again = rerun_of(after, b, *m_session, host);
                progress_display progress(host, false);
                comparison c = fronts::compare_until_settled(before, after, before_again.options, after_again.options,
                                                             max_samples, a, b, &progress,
                                                             [&] { return host.interrupt_requested(); });
                if (c.until_settled && c.until_settled->stopped_because == "interrupted")
                {
                    interrupted(progress);
                }
                progress.finish("warp-probe: " + c.until_settled->stopped_because);
                const auto until = c.until_settled;
                before_again.relabel(before);
                after_again.relabel(after);
                c = compare_reports(before, after, a, b);  // with the locations pointing at the notebook
                c.until_settled = until;
                for (const auto& [name, r] : {std::pair<const std::string&, const report&>(a, before), {b, after}})
                {
                    if (m_session->find(name))
                    {
                        m_session->store(name, r);
                    }
                }
                return c;
            }

            std::shared_ptr<probe_session> m_session;
        };
    }

    std::shared_ptr<line_magic> make_warp_compare(std::shared_ptr<probe_session> session)
    {
        return std::make_shared<warp_compare_line>(std::move(session));
    }
}
