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
                if (l.status == load_status::compiled && l.snapshot && !warps_own_module(l.module)
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

        // Why a pass shows a program that differentiates (a launch with adjoint=True, a wp.Tape
        // recorded), as the words that end "...: the program needs its backward code"; "" when
        // it shows none. The tape first: it is where the gradients come from.
        std::string why_it_differentiates(const run_result& pass)
        {
            for (const auto& proc : pass.processes)
            {
                for (const auto& c : proc.calls)
                {
                    if (c.function == "Tape")
                    {
                        return "a wp.Tape records gradients"
                               + (c.file ? " at " + *c.file + ":" + std::to_string(c.line.value_or(0)) : std::string());
                    }
                }
            }
            for (const auto& l : pass.launches)
            {
                if (l.adjoint)
                {
                    return "kernel " + l.kernel + " is launched with adjoint=True";
                }
            }
            return {};
        }

        // A replay that differentiates needed its backward code: its figures measure a program
        // that no longer works.
        bool differentiates(whatif_result& w, const lever_plan&, const report&, const report& replay)
        {
            for (const auto& s : replay.samples)
            {
                if (const std::string why = why_it_differentiates(s.cold); !why.empty())
                {
                    w.verdict = verdict::invalid;
                    w.reason = why + ": the program needs its backward code";
                    return true;
                }
            }
            return false;
        }

        // Never for a program that differentiates: it needs its backward code.
        void code_form(fix_plan& p, const fix_input& in)
        {
            if (const std::string why = why_it_differentiates(in.cold); !why.empty())
            {
                p.no_form = why + ": the program needs its backward code";
                return;
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
