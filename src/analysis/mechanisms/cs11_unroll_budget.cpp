// CS-11: a large unroll budget inflates the generated source. A note, never a recommendation:
// lowering max_unroll was measured not to shorten the build (-39% source, no cold-time change
// on Warp 1.19, references/mechanisms.md#cs-11) and may slow the kernels. A module whose
// generated source is large is listed among the considered-and-declined, with that reason.
#include "detector.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp::detect
{
    namespace
    {
        constexpr double large_source_bytes = 256.0 * 1024.0;  // a one-kernel module is 20-40 KB on the CPU

        void detect(const context& ctx, sink& out)
        {
            for (const auto& l : ctx.first_cold().module_loads)
            {
                if (l.status != load_status::compiled || !l.source_bytes || *l.source_bytes < large_source_bytes)
                {
                    continue;
                }
                declined_lever d = make_declined("CS-11", l.module, l.device);
                d.reason = "its generated source is " + format_bytes(static_cast<double>(*l.source_bytes))
                           + "; lowering wp.config.max_unroll was measured not to shorten the build (-39% source, no "
                             "cold-time change) and may slow the kernels: not recommended";
                d.numbers = {{"source_bytes", *l.source_bytes},
                             {"max_unroll", l.snapshot ? field_or(*l.snapshot->options, "max_unroll", nlohmann::json())
                                                       : nlohmann::json()}};
                out.declined.push_back(std::move(d));
            }
        }
    }

    extern const detector cs11_unroll_budget{
        {"CS-11", "unroll budget inflates the generated source", finding_kind::note, "cs-11", "",
         "a note, never a recommendation: lowering max_unroll was measured not to shorten the build (-39% source, "
         "no cold-time change) and may slow the kernels",
         "cs11_unroll_budget.cpp"},
        &detect};
}
