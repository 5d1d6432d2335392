// What-if replays: runs the baseline and lever samples interleaved, within the budget, and
// hands each replay to the analysis for its verdict.
#include "xwarp/jobs/whatif/replay_loops.hpp"

#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/analysis/replay_plans.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp
{
    namespace
    {
        struct lever_run
        {
            lever_plan plan;
            std::vector<sample> samples;
            std::optional<settling> until_settled;  // set when the rounds ran
        };

        // One replay sample of a lever: the program with the lever's environment, on the caches it
        // keeps from a filling pass when it keeps any.
        sample lever_sample(sampler& command, int index, const lever_plan& plan, run_observer* observer,
                            const cancel_check& cancelled)
        {
            const auto keeps = plan.keeps();
            return keeps.empty() ? command.run(index, plan.environment(), plan.lever, observer, cancelled)
                                 : command.run_on_kept_caches(index, keeps, plan.environment(), plan.lever, observer, cancelled);
        }

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
                    decided.push_back(unrun_lever(p, verdict::not_applied, p.not_applicable));
                    continue;
                }
                const double cost = samples * one_sample_ms;
                if (spent + cost > budget_ms)
                {
                    decided.push_back(unrun_lever(p, verdict::not_run,
                                                  "over the what-if budget: it needs about " + format_ms(cost) + ", "
                                                      + format_ms(std::max(0.0, budget_ms - spent))
                                                      + " were left after levers with more at stake (this one's stake: "
                                                      // the estimate is the finding's own figure: not quoted twice
                                                      + (p.estimate_ms ? std::string("the finding's estimate")
                                                                       : format_ms(p.stake_ms) + ", " + p.stake_source)
                                                      + "; raise it with --whatif-budget)"));
                    continue;
                }
                spent += cost;
                runs.push_back({p, {}, std::nullopt});
            }
            return runs;
        }

        std::map<std::string, std::string> baseline_environment(const std::vector<lever_run>& runs)
        {
            std::map<std::string, std::string> env;
            for (const auto& r : runs)
            {
                if (r.plan.time_launches)
                {
                    env["XWARP_TIME_LAUNCHES"] = r.plan.timed_kernels();  // the same timing on both sides
                }
            }
            return env;
        }

        // Baseline sample i (when from_baseline <= i), then each lever's sample i, for i in 1..n.
        // False when interrupted.
        bool interleave(sampler& command,
                        std::vector<sample>& baseline,
                        int from_baseline,
                        std::vector<lever_run>& runs,
                        int n,
                        run_observer* observer,
                        const cancel_check& cancelled)
        {
            const auto baseline_env = baseline_environment(runs);
            for (int i = 1; i <= n; ++i)
            {
                if (i >= from_baseline)
                {
                    baseline.push_back(command.run(i, baseline_env, "", observer, cancelled));
                    if (stop_sampling(baseline.back(), cancelled))
                    {
                        return false;
                    }
                }
                for (auto& r : runs)
                {
                    if (!r.samples.empty() && !r.samples.back().cold.spawn_error.empty())
                    {
                        continue;  // this replay cannot start (a recording without it): judged invalid, saying why
                    }
                    r.samples.push_back(lever_sample(command, i, r.plan, observer, cancelled));
                    const sample& s = r.samples.back();
                    if (s.cold.interrupted || (s.warm && s.warm->interrupted) || (cancelled && cancelled()))
                    {
                        return false;
                    }
                }
            }
            return true;
        }

        // After the planned samples: rounds of one baseline sample, then one sample of each lever
        // whose verdict could still change, until none could, each reached max_samples, or the
        // budget (replay time, as select() counts it) ran out. False when interrupted.
        bool settle(sampler& command,
                    std::vector<sample>& baseline,
                    std::vector<lever_run>& runs,
                    int max_samples,
                    double budget_ms,
                    run_observer* observer,
                    const cancel_check& cancelled)
        {
            const auto baseline_env = baseline_environment(runs);
            for (auto& r : runs)
            {
                r.until_settled = settling{};
                r.until_settled->max_samples = max_samples;
            }
            while (true)
            {
                double spent = 0.0;
                for (const auto& r : runs)
                {
                    for (const auto& s : r.samples)
                    {
                        spent += sample_ms(s);
                    }
                }
                // (judging analyses its own copies: nothing to analyse here)
                const report base = command.report_of(baseline);
                std::vector<lever_run*> open;
                for (auto& r : runs)
                {
                    auto& state = *r.until_settled;
                    if (!state.stopped_because.empty())
                    {
                        continue;
                    }
                    const report replay = command.report_of(r.samples);
                    state.stopped_because = replay_settled_because(r.plan, base, replay, max_samples);
                    state.settled = !state.stopped_because.empty();
                    const double one_more = r.samples.empty() ? 0.0 : sample_ms(r.samples.back());
                    if (state.settled)
                    {
                        continue;
                    }
                    if (static_cast<int>(r.samples.size()) >= max_samples)
                    {
                        state.stopped_because = "reached " + std::to_string(max_samples) + " samples a side without settling";
                    }
                    else if (spent + one_more > budget_ms)
                    {
                        state.stopped_because = "the what-if budget ran out after " + std::to_string(r.samples.size())
                                                + " samples a side (raise it with --whatif-budget)";
                    }
                    else
                    {
                        spent += one_more;
                        open.push_back(&r);
                    }
                }
                if (open.empty())
                {
                    return true;
                }
                baseline.push_back(command.run(static_cast<int>(baseline.size()) + 1, baseline_env, "", observer, cancelled));
                for (auto* r : open)
                {
                    ++r->until_settled->added_before;
                }
                if (stop_sampling(baseline.back(), cancelled))
                {
                    return false;
                }
                for (auto* r : open)
                {
                    r->samples.push_back(lever_sample(command, static_cast<int>(r->samples.size()) + 1, r->plan, observer, cancelled));
                    ++r->until_settled->added_after;
                    if (stop_sampling(r->samples.back(), cancelled))
                    {
                        return false;
                    }
                }
            }
        }

        // The progress lines show "sample i of N": with rounds, N is the most a side may take.
        measure_options shown_options(measure_options options, const replay_request& request)
        {
            if (request.until_settled)
            {
                options.samples = std::max(options.samples, request.max_samples);
            }
            return options;
        }

        // The budget in ms: the request's, else this many cold runs of the command.
        double replay_budget_ms(const replay_request& request, double one_cold_ms)
        {
            return request.budget_s > 0 ? request.budget_s * 1000.0 : default_budget_cold_runs * one_cold_ms;
        }

        std::vector<whatif_result> judge(const sampler& command,
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
                    out.push_back(unrun_lever(r.plan, verdict::not_run, "interrupted before its samples were complete"));
                    continue;
                }
                report replay = command.report_of(std::move(r.samples));
                analyze(replay);
                out.push_back(judge_replay(r.plan, baseline, replay));
                out.back().until_settled = r.until_settled;
            }
            for (auto& d : decided)
            {
                out.push_back(std::move(d));
            }
            return out;
        }
    }

    report measure_with_whatif(sampler& command, int samples, const replay_request& request, run_observer* observer,
                               const cancel_check& cancelled)
    {
        plan_levers(report{}, request.levers.levers, false);  // an unknown lever fails before anything runs
        // With rounds, the planned samples are two a side (the fewest with a spread); the
        // rounds add the rest.
        const int planned = request.until_settled ? 2 : samples;
        std::vector<sample> baseline;
        baseline.push_back(command.run(1, {}, "", observer, cancelled));
        report first = command.report_of(baseline);
        if (stop_sampling(baseline.back(), cancelled) || !baseline.back().ok())
        {
            // Without a good first sample there is nothing to plan from: measure as usual.
            for (int i = 2; i <= planned && !stop_sampling(baseline.back(), cancelled); ++i)
            {
                baseline.push_back(command.run(i, {}, "", observer, cancelled));
            }
            report r = command.report_of(std::move(baseline));
            analyze(r);
            return r;
        }
        if (observer && command.samples() > 1)
        {
            observer->sample_finished(1, command.samples(), first);
        }
        analyze(first);
        const auto plans = plan_levers(first, request.levers.levers, request.levers.automatic);
        const double budget = replay_budget_ms(request, baseline.front().cold.wall_ms);
        std::vector<whatif_result> decided;
        auto runs = select(plans, planned, sample_ms(baseline.front()), budget, decided);
        bool completed = interleave(command, baseline, 2, runs, planned, observer, cancelled);
        if (completed && request.until_settled && !runs.empty())
        {
            completed = settle(command, baseline, runs, request.max_samples, budget, observer, cancelled);
        }
        report r = command.report_of(std::move(baseline));
        if (request.until_settled)
        {
            r.run_settings.sampling = "auto (2 to " + std::to_string(request.max_samples)
                                      + " a side, until each replay's verdict settled)";
        }
        analyze(r);
        r.whatif = judge(command, r, runs, std::move(decided), completed);
        analyze(r);
        if (!completed && r.status != run_status::interrupted)
        {
            r.status = run_status::interrupted;
            r.errors.push_back("interrupted");
        }
        return r;
    }

    report measure_with_whatif(const measure_options& options,
                               const replay_request& request,
                               run_observer* observer,
                               const cancel_check& cancelled,
                               const sampler_factory& make_sampler)
    {
        const std::unique_ptr<sampler> command = make_sampler(shown_options(options, request));
        return measure_with_whatif(*command, options.samples, request, observer, cancelled);
    }

    report replay_saved(const report& saved, sampler& command, int samples, const replay_request& request,
                        run_observer* observer, const cancel_check& cancelled)
    {
        if (request.reuse_baseline && request.until_settled)
        {
            throw probe_error(probe_error::kind::usage,
                              "--until-settled adds baseline samples as it goes: it cannot reuse the saved ones "
                              "(leave out --reuse-baseline)");
        }
        report analysed = saved;
        analyze(analysed);
        if (!analysed.result.valid)
        {
            throw probe_error(probe_error::kind::usage, "the saved report has no successful sample: nothing to replay");
        }
        // none named: the levers of the findings
        const auto plans = plan_levers(analysed, request.levers.levers,
                                       request.levers.automatic || request.levers.levers.empty());
        const double one_cold = analysed.result.cold_wall_ms.median.value_or(0.0);
        const double one_sample = one_cold + analysed.result.warm_wall_ms.median.value_or(0.0);
        const double budget = replay_budget_ms(request, one_cold);
        std::vector<whatif_result> decided;
        auto runs = select(plans, samples, one_sample, budget, decided);
        std::vector<sample> baseline;
        // from_baseline past the last index: no fresh baseline sample, the saved ones judge
        const int from_baseline = request.reuse_baseline ? samples + 1 : 1;
        bool completed = runs.empty() || interleave(command, baseline, from_baseline, runs, samples, observer, cancelled);
        if (completed && request.until_settled && !runs.empty())
        {
            completed = settle(command, baseline, runs, request.max_samples, budget, observer, cancelled);
        }
        report fresh = request.reuse_baseline ? analysed : command.report_of(std::move(baseline));
        if (request.reuse_baseline)
        {
            // the same program, re-run from where it is now (a notebook cell is written to a new
            // temporary script each time): the replays' command words are the baseline's
            fresh.command = command.command_words();
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
            analysed.status = run_status::interrupted;
        }
        return analysed;
    }

    report replay_saved(const report& saved,
                        const measure_options& options,
                        const replay_request& request,
                        run_observer* observer,
                        const cancel_check& cancelled,
                        const sampler_factory& make_sampler)
    {
        const std::unique_ptr<sampler> command = make_sampler(shown_options(options, request));
        return replay_saved(saved, *command, options.samples, request, observer, cancelled);
    }
}
