// warp-probe compare BEFORE AFTER: credit a change only when the launch workload is the same
// and the change is beyond the noise band; --until-settled re-runs both sides until the verdict
// is settled.
#include <cstdio>
#include <iostream>

#include "command.hpp"
#include "shared.hpp"
#include "xwarp/jobs/usecases/exit_codes.hpp"
#include "xwarp/jobs/usecases/judging.hpp"
#include "xwarp/fronts/options/validators.hpp"
#include "xwarp/jobs/usecases/use_cases.hpp"
#include "xwarp/engine/install/layout.hpp"
#include "xwarp/model/release.hpp"

namespace xwarp::cli
{
    namespace
    {
        class compare_cmd : public subcommand
        {
        public:
            CLI::App* add(CLI::App& app) override
            {
                auto* sub = app.add_subcommand(
                    "compare",
                    "Compare two reports: credit a compile-time change only when the launch workload is the same\n"
                    "and the change is beyond the noise band (and significant with >= 5 samples a side)");
                sub->add_option("before", m_before, "the baseline report (JSON, a stored run @ID, or a label of the history)")->required();
                sub->add_option("after", m_after, "the report after the change (JSON, a stored run @ID, or a label of the history)")->required();
                add_history_option(sub, m_history);
                sub->add_option("--json", m_json, "also write the comparison as JSON");
                sub->add_option("--html", m_html, "also write the comparison as a self-contained HTML page");
                sub->add_flag("--until-settled", m_until_settled,
                              "re-run each side's command (from its report: argv, folder, python, timeout; in this "
                              "shell's environment), one sample a side at a time, until the verdict is settled or each "
                              "side has --max-samples; the reports given are never rewritten (the grown runs go to the "
                              "history)");
                sub->add_option("--max-samples", m_max_samples, "with --until-settled: the most samples a side (default 10)")
                    ->check(whole_number(2, 1000));
                sub->add_flag("--quiet,-q", m_quiet, "with --until-settled: no progress lines");
                add_run_option(sub, m_run);
                add_replay_streams_option(sub, m_replay_streams);
                return sub;
            }

            int run() override
            {
                comparison c;
                try
                {
                    if (int code = m_until_settled ? compare_settled(c) : compare_files(c))
                    {
                        return code;
                    }
                }
                catch (const fronts::job_error& e)
                {
                    return fail(e);
                }
                if (c.until_settled && c.until_settled->interrupted)
                {
                    return interrupted_exit();
                }
                return finish(c);
            }

        private:
            // Both sides re-run until settled; both, with the samples added, go to the history (a
            // side already stored keeps its id).
            int compare_settled(comparison& c)
            {
                fronts::resolved_run before;
                fronts::resolved_run after;
                if (int code = resolve_arg(m_before, m_history, before))
                {
                    return code;
                }
                if (int code = resolve_arg(m_after, m_history, after))
                {
                    return code;
                }
                cli_job job(m_history, m_replay_streams, m_run, m_quiet);
                if (int code = job.consent({&before, &after}))
                {
                    return code;
                }
                fronts::compare_outcome outcome;
                try
                {
                    outcome = fronts::compare_until_settled(before, after, m_max_samples, job.start(), run_kind::compare);
                }
                catch (const fronts::job_error& e)
                {
                    return fail(e);
                }
                print_notes(outcome.notes);
                c = std::move(outcome.result);
                m_before_report = std::move(outcome.before);
                m_after_report = std::move(outcome.after);
                m_before_id = outcome.before_id;
                m_after_id = outcome.after_id;
                return 0;
            }

            // Analysed whole and stored, or its figures only: all a comparison reads of a side
            // (its findings are made only for the report the history keeps).
            void analyse_side(const std::string& arg, report& side, bool to_store, std::optional<std::int64_t>& id)
            {
                fronts::ready_side(side, arg, to_store);
                if (to_store)
                {
                    id = store_run(m_history, side, run_kind::compare, true);
                }
            }

            // One report at a time. With the history on, each side is first read, analysed,
            // stored (a side already stored keeps its id) and dropped; the comparison then reads
            // each side again for its figures only, as with the history off, keeping the first
            // only as far as it reads it while the second is read. An analysed side kept beside
            // the other was what put compare over 4 x a 10k file. Standard input or a pipe can be
            // read once only: then each side is analysed, stored and kept as far as the
            // comparison reads it.
            int compare_files(comparison& c)
            {
                const bool stored = !fronts::history_path(m_history).empty();
                keep_large_blocks_mapped();  // the second side's records, after the first's are freed
                const auto before_stamp = stamp_report_arg(m_before);
                const auto after_stamp = stamp_report_arg(m_after);
                const bool stored_first = stored && before_stamp && after_stamp;
                if (stored_first)
                {
                    for (auto [arg, id] : {std::pair(&m_before, &m_before_id), std::pair(&m_after, &m_after_id)})
                    {
                        report side;
                        if (int code = load_report_arg(*arg, m_history, side))
                        {
                            return code;
                        }
                        analyse_side(*arg, side, true, *id);
                        side = report{};  // dropped, and its pages handed back before the next is read
                        give_back_freed_pages();
                    }
                }
                const auto take_side = [&](const std::string& arg, const std::optional<file_stamp>& stamp, report& side,
                                           std::optional<std::int64_t>& id) -> int
                {
                    if (int code = load_report_arg(arg, m_history, side))
                    {
                        return code;
                    }
                    if (stored_first && stamp_report_arg(arg) != stamp)
                    {
                        return fail(fronts::job_error(fronts::job_error::kind::bad_input,
                                                      arg + ": changed between compare's two readings of it; run compare again"));
                    }
                    analyse_side(arg, side, stored && !stored_first, id);
                    fronts::trim_side(side);  // the page shows its figures only
                    return 0;
                };
                if (int code = take_side(m_before, before_stamp, m_before_report, m_before_id))
                {
                    return code;
                }
                if (int code = take_side(m_after, after_stamp, m_after_report, m_after_id))
                {
                    return code;
                }
                c = fronts::compare_ready(m_before_report, m_after_report, m_before, m_after);
                return 0;
            }

            int finish(comparison& c)
            {
                const view shown = comparison_view(c, &m_before_report, &m_after_report);
                if (int rc = write_view_files(shown, m_json, ""))
                {
                    return rc;
                }
                if (m_before_id && m_after_id && m_html.empty())
                {
                    // only the HTML page reads the sides again: the comparison's text and its
                    // insert below take their place
                    m_before_report = report{};
                    m_after_report = report{};
                }
                if (m_before_id && m_after_id)
                {
                    std::vector<std::string> notes;
                    fronts::store_comparison(m_history, *m_before_id, *m_after_id, c, notes);
                    print_notes(notes);
                }
                if (int rc = write_view_files(shown, "", m_html))
                {
                    return rc;
                }
                write_view(std::cout, shown, view_part::text);
                leave_to_exit(m_before_report);
                leave_to_exit(m_after_report);
                leave_to_exit(c);
                return c.exit_code;
            }

            std::string m_before;
            std::string m_after;
            std::string m_history;
            std::string m_json;
            std::string m_html;
            bool m_until_settled = false;
            bool m_run = false;
            int m_max_samples = default_max_samples;
            bool m_quiet = false;
            std::string m_replay_streams;
            report m_before_report;
            report m_after_report;
            std::optional<std::int64_t> m_before_id;  // each side's id in the history, once stored
            std::optional<std::int64_t> m_after_id;
        };
    }

    std::unique_ptr<subcommand> compare_command()
    {
        return std::make_unique<compare_cmd>();
    }
}
