// warp-probe warmup, the render half: the warm-up plan as the Python file it describes (which
// needs only Warp), and as text for a terminal or a notebook (coverage, and the verification
// when there was one). Computes no figure: the plan holds them.
#ifndef XWARP_RENDER_WARMUP_FILE_HPP
#define XWARP_RENDER_WARMUP_FILE_HPP

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xwarp/model/warmup.hpp"

namespace xwarp
{
    // The TARGETS records of the file (contracts/warmup_targets.schema.json), in the order the
    // file builds them, and the option sets they index (each as the Python dict the file writes).
    nlohmann::json warmup_target_records(const warmup_plan& plan, std::vector<std::string>& option_sets);
    std::string render_warmup_script(const warmup_plan& plan);
    std::string render_warmup_text(const warmup_plan& plan);
}

#endif
