// Compare and check, behind the fronts: the analysis's calls, its refusals turned into
// job_error, and every verdict's exit code, here only.
#include "xwarp/jobs/usecases/judging.hpp"

#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/budget_check.hpp"
#include "xwarp/analysis/compare.hpp"
#include "engine_errors.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/jobs/usecases/exit_codes.hpp"
#include "xwarp/jobs/usecases/use_cases.hpp"
#include "xwarp/store/run_store.hpp"

namespace xwarp::fronts
{
    using kind = job_error::kind;

    void analyse(report& r)
    {
        analyze(r);
    }

    std::string failure_words(const run_result& pass, std::optional<double> timeout_s)
    {
        return describe_failure(pass, timeout_s);
    }

    namespace
    {
        comparison with_exit_code(comparison c)
        {
            c.exit_code = exit_code_for(c.verdict);
            return c;
        }

        std::vector<budget_limit> parsed(const std::string& spec)
        {
            try
            {
                return parse_budget(spec);
            }
            catch (const budget_error& e)
            {
                throw job_error(kind::usage, e.what());
            }
        }
    }

    comparison compare(report& before, report& after, const std::string& before_name, const std::string& after_name)
    {
        return with_exit_code(engine([&] { return compare_reports(before, after, before_name, after_name); }));
    }

    void ready_side(report& side, const std::string& name, bool whole)
    {
        if (whole)
        {
            analyze(side);
        }
        else
        {
            summarize_figures(side, summary_scope::figures);
        }
        engine([&] { require_comparable(side, name); });
    }

    void trim_side(report& side)
    {
        keep_what_compare_reads(side);
    }

    comparison compare_ready(const report& before, const report& after, const std::string& before_name,
                             const std::string& after_name)
    {
        return with_exit_code(engine([&] { return compare_analyzed(before, after, before_name, after_name); }));
    }

    void store_comparison(const std::string& history_option, std::int64_t before_run, std::int64_t after_run,
                          const comparison& c, std::vector<std::string>& notes)
    {
        const store_location where = locate_store(history_option);
        if (where.off)
        {
            return;
        }
        try
        {
            // the text first: a temporary tree would live through the insert, beside SQLite's record
            const std::string text = comparison_to_json(c).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            run_store store(where.path, &notes);
            store.add_comparison(before_run, after_run, word_of(c.verdict), text);
        }
        catch (const std::exception& e)
        {
            notes.push_back(std::string("the comparison was not stored in the history: ") + e.what());
        }
    }

    const std::vector<std::string>& limit_metrics()
    {
        return budget_metrics();
    }

    namespace
    {
        void require_a_run_where_needed(const std::vector<budget_limit>& limits, bool against_a_run)
        {
            if (needs_compared_run(limits) && !against_a_run)
            {
                throw job_error(kind::usage, "workload=same, kernels=same and results=same are judged against a run: "
                                             "name the run whose launches and results must be kept");
            }
        }
    }

    void validate_limits(const std::string& spec, bool against_a_run)
    {
        require_a_run_where_needed(parsed(spec), against_a_run);
    }

    check_outcome check(const report& analysed, const check_request& request)
    {
        const std::vector<budget_limit> limits = parsed(request.spec);
        require_a_run_where_needed(limits, request.baseline != nullptr);
        // workload=same is compare's launch gate against the baseline; a baseline that cannot
        // be compared leaves it unverified, with why
        std::optional<workload_check> workload;
        if (request.baseline && needs_compared_run(limits))
        {
            try
            {
                report before = *request.baseline;
                report after = analysed;
                workload = compare_reports(before, after, request.baseline_name, request.run_name).workload;
            }
            catch (const compare_input_error& e)
            {
                workload.emplace();
                workload->status = workload_status::unverified;
                workload->reason = e.what();
            }
        }
        check_outcome out;
        out.results = check_budget(analysed, limits, {workload ? &*workload : nullptr, request.baseline});
        out.met = !budget_exceeded(out.results);
        for (const auto& b : out.results)
        {
            if (b.exceeded)
            {
                out.first_not_met = b.message;
                break;
            }
        }
        out.exit_code = out.met ? exit_code::ok : exit_code::over_budget;
        return out;
    }
}

namespace xwarp
{
    int exit_code_for_refusal(const fronts::job_error& refused)
    {
        using k = fronts::job_error::kind;
        switch (refused.which())
        {
            case k::usage: return exit_code::usage;
            case k::no_input: return exit_code::no_input;
            case k::bad_input: return exit_code::bad_input;
            case k::cannot_write: return exit_code::cannot_write;
            case k::not_permitted: return exit_code::not_permitted;
            case k::command_not_found: return exit_code::command_not_found;
            case k::not_executable: return exit_code::not_executable;
            case k::software: return exit_code::software;
        }
        return exit_code::software;
    }
}
