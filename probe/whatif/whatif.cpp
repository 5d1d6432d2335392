// What-if replays: runs the baseline and lever samples interleaved, within the budget, and
// hands each replay to the analysis for its verdict.
#include "xwarp/whatif/whatif.hpp"

#include "xwarp/analysis/summarize.hpp"
#include "xwarp/analysis/whatif.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp
{
    namespace
    {
        struct lever_run
        {
            lever_plan plan;
            std::vector<sample> samples;
        };

        double sample_ms(const sample& s)
        {
            return s.cold.wall_ms + (s.warm ? s.warm->wall_ms : 0.0);
        }

        // Splits the plans into replays to run and results already decided: nothing to move
        // (not-applied), or more than the budget has left (not-run). Each replay costs as many
        // samples as the baseline has, at the measured cost of one baseline sample.
        std::vector<lever_run> select(const std::vector<lever_plan>& plans,
                                      int samples,
                                      double one_sample_ms,
                                      double budget_ms,
                                      std::vector<whatif_result>& decided)
        {
            std::vector<lever_run> runs;
            double spent = 0.0;
            for (const auto& p : plans)
            {
                if (!p.not_applicable.empty())
                {
                    decided.push_back(unrun_lever(p, "not-applied", p.not_applicable));
                    continue;
                }
                const double cost = samples * one_sample_ms;
                if (spent + cost > budget_ms)
                {
                    decided.push_back(unrun_lever(p, "not-run",
                                                  "over the what-if budget: it needs about " + format_ms(cost) + ", "
                                                      + format_ms(std::max(0.0, budget_ms - spent))
                                                      + " were left (raise it with --whatif-budget)"));
                    continue;
                }
                spent += cost;
                runs.push_back({p, {}});
            }
            return runs;
        }

        // Baseline sample i (when from_baseline <= i), then each lever's sample i, for i in 1..n.
        // False when interrupted.
        bool interleave(const prepared_command& command,
                        std::vector<sample>& baseline,
                        int from_baseline,
                        std::vector<lever_run>& runs,
                        int n,
                        run_observer* observer,
                        const cancel_check& cancelled)
        {
            std::map<std::string, std::string> baseline_env;
            for (const auto& r : runs)
            {
                if (r.plan.time_launches)
                {
                    baseline_env["XWARP_TIME_LAUNCHES"] = r.plan.timed_kernels();  // the same timing on both sides
                }
            }
            for (int i = 1; i <= n; ++i)
            {
                if (i >= from_baseline)
                {
                    baseline.push_back(run_sample(command, i, baseline_env, "", observer, cancelled));
                    if (stop_sampling(baseline.back(), cancelled))
                    {
                        return false;
                    }
                }
                for (auto& r : runs)
                {
                    r.samples.push_back(run_sample(command, i, r.plan.environment(), r.plan.lever, observer, cancelled));
                    if (stop_sampling(r.samples.back(), cancelled))
                    {
                        return false;
                    }
                }
            }
            return true;
        }

        std::vector<whatif_result> judge(const prepared_command& command,
                                         const report& baseline,
                                         std::vector<lever_run>& runs,
                                         std::vector<whatif_result> decided,
                                         bool completed)
        {
            std::vector<whatif_result> out;
            for (auto& r : runs)
            {
                if (!completed)
                {
                    out.push_back(unrun_lever(r.plan, "not-run", "interrupted before its samples were complete"));
                    continue;
                }
                report replay = make_report(command, std::move(r.samples));
                analyze(replay);
                out.push_back(judge_replay(r.plan, baseline, replay));
            }
            for (auto& d : decided)
            {
                out.push_back(std::move(d));
            }
            return out;
        }
    }

    whatif_request parse_whatif_request(const std::string& spec, double budget_s)
    {
        whatif_request request;
        std::string item;
        for (std::size_t i = 0; i <= spec.size(); ++i)
        {
            if (i == spec.size() || spec[i] == ',')
            {
                if (item == "auto")
                {
                    request.automatic = true;
                }
                else if (!item.empty())
                {
                    request.levers.push_back(item);
                }
                item.clear();
            }
            else if (spec[i] != ' ')
            {
                item += spec[i];
            }
        }
        if (budget_s > 0)
        {
            request.budget_s = budget_s;
        }
        return request;
    }

    report measure_with_whatif(const measure_options& options,
                               const whatif_request& request,
                               run_observer* observer,
                               const cancel_check& cancelled)
    {
        const prepared_command command = prepare_command(options);
        plan_levers(report{}, request.levers, false);  // an unknown lever fails before anything runs
        std::vector<sample> baseline;
        baseline.push_back(run_sample(command, 1, {}, "", observer, cancelled));
        report first = make_report(command, baseline);
        if (stop_sampling(baseline.back(), cancelled) || !baseline.back().ok())
        {
            // Without a good first sample there is nothing to plan from: measure as usual.
            for (int i = 2; i <= options.samples && !stop_sampling(baseline.back(), cancelled); ++i)
            {
                baseline.push_back(run_sample(command, i, {}, "", observer, cancelled));
            }
            report r = make_report(command, std::move(baseline));
            analyze(r);
            return r;
        }
        if (observer && options.samples > 1)
        {
            observer->sample_finished(1, options.samples, first);
        }
        analyze(first);
        const auto plans = plan_levers(first, request.levers, request.automatic);
        const double budget_ms = request.budget_s ? *request.budget_s * 1000.0
                                                  : default_budget_cold_runs * baseline.front().cold.wall_ms;
        std::vector<whatif_result> decided;
        auto runs = select(plans, options.samples, sample_ms(baseline.front()), budget_ms, decided);
        const bool completed = interleave(command, baseline, 2, runs, options.samples, observer, cancelled);
        report r = make_report(command, std::move(baseline));
        analyze(r);
        r.whatif = judge(command, r, runs, std::move(decided), completed);
        analyze(r);
        if (!completed && r.status != "interrupted")
        {
            r.status = "interrupted";
            r.errors.push_back("interrupted");
        }
        return r;
    }

    report replay_saved(const report& saved,
                        const measure_options& options,
                        const whatif_request& request,
                        run_observer* observer,
                        const cancel_check& cancelled)
    {
        const prepared_command command = prepare_command(options);
        report analysed = saved;
        analyze(analysed);
        if (!analysed.result.valid)
        {
            throw probe_error(probe_error::kind::usage, "the saved report has no successful sample: nothing to replay");
        }
        const auto plans = plan_levers(analysed, request.levers, request.automatic);
        const double one_cold = analysed.result.cold_wall_ms.median.value_or(0.0);
        const double one_sample = one_cold + analysed.result.warm_wall_ms.median.value_or(0.0);
        const double budget_ms = request.budget_s ? *request.budget_s * 1000.0 : default_budget_cold_runs * one_cold;
        std::vector<whatif_result> decided;
        auto runs = select(plans, options.samples, one_sample, budget_ms, decided);
        std::vector<sample> baseline;
        // from_baseline past the last index: no fresh baseline sample, the saved ones judge
        const int from_baseline = request.reuse_baseline ? options.samples + 1 : 1;
        const bool completed =
            runs.empty() || interleave(command, baseline, from_baseline, runs, options.samples, observer, cancelled);
        report fresh = request.reuse_baseline ? analysed : make_report(command, std::move(baseline));
        if (request.reuse_baseline)
        {
            // the same program, re-run from where it is now (a notebook cell is written to a new
            // temporary script each time): the replays' command words are the baseline's
            fresh.command = options.command;
        }
        analyze(fresh);
        if (!runs.empty() && completed && !fresh.result.valid)
        {
            throw probe_error(probe_error::kind::usage, "the command failed in every fresh baseline sample: nothing to compare with");
        }
        analysed.whatif = judge(command, fresh, runs, std::move(decided), completed);
        analyze(analysed);
        if (!completed)
        {
            analysed.status = "interrupted";
        }
        return analysed;
    }
}
