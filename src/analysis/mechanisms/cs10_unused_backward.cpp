// CS-10: modules generated backward (adjoint) code, and the run launched no adjoint kernel and
// recorded no wp.Tape. An opportunity to measure, never an instruction.
#include <algorithm>
#include <string_view>
#include <unordered_set>

#include "detector.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp::detect
{
    namespace
    {
        void detect(const context& ctx, sink& out)
        {
            const run_result& run = ctx.first_cold();
            const bool adjoint = std::any_of(run.launches.begin(), run.launches.end(), [](const launch_record& l) { return l.adjoint; });
            bool tape = false;
            for (const auto& p : run.processes)
            {
                for (const auto& c : p.calls)
                {
                    tape = tape || c.function == "Tape";
                }
            }
            if (adjoint || tape || run.launch_total <= 0)
            {
                return;
            }
            // each module once, in first-built order, as views of the loads' strings
            std::unordered_set<std::string_view> seen;
            std::vector<std::string_view> modules;
            double ms = 0.0;
            for (const auto& l : run.module_loads)
            {
                if (l.status != load_status::compiled || !l.snapshot || warps_own_module(l.module))
                {
                    continue;
                }
                if (l.snapshot->holds_backward_code().value_or(false))
                {
                    if (seen.insert(l.module).second)
                    {
                        modules.emplace_back(l.module);
                    }
                    ms += l.cost_ms(ctx.estimates_on());
                }
            }
            if (modules.empty())
            {
                return;
            }
            finding f = make_finding("CS-10", join(modules), "");
            // members in the order dump() writes them (sorted); the names as text, not a tree of copies
            f.cause = json_text::of_compact_text("{\"adjoint_launches\":0,\"modules\":" + json_string_array(modules) + ",\"tapes\":0}");
            f.evidence = std::to_string(modules.size()) + " module(s) generated backward (adjoint) code (" + format_ms(ms)
                         + " of builds) but this run launched no adjoint kernel and created no wp.Tape";
            f.recommendation = "An opportunity to measure, not an instruction: if this application never needs "
                               "gradients, set wp.config.enable_backward = False at its entry point, before importing "
                               "Warp libraries (never inside library code, whose other users may differentiate through "
                               "it), or give forward-only kernels @wp.kernel(enable_backward=False), then compare. "
                               "Kernels that are differentiated must keep backward code: a tape through them gives "
                               "wrong gradients otherwise (Warp logs one warning); split forward-only and "
                               "differentiable kernels instead.";
            out.findings.push_back(std::move(f));
        }
    }

    extern const detector cs10_unused_backward{
        {"CS-10", "backward code generated but never used", finding_kind::advisory, "cs-10", "backward-off", "",
         "cs10_unused_backward.cpp"},
        &detect};
}
