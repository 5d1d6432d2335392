// CS-9: module="unique" on kernels whose source is stable: each builds a module of its own and
// pays a module's fixed cost once per kernel. Points at the declaration, and when the
// "unique" came from a factory's keyword default, at that default and the factory's callers.
#include <map>
#include <string_view>
#include <unordered_set>

#include "detector.hpp"
#include "xwarp/analysis/stats.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp::detect
{
    namespace
    {
        using nlohmann::json;

        std::optional<std::pair<std::string, int>> place(const json& j)
        {
            if (!j.is_object())
            {
                return std::nullopt;
            }
            auto file = j.find("file");
            auto line = j.find("line");
            if (file == j.end() || !file->is_string() || line == j.end() || !line->is_number_integer())
            {
                return std::nullopt;
            }
            return std::make_pair(file->get<std::string>(), line->get<int>());
        }

        // Where each unique module was declared: the shim records every wp.kernel(module="unique").
        void locate(finding& f, const run_result& run, const std::vector<std::string_view>& module_list)
        {
            const std::unordered_set<std::string_view> modules(module_list.begin(), module_list.end());
            for (const auto& p : run.processes)
            {
                for (const auto& c : p.calls)
                {
                    if (c.function != "kernel" || !c.args.is_object())
                    {
                        continue;
                    }
                    const std::string module = field_or(c.args, "module", std::string());
                    if (!modules.count(module))
                    {
                        continue;
                    }
                    const std::string factory = field_or(c.args, "declared_in", std::string());
                    if (auto d = place(field_or(c.args, "default", json())))
                    {
                        add_location(f, d->first, d->second,
                                     "module=\"unique\" is the default of " + factory + "(" + field_or(c.args["default"], "param", std::string("module")) + "=...)");
                    }
                }
            }
            for (const auto& p : run.processes)
            {
                for (const auto& c : p.calls)
                {
                    if (c.function != "kernel" || !c.args.is_object()
                        || !modules.count(field_or(c.args, "module", std::string())))
                    {
                        continue;
                    }
                    add_location(f, c.file, c.line, "wp.kernel(..., module=\"unique\") for " + field_or(c.args, "key", std::string("?")));
                    if (auto called = place(field_or(c.args, "called_from", json())))
                    {
                        add_location(f, called->first, called->second,
                                     field_or(c.args, "declared_in", std::string("the factory")) + " called here");
                    }
                }
            }
        }

        void detect(const context& ctx, sink& out)
        {
            const merge_estimates merges = estimate_merges(
                ctx, 2, [](const granular_modules& g) -> const std::vector<module_group>& { return g.unique; });
            const auto& names = merges.names;
            for (const auto& [device, n] : names)
            {
                finding f = merge_finding(
                    ctx, "CS-9", merges, device,
                    std::to_string(n.size()) + " module=\"unique\" modules with one stable kernel each were built "
                                               "separately on " + device,
                    "Put stable kernels in a shared named module (module=\"name\" or a real Python module) instead of "
                    "module=\"unique\"; keep unique for per-request or plugin kernels that would otherwise churn a shared "
                    "module. Check factory helpers for a hidden module=\"unique\" default. Verify with warp-probe compare.");
                locate(f, ctx.first_cold(), n);
                out.findings.push_back(std::move(f));
            }
        }
    }

    extern const detector cs09_unique_modules{
        {"CS-9", "module=\"unique\" on stable kernels", finding_kind::diagnosis, "cs-9", "shared-module", "", "cs09_unique_modules.cpp"},
        &detect};
}
