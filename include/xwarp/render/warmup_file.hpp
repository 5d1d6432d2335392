// warp-probe warmup, the render half: the warm-up plan as the Python file it describes (which
// needs only Warp), and as text for a terminal or a notebook (coverage, and the verification
// when there was one). Computes no figure: the plan holds them.
#ifndef XWARP_RENDER_WARMUP_FILE_HPP
#define XWARP_RENDER_WARMUP_FILE_HPP

#include <string>

#include "xwarp/model/warmup.hpp"

namespace xwarp
{
    std::string render_warmup_script(const warmup_plan& plan);
    std::string render_warmup_text(const warmup_plan& plan);
}

#endif
