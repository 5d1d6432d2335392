// backward-off: wp.config.enable_backward held at False from `import warp` on, so no module
// generates adjoint code (CS-10). Invalid for a program that differentiates.
#include "lever.hpp"

namespace xwarp::levers
{
    namespace
    {
        void plan(lever_plan& p, const plan_input& in)
        {
            for (const auto& l : in.cold.module_loads)
            {
                if (l.status == load_status::compiled && l.snapshot && !is_warp_internal(l.module)
                    && l.snapshot->holds_backward_code().value_or(false))
                {
                    add_unique(p.modules, l.module);
                }
            }
            if (p.modules.empty())
            {
                p.not_applicable = "no module was built with backward code";
            }
        }

        // A replay that launched an adjoint kernel or recorded a tape needed its backward code:
        // its figures measure a program that no longer works.
        bool differentiates(whatif_result& w, const lever_plan&, const report&, const report& replay)
        {
            for (const auto& s : replay.samples)
            {
                for (const auto& l : s.cold.launches)
                {
                    if (l.adjoint)
                    {
                        w.verdict = verdict::invalid;
                        w.reason = "kernel " + l.kernel + " is launched with adjoint=True: the program needs its "
                                   "backward code";
                        return true;
                    }
                }
                for (const auto& p : s.cold.processes)
                {
                    for (const auto& call : p.calls)
                    {
                        if (call.function == "Tape")
                        {
                            w.verdict = verdict::invalid;
                            w.reason = "a wp.Tape records gradients"
                                       + (call.file ? " at " + *call.file + ":" + std::to_string(call.line.value_or(0))
                                                    : std::string())
                                       + ": the program differentiates, so it needs backward code";
                            return true;
                        }
                    }
                }
            }
            return false;
        }
    }

    namespace
    {
        // Never for a program that differentiates: it needs its backward code.
        void code_form(fix_plan& p, const fix_input& in)
        {
            for (const auto& proc : in.cold.processes)
            {
                for (const auto& c : proc.calls)
                {
                    if (c.function == "Tape")
                    {
                        p.no_form = "the program records a wp.Tape"
                                    + (c.file ? " at " + *c.file + ":" + std::to_string(c.line.value_or(0)) : std::string())
                                    + ": it needs its backward code";
                        return;
                    }
                }
            }
            for (const auto& l : in.cold.launches)
            {
                if (l.adjoint)
                {
                    p.no_form = "kernel " + l.kernel + " is launched with adjoint=True: the program needs its backward code";
                    return;
                }
            }
            p.ops.push_back(config_at_entry("enable_backward", false, "this program never differentiates"));
        }
    }

    extern const lever_def backward_off{
        {"backward-off", "holds wp.config.enable_backward at False from import warp on, and takes it out of "
                         "set_module_options calls: no module generates adjoint code",
         "backward_off.cpp"},
        &plan,
        &differentiates,
        nullptr,
        &code_form};
}
