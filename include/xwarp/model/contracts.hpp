// The contracts between warp-probe (C++) and the Python it runs, each a versioned JSON Schema
// compiled in and checked on both sides (the Python side by its own code and by
// tests/python/test_contracts.py):
//   - the shim's inputs (contracts/shim_inputs.schema.json): the XWARP_* variables a pass
//     sets, and $XWARP_WHATIF, one variant per lever with its parameters and the counters
//     ("effects") that say it changed something;
//   - the fixer protocol (contracts/fixer_protocol.schema.json): warp-probe fix's request,
//     its operations (a tagged union on "op") and the fixer's response;
//   - the warm-up plan (contracts/warmup_targets.schema.json): the data warp-probe warmup writes
//     beside the warm-up runtime and the runtime reads, and the results the runtime writes with
//     --results, which warmup --verify reads back.
// The shim's records have their own contract (shim_contract.hpp).
#ifndef XWARP_MODEL_CONTRACTS_HPP
#define XWARP_MODEL_CONTRACTS_HPP

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace xwarp
{
    enum class contract
    {
        whatif_spec,       // the JSON in $XWARP_WHATIF
        shim_environment,  // the XWARP_* variables of a pass, as an object
        fixer_request,
        fixer_response,
        warmup_plan,       // a warm-up plan: the data the warm-up runtime builds from
        warmup_config,     // a warm-up plan's config: the wp.config values it sets, each of its type and range
        warmup_results,    // what a warm-up file writes with --results (read back by warmup --verify)
        recorded_pass,     // a recorded pass's pass.json (--keep-records, the pytest plugin's one pass)
    };

    // "" when the value is inside the contract; else one line saying where and why.
    std::string contract_violation(contract which, const nlohmann::json& value);

    int fixer_protocol_version();
    int warmup_plan_version();
    int shim_inputs_version();

    // The fixer's operations, as the protocol names them (its "op" enum).
    std::vector<std::string> fixer_operations();

    // The levers $XWARP_WHATIF may name, and each one's effects counters (x-effects).
    std::vector<std::string> contract_levers();
    std::vector<std::string> contract_effects(const std::string& lever);
    // The caches a lever keeps from a filling pass into the measured one (x-keeps: cache_kind
    // words), empty for a lever that changes the process.
    std::vector<std::string> contract_kept_caches(const std::string& lever);

    // The patterns a word of cpu_compiler_flags in a warm-up file's CONFIG must match whole
    // (x-flag-patterns): code-generation flags only.
    std::vector<std::string> compiler_flag_patterns();
    // The config rule itself (its properties and x-flag-patterns), written into the warm-up
    // runtime, so that it checks a plan's config at run time by the rule warp-probe wrote it by.
    nlohmann::json warmup_config_rule();
    // The top packages never the program's code (x-never-the-programs): they run programs.
    std::vector<std::string> never_the_programs();
}

#endif
