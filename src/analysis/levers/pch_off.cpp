// pch-off: wp.config.use_precompiled_headers held at False (CS-12): no per-thread header is
// written, each build parses the headers itself.
#include <algorithm>

#include "lever.hpp"

namespace xwarp::levers
{
    namespace
    {
        void plan(lever_plan& p, const plan_input& in)
        {
            const auto& loads = in.cold.module_loads;
            const bool header = std::any_of(loads.begin(), loads.end(), [](const module_load& l)
                                            { return l.pch_ms.has_value() || l.native_kind == "cuda"; });
            if (!header)
            {
                p.not_applicable = "no build used a precompiled header";
            }
        }
    }

    namespace
    {
        // Only the headers are at stake: every build still compiles its module.
        double stake(const lever_plan&, const run_result& cold)
        {
            double ms = 0.0;
            for (const auto& l : cold.module_loads)
            {
                ms += l.status == load_status::compiled ? l.pch_ms.value_or(0.0) : 0.0;
            }
            return ms;
        }

        void code_form(fix_plan& p, const fix_input&)
        {
            p.ops.push_back(config_at_entry("use_precompiled_headers", false,
                                            "few builds per thread: writing the header costs more than it saves"));
        }
    }

    extern const lever_def pch_off{
        {"pch-off", "holds wp.config.use_precompiled_headers at False from import warp on: no build writes or "
                    "reads a precompiled header",
         "pch_off.cpp"},
        &plan,
        nullptr,
        nullptr,
        &code_form,
        nullptr,
        &stake,
        false,
        true};
}
