// The mechanism registry: every mechanism the diagnoses can name, with its title, kind, guide
// section and the run-time lever that would fix it. One detector per file under
// src/analysis/mechanisms/; the table in src/analysis/mechanisms.cpp lists them in the order they run.
#ifndef XWARP_ANALYSIS_MECHANISMS_HPP
#define XWARP_ANALYSIS_MECHANISMS_HPP

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "xwarp/model/verdicts.hpp"

namespace xwarp
{
    struct mechanism_info
    {
        std::string id;         // "CS-1", "option-not-arrived", ...
        std::string title;      // what the finding heading says
        finding_kind kind;      // a diagnosis (a cause shown by the records), an advisory (measure first) or a note
        std::string guide;      // section anchor in references/mechanisms.md
        std::string lever;      // the what-if lever that would fix it, "" when none
        std::string no_lever;   // why it has no lever, when it has none
        std::string detector;   // the detector's source file
    };

    // The ids another part of the analysis names (a lever that reads their causes), each written
    // once: here, and the detectors' rows use them.
    namespace mechanism_ids
    {
        inline const std::string late_options = "CS-3";
        inline const std::string option_not_arrived = "option-not-arrived";
    }

    // Every mechanism, in detection order.
    const std::vector<mechanism_info>& mechanism_registry();

    // nullptr when no mechanism has this id.
    const mechanism_info* find_mechanism(const std::string& id);

    nlohmann::json mechanisms_to_json();

    // The kernel a module="unique" module was made for: Warp names such a module
    // "<kernel>_<the first 8 hex digits of its hash>". Empty when the name has another form.
    std::string_view unique_module_kernel(std::string_view module);
}

#endif
