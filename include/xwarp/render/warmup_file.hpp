// warp-probe warmup, the render half: the warm-up plan as the data file the runtime reads (the
// runtime needs only Warp), the runtime itself, and the plan as text for a terminal or a notebook
// (coverage, and the verification when there was one). Computes no figure: the plan holds them.
#ifndef XWARP_RENDER_WARMUP_FILE_HPP
#define XWARP_RENDER_WARMUP_FILE_HPP

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xwarp/model/warmup.hpp"

namespace xwarp
{
    // The plan's targets (contracts/warmup_targets.schema.json), in the order the runtime builds
    // them, and the option sets they index.
    nlohmann::json warmup_target_records(const warmup_plan& plan, nlohmann::json& option_sets);
    // The plan as the runtime reads it (the contract's document), and as the file written beside
    // the runtime: JSON, a field a line and a target a line, so that a re-measure is a diff to read.
    nlohmann::json warmup_plan_document(const warmup_plan& plan);
    std::string render_warmup_plan(const warmup_plan& plan);
    // The runtime: the same text for every plan of this xwarp version (runtime/warmup/warmup_body.py
    // with the version and the contract's rules put in).
    std::string warmup_runtime_text();
    // Where the runtime at `runtime_path` reads its plan: the same path with .json for its
    // extension (os.path.splitext's), as the runtime computes it.
    std::string warmup_plan_path(const std::string& runtime_path);
    // Where a notebook cell's code goes for a plan with `cell`: NAME_cell.py beside NAME.json, as
    // the runtime derives it from its plan's path.
    std::string warmup_cell_path(const std::string& runtime_path);
    std::string render_warmup_text(const warmup_plan& plan);
}

#endif
