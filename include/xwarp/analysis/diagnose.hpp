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
    // kind is option-change, kernel-set-change (a kernel definition new to the module; generic
    // instances that came with it are listed in detail.generic_instances),
    // kernel-instances-added, kernel-content-change, generic-instance (new instances of generic
    // kernels only, whether or not the kernel had one before), dependency-change or unknown;
    // detail names what changed.
    enum class change_kind
    {
        option,                  // option-change
        kernel_set,              // kernel-set-change
        kernel_instances_added,  // kernel-instances-added
        kernel_content,          // kernel-content-change
        generic_instance,        // generic-instance
        dependency,              // dependency-change
        unknown,
    };

    struct hash_change
    {
        change_kind kind = change_kind::unknown;
        nlohmann::json detail = nlohmann::json::object();
    };

    template <>
    struct enum_words<change_kind>
    {
        static constexpr std::array<std::string_view, 7> words{"option-change",        "kernel-set-change",
                                                               "kernel-instances-added", "kernel-content-change",
                                                               "generic-instance",     "dependency-change",
                                                               "unknown"};
    };

    hash_change classify_hash_change(const module_load& before, const module_load& after);

    // The change in a few words, for the identity map: "kernel second added", "generic
    // instance of scale for (float64)", "option enable_backward: true -> false".
    std::string describe_hash_change(const hash_change& change);

    // Fills r.findings, sorted by ms at stake, and r.declined, by running every detector of the
    // mechanism registry (mechanisms.hpp). Needs r.result (summarize) first.
    void diagnose(report& r);

    // A finding in library code whose lever's replay did not apply: its recommendation says so,
    // not that the lever measures the change (the replay's own records showed it has nothing to
    // move at run time here).
    void say_library_lever_did_not_apply(finding& f);
}

#endif
