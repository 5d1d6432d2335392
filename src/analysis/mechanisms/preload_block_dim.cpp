// preload-block-dim: a preload (wp.force_load / wp.load_module) built a module at a block_dim
// no launch of it used, so the launch built its own variant again.
#include <set>

#include "detector.hpp"
#include "xwarp/analysis/stats.hpp"
#include "xwarp/analysis/summarize.hpp"

namespace xwarp::detect
{
    namespace
    {
        void detect(const context& ctx, sink& out)
        {
            const run_result& run = ctx.first_cold();
            std::set<identity_key> reported;
            for (const auto& l : run.module_loads)
            {
                if (!ctx.unused_preload_variant(l) || reported.count(key_of(l)))
                {
                    continue;
                }
                reported.insert(key_of(l));
                finding f = make_finding("preload-block-dim", l.module, l.device);
                nlohmann::json cause = nlohmann::json::object();
                std::vector<int> used_bds;
                auto it = ctx.launched().find({l.module, l.device});
                if (it != ctx.launched().end())
                {
                    for (const auto& [bd, ks] : it->second)
                    {
                        used_bds.push_back(bd);
                    }
                }
                if (const process_record* p = process_of(run, l.pid))
                {
                    const api_call_event* preload = nullptr;
                    for (const auto& c : p->calls)
                    {
                        if ((c.function == "force_load" || c.function == "load_module") && c.seq < l.seq)
                        {
                            preload = &c;
                        }
                    }
                    if (preload)
                    {
                        add_location(f, preload->file, preload->line, "wp." + preload->function + "(...) without the launches' block_dim");
                        cause["preload_call"] = {{"function", preload->function}, {"args", preload->args}};
                    }
                }
                cause["built_block_dim"] = *l.block_dim;
                cause["launched_block_dims"] = used_bds;
                f.cause = json_text(cause);
                std::vector<std::string> bds;
                for (int b : used_bds)
                {
                    bds.push_back(std::to_string(b));
                }
                f.evidence = "a preload built " + l.module + " on " + l.device + " at block_dim "
                             + std::to_string(*l.block_dim) + ", but its launches there used block_dim "
                             + (bds.empty() ? std::string("(none)") : join(bds))
                             + "; the launch built its own variant again";
                f.recommendation = "Pass the launches' block_dim to the preload (block_dim=1 for CPU launches; the "
                                   "launch's block_dim on CUDA), or drop the preload for that device.";
                // The whole preload build goes: no launch needs its block_dim, so neither the
                // module variant nor a header written for that block_dim is needed.
                std::vector<double> per_sample;
                for (const auto* s : ctx.good)
                {
                    for (const auto& x : s->cold.module_loads)
                    {
                        if (key_of(x) == key_of(l) && x.via_preload)
                        {
                            per_sample.push_back(removable(x, ctx.estimates_on(), false));
                            break;
                        }
                    }
                }
                f.savings_ms = median(per_sample);
                out.findings.push_back(std::move(f));
            }
        }
    }

    namespace
    {
        // The preload asks for the block_dim the launches use.
        void code_form(fix_plan& p, const fix_input& in)
        {
            const nlohmann::json used = field_or(in.f.cause.value(), "launched_block_dims", nlohmann::json::array());
            if (in.f.locations.empty() || !used.is_array() || used.size() != 1 || !used[0].is_number_integer())
            {
                p.no_form = used.is_array() && used.size() > 1
                                ? "the launches use several block_dims: a preload builds one of them"
                                : "the records do not locate the preload";
                return;
            }
            p.ops.push_back({{"op", "preload_block_dim"},
                             {"file", in.f.locations[0].file},
                             {"line", in.f.locations[0].line},
                             {"block_dim", used[0]}});
        }
    }

    extern const detector preload_block_dim{
        {"preload-block-dim", "a preload built a block_dim no launch uses", finding_kind::diagnosis, "preload-block-dim", "",
         "the preload's block_dim argument is a one-word code change; the probe does not guess it",
         "preload_block_dim.cpp"},
        &detect,
        {},
        &code_form};
}
