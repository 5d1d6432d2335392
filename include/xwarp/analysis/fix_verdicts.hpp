// What a patch's measurement means (warp-probe fix --verify, --all, --apply): the rules, beside
// judge_replay's for the what-if replays. The measuring is the fix layer's; this only reads the
// reports it measured.
#ifndef XWARP_ANALYSIS_FIX_VERDICTS_HPP
#define XWARP_ANALYSIS_FIX_VERDICTS_HPP

#include <cstddef>
#include <string>

#include "xwarp/model/report.hpp"

namespace xwarp
{
    // The patched program against the unpatched one, judged as compare judges two reports:
    // verified (compare's improved: beyond the band, same launches), regressed, invalid (a side
    // failed, or the launches changed), else no-gain; with the saving on the clock that decided.
    void judge_patch(fix_result& f, const report& unpatched, const report& patched);

    // --all, step k (0-based) of the verified patches in ranked order: patches 1..k+1 together
    // against 1..k. Sets together_step and its words in `together`.
    void judge_together_step(fix_result& f, std::size_t k, const report& before, const report& after);

    // --all: a step that could not be measured with the ones before it, and why.
    void not_combined(fix_result& f, const std::string& why);

    // --apply takes a patch when it verified alone and did not stop paying with the ones before it.
    bool applies(const fix_result& f);
}

#endif
