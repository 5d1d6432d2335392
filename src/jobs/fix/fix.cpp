// warp-probe fix: plans (analysis), diffs (the fixer), and with --verify copies of the project
// patched and measured against the unpatched program (verification), judged by the analysis's
// rules, and with --apply the verified patches applied (apply). This file only orders the steps.
#include "xwarp/jobs/fix/fix.hpp"

#include <map>

#include "apply.hpp"
#include "fixer_client.hpp"
#include "verification.hpp"
#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/fixes.hpp"
#include "xwarp/analysis/summarize.hpp"

namespace xwarp
{
    using namespace fix_parts;

    report fix_report(const report& saved, const measure_options& rerun, const fix_request& request, const fix_setup& setup,
                      run_observer* observer, const cancel_check& cancelled, const sampler_factory& make_sampler)
    {
        if (request.apply && !request.verify)
        {
            throw fix_error("--apply applies only verified patches: add --verify");
        }
        if (request.all && !request.verify)
        {
            throw fix_error("--all verifies the verified patches together: add --verify");
        }
        report analysed = saved;
        analyze(analysed);
        const std::vector<fix_plan> plans = plan_fixes(analysed, request.finding, request.lever);
        // the project the run's ownership found (the command's entry's tree first), else the
        // git work tree of the folder it ran in (a report written before owners were recorded)
        const bool owned = analysed.ownership && !analysed.ownership->project.empty();
        const std::string root = !setup.root.empty() ? setup.root
                                 : owned            ? analysed.ownership->project.front().path
                                                    : project_root(rerun.cwd);
        const std::string python = setup.fixer_python.empty() ? fixer_python(rerun) : setup.fixer_python;
        const nlohmann::json answer = run_fixer(plans, analysed, root, python, setup.fixer, cancelled);
        analysed.fixes.clear();
        for (const auto& p : plans)
        {
            analysed.fixes.push_back(result_of(p, answer));
        }
        write_patches(analysed.fixes, plans, request.out_dir);
        const std::map<std::string, std::string> as_verified = request.apply ? patched_files(analysed.fixes, root)
                                                                             : std::map<std::string, std::string>{};
        const auto combine = [&](const std::vector<const fix_plan*>& chosen, std::string& why)
        { return combined_patch(chosen, analysed, root, python, setup.fixer, cancelled, why); };
        const verify_context in{root, rerun, request, make_sampler, observer, cancelled};
        bool completed = !request.verify || verify_each(analysed.fixes, in);
        if (completed && request.all)
        {
            std::vector<fix_result*> verified;
            std::vector<const fix_plan*> chosen;
            for (auto& f : analysed.fixes)
            {
                if (const fix_plan* p = plan_of(plans, f); p && f.verdict == fix_verdict::verified)
                {
                    verified.push_back(&f);
                    chosen.push_back(p);
                }
            }
            const auto first_k = [&](std::size_t k, std::string& why)
            { return combine(std::vector<const fix_plan*>(chosen.begin(), chosen.begin() + static_cast<long>(k) + 1), why); };
            completed = verify_together(verified, first_k, in);
        }
        if (completed && request.apply)
        {
            if (const std::string changed = changed_since(as_verified); !changed.empty())
            {
                analysed.warnings.push_back("--apply: " + changed + " changed while the patches were verified: nothing was "
                                            "applied (the verified patches are for the files as they were; run fix again)");
            }
            else
            {
                apply_verified(analysed.fixes, plans, combine, root, cancelled, analysed.warnings);
            }
        }
        if (!completed)
        {
            analysed.status = run_status::interrupted;
        }
        return analysed;
    }
}
