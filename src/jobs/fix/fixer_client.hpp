// warp-probe fix's side of the fixer (runtime/fixer/xwarp_fix.py, run with the program's Python):
// the request it is sent and the response read back, both checked against
// contracts/fixer_protocol.schema.json, and what the response means for each plan.
#ifndef XWARP_FIX_FIXER_CLIENT_HPP
#define XWARP_FIX_FIXER_CLIENT_HPP

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xwarp/analysis/fixes.hpp"
#include "xwarp/jobs/fix/fix.hpp"

namespace xwarp::fix_parts
{
    // The Python the program ran with (its syntax is the one to parse), else python3.
    std::string fixer_python(const measure_options& rerun);

    // The fixer's answer for these plans (`fixer`: xwarp_fix.py, "" the installed one): {"fixes": [{id, patch, files, notes} | {id, reason}]}.
    // Throws fix_error when the fixer cannot run or answers outside the protocol.
    nlohmann::json run_fixer(const std::vector<fix_plan>& plans, const report& analysed, const std::string& root,
                             const std::string& python, const std::string& fixer, const cancel_check& cancelled);

    // A plan's result as the fixer answered it: a patch (not verified yet), or why there is none.
    fix_result result_of(const fix_plan& p, const nlohmann::json& answer);

    // The fixer's one patch of these plans' operations together (the edits of several fixes to
    // one file made at once); "" and `why` when it wrote none.
    std::string combined_patch(const std::vector<const fix_plan*>& plans, const report& analysed, const std::string& root,
                               const std::string& python, const std::string& fixer, const cancel_check& cancelled,
                               std::string& why);
}

#endif
