#include "xwarp/fronts/use_cases.hpp"

#include <filesystem>

#include "xwarp/analysis/summarize.hpp"
#include "xwarp/whatif/adaptive.hpp"
#include "xwarp/whatif/whatif.hpp"

namespace xwarp::fronts
{
    report probe(measure_options options, const probe_request& request, run_observer* observer,
                 const cancel_check& cancelled)
    {
        options.samples = request.auto_samples() ? request.max_samples : std::stoi(request.samples);
        if (request.timeout_s > 0)
        {
            options.timeout_s = request.timeout_s;
        }
        options.nvrtc_trace = options.nvrtc_trace || request.nvrtc_trace;
        if (!request.whatif.empty())
        {
            auto whatif = parse_whatif_request(request.whatif, request.whatif_budget);
            whatif.until_settled_max = request.auto_samples() ? request.max_samples : 0;
            return measure_with_whatif(options, whatif, observer, cancelled);  // analysed, replays judged
        }
        if (request.auto_samples())
        {
            return measure_until_settled(options, request.max_samples, observer, cancelled);  // analysed
        }
        report r = measure(options, observer, cancelled);
        analyze(r);
        return r;
    }

    report replay(const report& saved, measure_options options, const replay_request& request, run_observer* observer,
                  const cancel_check& cancelled)
    {
        if (request.samples > 0)
        {
            options.samples = request.samples;
        }
        if (request.timeout_s > 0)
        {
            options.timeout_s = request.timeout_s;
        }
        whatif_request whatif;
        for (const auto& l : request.levers)
        {
            if (l == "auto")
            {
                whatif.automatic = true;
            }
            else
            {
                whatif.levers.push_back(l);
            }
        }
        whatif.automatic = whatif.automatic || whatif.levers.empty();
        whatif.reuse_baseline = request.reuse_baseline;
        whatif.until_settled_max = request.until_settled ? request.max_samples : 0;
        if (request.budget_s > 0)
        {
            whatif.budget_s = request.budget_s;
        }
        return replay_saved(saved, options, whatif, observer, cancelled);
    }

    warmup_plan warm_up(const report& saved, const measure_options& options, const warmup_job& job,
                        run_observer* observer, const cancel_check& cancelled)
    {
        return warmup(saved, options, job, observer, cancelled);
    }

    report fix(const report& saved, const measure_options& options, const fix_request& request, run_observer* observer,
               const cancel_check& cancelled)
    {
        return fix_report(saved, options, request, observer, cancelled);
    }

    measure_options rerun_settings(const report& saved)
    {
        return xwarp::rerun_settings(saved);
    }

    measure_options rerun_options(const report& saved, const std::string& which)
    {
        return xwarp::rerun_options(saved, which);
    }

    comparison compare_until_settled(report& before, report& after, const measure_options& before_options,
                                     const measure_options& after_options, int max_samples,
                                     const std::string& before_name, const std::string& after_name,
                                     run_observer* observer, const cancel_check& cancelled)
    {
        return xwarp::compare_until_settled(before, after, before_options, after_options, max_samples, before_name,
                                            after_name, observer, cancelled);
    }

    std::optional<stored_runs> history_runs(const std::string& history_option, const history_filter& filter,
                                            std::string& why, std::vector<std::string>& notes)
    {
        const history_location where = locate_history(history_option);
        std::error_code ec;
        if (where.off)
        {
            why = "the history store is off";
            return std::nullopt;
        }
        if (!std::filesystem::exists(where.path, ec))
        {
            why = "no history store at " + where.path + " yet";
            return std::nullopt;
        }
        history_store store(where.path, &notes, store_access::read);
        return stored_runs{store.path(), store.runs(filter)};
    }
}
