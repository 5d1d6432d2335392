// compile-small-share: compilation is a small share of the cold run's wall time, so the time
// goes elsewhere. Said first, and it ends the diagnosis: no compile lever can pay here.
#include <algorithm>

#include "detector.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp::detect
{
    namespace
    {
        void detect(const context& ctx, sink& out)
        {
            const auto& s = ctx.r.result;
            for (const auto& fl : s.flags)
            {
                if (fl.id != flag_id::compile_small_share)
                {
                    continue;
                }
                finding f = make_finding("compile-small-share", "", "");
                f.evidence = fl.message;
                f.cause = json_text(nlohmann::json{{"compile_share", s.compile_share.median.value_or(0.0)},
                           {"compile_elapsed_ms", s.compile_elapsed_ms.median.value_or(0.0)},
                           {"cold_wall_ms", s.cold_wall_ms.median.value_or(0.0)}});
                f.recommendation = "Profile the rest of the program first (a Python profiler, Nsight Systems): cutting "
                                   "compilation cannot save more than "
                                   + format_ms(std::max(0.0, s.compile_elapsed_ms.median.value_or(0.0))) + " here.";
                out.findings.push_back(std::move(f));
                out.stop = true;
                return;
            }
        }
    }

    extern const detector compile_small_share{
        {"compile-small-share", "compilation is a small share of wall time", finding_kind::diagnosis, "compile-small-share", "",
         "the time goes outside compilation, where no compile lever reaches", "compile_small_share.cpp"},
        &detect};
}
