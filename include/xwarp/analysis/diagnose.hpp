// Diagnoses: from the recorded samples to findings (mechanisms CS-1..CS-13 and the findings
// without a CS number), each with its evidence, cause, user location, recommendation and
// savings estimate. Never claims what was not recorded: a cause that cannot be told stays
// "unknown".
#ifndef XWARP_ANALYSIS_DIAGNOSE_HPP
#define XWARP_ANALYSIS_DIAGNOSE_HPP

#include <string>

#include <nlohmann/json.hpp>

#include "xwarp/model/report.hpp"

namespace xwarp
{
    // Why a module's hash moved between two loads of the same (module, device, block_dim):
    // kind is option-change, generic-instance, kernel-set-change, kernel-instances-added,
    // kernel-content-change, dependency-change or unknown; detail names what changed.
    struct hash_change
    {
        std::string kind;
        nlohmann::json detail = nlohmann::json::object();
    };

    hash_change classify_hash_change(const module_load& before, const module_load& after);

    // Fills r.findings, sorted by ms at stake. Needs r.result (summarize) first.
    void diagnose(report& r);
}

#endif
