// The records the shim writes and the runner reads, as one versioned JSON Schema
// (contracts/shim_records.schema.json, compiled in). The runner checks each record against it
// before reading it: a record of a type the contract does not list, or with a field of another
// type, is rejected by name, never guessed at.
#ifndef XWARP_MODEL_SHIM_CONTRACT_HPP
#define XWARP_MODEL_SHIM_CONTRACT_HPP

#include <string>

#include <nlohmann/json.hpp>

namespace xwarp
{
    // The contract version this reader knows (the schema's x-contract-version). A process
    // record without `contract` was written under version 1, whose records have the same shape.
    int shim_contract_version();

    // "" when the record is inside the contract; otherwise one line naming the record's type and
    // the field that is not ("record type 'foo' is not in the shim contract (version 2)",
    // "load record: at /block_dim: ..."). Fields the contract does not name are ignored here (a
    // newer shim may add some); the shim's own test checks that it writes none.
    std::string shim_record_violation(const nlohmann::json& record);
}

#endif
