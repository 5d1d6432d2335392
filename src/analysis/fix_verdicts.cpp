#include "xwarp/analysis/fix_verdicts.hpp"

#include <cmath>

#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/compare.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp
{
    namespace
    {
        // compare's verdict as a patch's: a change inside the noise is inconclusive when the patched
        // program was faster on the deciding clock (more samples could settle it), no gain when it
        // was not faster at all.
        fix_verdict verdict_of(verdict v, std::optional<double> delta_ms)
        {
            switch (v)
            {
                case verdict::improved: return fix_verdict::verified;
                case verdict::regressed: return fix_verdict::regressed;
                case verdict::invalid:
                case verdict::not_comparable: return fix_verdict::invalid;
                default: return delta_ms && *delta_ms < 0 ? fix_verdict::inconclusive : fix_verdict::no_gain;
            }
        }
    }

    namespace
    {
        // Compiled loads in the first good sample's cold pass, or its warm pass (warm: true).
        // The counted part of a patch's verification: builds, and whether its finding is gone.
        void count_effect(fix_result& f, report before, report after)
        {
            f.cold_builds_before = before.builds_in_first_good(false);
            f.cold_builds_after = after.builds_in_first_good(false);
            f.warm_builds_before = before.builds_in_first_good(true);
            f.warm_builds_after = after.builds_in_first_good(true);
            if (!f.cold_builds_after)
            {
                return;
            }
            analyze(after);
            bool still = false;
            for (const auto& g : after.findings)
            {
                still = still || (g.mechanism.str() == f.mechanism && (f.module.empty() || g.module.str() == f.module));
            }
            f.finding_gone = !still;
        }
    }

    void judge_patch(fix_result& f, const report& unpatched, const report& patched)
    {
        try
        {
            report before = unpatched;
            report after = patched;
            const comparison c = compare_reports(before, after, "unpatched", "patched " + f.finding);
            f.samples = static_cast<int>(patched.samples.size());
            std::optional<double> delta;
            for (const auto& k : c.clocks)
            {
                if (k.clock == c.judged_on.by)
                {
                    delta = k.delta_ms;
                    f.saving_ms = k.delta_ms ? std::optional<double>(-*k.delta_ms) : std::nullopt;
                    f.band_ms = k.band_ms;
                    f.clock = k.clock;
                }
            }
            f.verdict = verdict_of(c.verdict, delta);
            count_effect(f, before, after);
            std::string reasons;
            for (const auto& r : c.reasons)
            {
                reasons += (reasons.empty() ? "" : "; ") + r;
            }
            f.reason = reasons;
            // Fewer builds for the same launches is the patch doing what it says, counted: noise
            // cannot make it up or take it away. It verifies the patch whatever the clock said;
            // the time stays beside it as measured, and a clock that disagrees is said.
            // fewer in the cold pass, or in the warm pass (a cache no longer thrown away) and no
            // more in the cold one
            const bool counted = f.cold_builds_before && f.cold_builds_after;
            const bool fewer_cold = counted && *f.cold_builds_after < *f.cold_builds_before;
            const bool fewer_warm = counted && *f.cold_builds_after <= *f.cold_builds_before && f.warm_builds_before
                                    && f.warm_builds_after && *f.warm_builds_after < *f.warm_builds_before;
            const bool fewer_builds = fewer_cold || fewer_warm;
            if (fewer_builds && c.workload.status == workload_status::same && f.verdict != fix_verdict::invalid
                && f.verdict != fix_verdict::verified)
            {
                const bool slower = f.verdict == fix_verdict::regressed;
                f.verdict = fix_verdict::verified;
                f.verified_by = "builds";
                f.reason = std::string("verified by count: the ") + (fewer_cold ? "cold" : "warm") + " pass built "
                           + std::to_string(fewer_cold ? *f.cold_builds_before : *f.warm_builds_before) + " -> "
                           + std::to_string(fewer_cold ? *f.cold_builds_after : *f.warm_builds_after)
                           + " module(s) for the same launches; "
                           + (slower ? "the clock went the other way beyond its band (a loaded machine, or a merged module that "
                                       "builds slower: more samples tell which)"
                                     : "the time it saves is inside the noise band of " + std::to_string(f.samples)
                                           + " sample(s)")
                           + (reasons.empty() ? std::string() : "; " + reasons);
            }
            else if (f.verdict == fix_verdict::verified)
            {
                f.verified_by = "time";
            }
        }
        catch (const compare_input_error& e)
        {
            f.verdict = fix_verdict::invalid;
            f.reason = std::string("the patched program failed in every sample: ") + e.what();
        }
    }

    void judge_together_step(fix_result& f, std::size_t k, const report& before, const report& after)
    {
        fix_result marginal;
        marginal.finding = f.finding;
        judge_patch(marginal, before, after);
        const std::string saving = marginal.saving_ms ? format_ms(std::fabs(*marginal.saving_ms)) : "n/a";
        const std::string verdict = word_of(marginal.verdict);
        if (k == 0)
        {
            f.together_step = together_status::first;
            f.together = "first in the ranked order: " + verdict + ", " + saving;
        }
        else if (marginal.verdict == fix_verdict::verified)
        {
            f.together_step = together_status::still_pays;
            f.together = "still pays with the " + std::to_string(k) + " before it applied: -" + saving
                         + (marginal.clock ? " " + clock_name(*marginal.clock) : std::string());
        }
        else
        {
            f.together_step = together_status::stops_paying;
            f.together = "stops paying once the " + std::to_string(k) + " before it are applied (" + verdict
                         + (marginal.saving_ms ? ", " + std::string(*marginal.saving_ms >= 0 ? "-" : "+") + saving : "") + ")";
        }
    }

    void not_combined(fix_result& f, const std::string& why)
    {
        f.together_step = together_status::not_combined;
        f.together = "not measured with the ones before it: " + why;
    }

    bool applies(const fix_result& f)
    {
        return f.verdict == fix_verdict::verified && f.together_step != together_status::stops_paying;
    }
}
