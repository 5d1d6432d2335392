// warp-probe fix, the analysis half: for each finding, its code form (what to change in the
// program's own files, where, to what) from the lever registry (each lever's file holds its
// code form) or, for a mechanism without a lever, its detector's; or one sentence saying why no
// mechanical form exists. The fixer (runtime/fixer/xwarp_fix.py) turns a plan's operations into
// a unified diff; the fix layer verifies it on a copy of the project.
#ifndef XWARP_ANALYSIS_FIXES_HPP
#define XWARP_ANALYSIS_FIXES_HPP

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xwarp/model/report.hpp"

namespace xwarp
{
    struct fix_plan
    {
        std::size_t index = 0;  // the finding's position in the report, from 1
        std::string id;         // the patch's name: "<mechanism>-<lever or form>" (cs-1-hoist)
        std::string mechanism;
        std::string lever;      // the lever, or the code form's name when the mechanism has none
        std::string module;
        nlohmann::json ops = nlohmann::json::array();  // what the fixer does (its op_* methods)
        std::string no_form;    // why there is no patch, when ops is empty

        std::string finding_name() const { return mechanism + " #" + std::to_string(index); }
    };

    // What a code form is made from.
    struct fix_input
    {
        const report& r;
        const finding& f;
        const run_result& cold;  // the first good sample's cold pass
    };

    using code_form_fn = void (*)(fix_plan&, const fix_input&);

    // The plans of an analysed report's findings: all of them, or those `finding` names (its
    // position, "2", or a mechanism id, "CS-9") and those of `lever`. A finding in library code
    // gets no plan's operations, and says why.
    std::vector<fix_plan> plan_fixes(const report& analysed, const std::string& finding, const std::string& lever);

    // The facts the fixer needs about the program: the project's root (the measured folder),
    // its entry script (the first Python process's argv[0], when it is a file), and the Python
    // modules that define Warp modules.
    struct program_files
    {
        std::string entry;        // the file the interpreter ran as __main__ (a script, or -m's __main__.py)
        std::string import_root;  // the folder its top package is imported from ("" when unknown)
        std::vector<std::string> kernel_modules;
        // Every user frame (file:line) on the stack of a recorded first launch: a statement that
        // holds one launches, through whatever wrapper it calls.
        nlohmann::json launch_sites = nlohmann::json::array();
    };
    program_files program_files_of(const report& r);

    // Where a module's kernels are defined (the file its first kernel was declared in), "" when
    // the records do not say.
    std::string module_file(const run_result& cold, const std::string& module);
}

#endif
