// The build timeline as Chrome trace-event JSON (opens in Perfetto and chrome://tracing):
// complete events ("ph": "X") for every load and its phases, process and thread names, and
// the module, hash, block_dim and device of each in its args.
#ifndef XWARP_RENDER_TRACE_HPP
#define XWARP_RENDER_TRACE_HPP

#include <nlohmann/json.hpp>

#include "xwarp/model/report.hpp"

namespace xwarp
{
    nlohmann::json render_trace(const report& r);
}

#endif
