// What every lever shares: a registry row (what the lever changes at run time, how it is planned
// from a baseline, what its replay must show to be valid, the shim's counters that say it moved
// something) and small helpers. Private to the analysis layer, like the detectors' header.
// Adding a lever: one file here, one row in src/analysis/levers.cpp, one class in the shim's lever table
// (runtime/shim/xwarp_shim/levers.py, LEVERS), a test checks the two tables name the same levers.
#ifndef XWARP_ANALYSIS_LEVERS_LEVER_HPP
#define XWARP_ANALYSIS_LEVERS_LEVER_HPP

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xwarp/analysis/fixes.hpp"
#include "xwarp/analysis/levers.hpp"
#include "xwarp/analysis/replay_plans.hpp"
#include "xwarp/model/report.hpp"

namespace xwarp::levers
{
    // What a plan is made from: the analysed baseline, its first good sample's passes and the
    // findings that name the lever (none when the lever was asked for by name).
    struct plan_input
    {
        const report& baseline;
        const run_result& cold;
        const run_result& warm;
        const std::vector<const finding*>& findings;
    };

    // Fills the plan's modules and params (what $XWARP_WHATIF hands the shim), or its
    // not_applicable reason when the baseline holds nothing for the lever to move.
    using plan_fn = void (*)(lever_plan&, const plan_input&);

    // What the lever itself requires of a judged replay, beyond compare's rules. `before`
    // runs before the applied check (it may decide the verdict, and returns true when it did);
    // `after` annotates a replay that applied something. Either may be null.
    using require_fn = bool (*)(whatif_result&, const lever_plan&, const report& baseline, const report& replay);

    // The build time the lever can touch in the baseline's first good cold pass, in ms: what
    // its replay is worth running for. Null: the builds of the modules it plans to move, or of
    // every build for a lever of the whole program (no module list).
    using stake_fn = double (*)(const lever_plan&, const run_result& cold);

    struct lever_def
    {
        lever_info info;
        plan_fn plan;
        require_fn before = nullptr;
        require_fn after = nullptr;
        // Its code form: the edit of the program that makes the lever's change for good
        // (warp-probe fix), or why there is none.
        code_form_fn code_form = nullptr;
        const char* no_code_form = nullptr;
        stake_fn stake = nullptr;
        // Judged on the command's cold wall (compare's deciding_clock::cold_wall): a change to how
        // a test suite runs, whose module work is summed over its processes.
        bool on_wall = false;
        // Judged on the cold wall when the baseline is a test suite (its module work summed over
        // workers is CPU time, not what the job waits for), on the compiled structure otherwise.
        bool on_wall_in_suites = false;
    };

    // Every lever, in the order --help lists them (src/analysis/levers.cpp).
    const std::vector<const lever_def*>& table();
    const lever_def* find(const std::string& name);

    // ---- helpers ------------------------------------------------------------------------------

    void add_unique(std::vector<std::string>& v, const std::string& s);
    std::vector<std::string> strings_of(const nlohmann::json& j);
    // The modules the findings' causes list ("modules": [...]).
    std::vector<std::string> cause_modules(const std::vector<const finding*>& findings);

    // The first merge finding whose kernels were created between launches (its cause says
    // created_between_launches), or nullptr.
    const finding* created_between_launches(const std::vector<const finding*>& findings);

    // How many times the replay's first good sample built `module` in its cold pass.
    int cold_builds_of(const report& replay, const std::string& module);

    // When the replay built `module` (the lever's shared or merged module) more than once in a
    // cold pass, says in w.needs what else the fix needs. Never decides the verdict (false).
    // `which` names the module in the note: "shared", "merged".
    bool note_module_rebuilt(whatif_result& w, const report& replay, const std::string& module, const char* which);

    // The code form that sets a wp.config option at the program's entry point, after `import
    // warp` and before the imports that define kernels (and removes later assignments of it).
    nlohmann::json config_at_entry(const std::string& key, const nlohmann::json& value, const std::string& why,
                                   const nlohmann::json& remove = nlohmann::json::array());

    // {"file", "line"} for a place the records give, or null.
    nlohmann::json place(const std::optional<std::string>& file, const std::optional<int>& line);
}

#endif
