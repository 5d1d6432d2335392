#include "xwarp/render/trace.hpp"

#include <map>

namespace xwarp
{
    using nlohmann::json;

    json render_trace(const report& r)
    {
        const build_timeline& t = r.result.timeline;
        json events = json::array();
        std::map<std::int64_t, std::map<std::string, int>> tids;  // pid -> thread -> tid
        for (const auto& sp : t.spans)
        {
            auto& threads = tids[sp.pid];
            if (!threads.count(sp.thread))
            {
                const int tid = static_cast<int>(threads.size()) + 1;
                threads[sp.thread] = tid;
                if (tid == 1)
                {
                    events.push_back({{"name", "process_name"},
                                      {"ph", "M"},
                                      {"pid", sp.pid},
                                      {"tid", 0},
                                      {"args", {{"name", "python pid " + std::to_string(sp.pid)}}}});
                }
                events.push_back({{"name", "thread_name"},
                                  {"ph", "M"},
                                  {"pid", sp.pid},
                                  {"tid", tid},
                                  {"args", {{"name", sp.thread.empty() ? std::string("?") : sp.thread.str()}}}});
            }
            json args = {{"module", sp.module},
                         {"hash", sp.hash},
                         {"device", sp.device},
                         {"block_dim", sp.block_dim ? json(*sp.block_dim) : json()},
                         {"status", sp.status}};
            if (!sp.triggered_by.empty())
            {
                args["waited_by_launch_of"] = sp.triggered_by;
            }
            if (sp.kind == span_kind::nvrtc)
            {
                args["phase"] = sp.detail;
            }
            events.push_back({{"name", sp.kind == span_kind::load    ? "load " + sp.module + " " + sp.hash
                                       : sp.kind == span_kind::nvrtc ? sp.detail.str()
                                                                     : word_of(sp.kind)},
                              {"cat", word_of(sp.kind)},
                              {"ph", "X"},
                              {"ts", sp.start_ms * 1000.0},
                              {"dur", sp.ms * 1000.0},
                              {"pid", sp.pid},
                              {"tid", threads[sp.thread]},
                              {"args", args}});
        }
        return {{"traceEvents", events},
                {"displayTimeUnit", "ms"},
                {"otherData",
                 {{"tool", "warp-probe"},
                  {"label", r.label},
                  {"sample", t.sample},
                  {"pass", t.pass},
                  {"wall_ms", t.wall_ms},
                  {"warp_version", r.env.warp_version}}}};
    }
}
