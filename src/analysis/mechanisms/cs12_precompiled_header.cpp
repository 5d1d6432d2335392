// CS-12: CPU threads wrote a precompiled header for one or two builds each, where writing the
// header may cost more than it saves.
#include <map>

#include "detector.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp::detect
{
    namespace
    {
        void detect(const context& ctx, sink& out)
        {
            // builds, headers written, what writing them cost; a finding from what was built (a header
            // written for at most two builds), its figure on the estimates' clock
            struct thread_builds
            {
                int builds = 0;
                int headers = 0;
                double header_ms = 0.0;
            };
            std::map<std::pair<std::int64_t, std::string>, thread_builds> per_thread;
            for (const auto& l : ctx.first_cold().module_loads)
            {
                if (l.status != load_status::compiled || l.native_kind != "cpu")
                {
                    continue;
                }
                auto& t = per_thread[{l.pid, l.thread}];
                t.builds++;
                t.headers += l.pch_ms ? 1 : 0;
                t.header_ms += l.header_cost_ms(ctx.estimates_on());
            }
            double header_ms = 0.0;
            int threads = 0;
            for (const auto& [k, t] : per_thread)
            {
                if (t.headers > 0 && t.builds <= 2)
                {
                    header_ms += t.header_ms;
                    ++threads;
                }
            }
            if (threads == 0)
            {
                return;
            }
            finding f = make_finding("CS-12", "", "cpu");
            f.cause = json_text(nlohmann::json{{"threads", threads}, {"pch_ms", header_ms}});
            f.evidence = format_ms(header_ms) + " went into writing CPU precompiled headers in " + std::to_string(threads)
                         + " thread(s) that built at most two modules with them (Warp keeps the header per thread and "
                           "per process)";
            f.recommendation = "Measure wp.config.use_precompiled_headers = False at the application entry point (never "
                               "from library code): without the header each build parses Warp's headers itself, which "
                               "costs less than writing the header only when few modules build per thread. Restore the "
                               "default unless the comparison says otherwise.";
            out.findings.push_back(std::move(f));
        }
    }

    extern const detector cs12_precompiled_header{
        {"CS-12", "precompiled header may not pay for itself", finding_kind::advisory, "cs-12", "pch-off", "",
         "cs12_precompiled_header.cpp"},
        &detect};
}
