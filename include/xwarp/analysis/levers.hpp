// The lever registry: every run-time lever a what-if replay can apply, with what it changes in
// the replayed processes. One file per lever under src/analysis/levers/ (its plan from a
// baseline and what its replay must show); the shim applies each through a class of its own.
#ifndef XWARP_ANALYSIS_LEVERS_HPP
#define XWARP_ANALYSIS_LEVERS_HPP

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace xwarp
{
    struct lever_info
    {
        std::string name;     // "backward-off", ...
        std::string changes;  // what the shim changes at run time, in one sentence
        std::string source;   // the lever's file under src/analysis/levers/
        // Planned by an automatic what-if whatever the findings, where it applies (a suite's
        // worker count is a lever no finding names).
        bool without_finding = false;
    };

    // Every lever, in the order --help lists them.
    const std::vector<lever_info>& lever_registry();

    // Their names, in that order.
    const std::vector<std::string>& known_levers();

    // nullptr when no lever has this name.
    const lever_info* find_lever(const std::string& name);

    nlohmann::json levers_to_json();
}

#endif
