#include "xwarp/analysis/diagnose.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "xwarp/analysis/stats.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp
{
    using nlohmann::json;

    namespace
    {
        std::string join(const std::vector<std::string>& v, const std::string& sep = ", ")
        {
            std::string s;
            for (const auto& x : v)
            {
                s += (s.empty() ? "" : sep) + x;
            }
            return s;
        }

        // The share of a one-kernel CPU module's build that is per-build fixed cost (clang
        // set-up, object emission, JIT load), measured on Warp 1.19 by merging four one-kernel
        // modules into one: 0.7 to 0.8. Heavier kernels make it smaller.
        constexpr double fixed_cost_share = 0.75;

        bool is_warp_internal(const std::string& module)
        {
            return module == "warp" || module.rfind("warp.", 0) == 0;
        }

        // The build cost a fix can remove. A precompiled header the build wrote stays when the
        // fix keeps another build that needs the same header (same module at the same
        // block_dim: the cost moves to whichever build comes first); otherwise it goes too.
        double removable(const module_load& l, bool header_kept = true)
        {
            if (l.status != load_status::compiled)
            {
                return l.work_ms();  // a cached reload is removed whole
            }
            double ms = l.work_ms();
            if (header_kept && l.pch_ms)
            {
                ms -= std::min(*l.pch_ms, ms);
            }
            return ms;
        }

        // A wp.set_module_options call that set `key`. The args come from a report file:
        // json::find and contains answer "absent" for a value of any other shape, where
        // json::value would throw.
        bool sets_module_option(const api_call_event& c, const std::string& key)
        {
            const auto options = c.args.find("options");
            return c.function == "set_module_options" && options != c.args.end() && options->contains(key);
        }

        // Loads of one (process, module, device, block_dim) in the order they happened.
        struct load_sequence
        {
            std::int64_t pid = 0;
            std::string module;
            std::string device;
            int block_dim = -1;
            std::vector<const module_load*> loads;
        };

        std::vector<load_sequence> sequences(const run_result& run)
        {
            std::vector<load_sequence> out;
            std::map<std::tuple<std::int64_t, std::string, std::string, int>, std::size_t> index;
            std::vector<const module_load*> ordered;
            for (const auto& l : run.module_loads)
            {
                ordered.push_back(&l);
            }
            std::stable_sort(ordered.begin(),
                             ordered.end(),
                             [](const module_load* a, const module_load* b)
                             { return a->pid == b->pid ? a->seq < b->seq : false; });
            for (const auto* l : ordered)
            {
                auto key = std::make_tuple(l->pid, l->module, l->device, l->block_dim.value_or(-1));
                auto it = index.find(key);
                if (it == index.end())
                {
                    index[key] = out.size();
                    out.push_back({l->pid, l->module, l->device, l->block_dim.value_or(-1), {}});
                    it = index.find(key);
                }
                out[it->second].loads.push_back(l);
            }
            return out;
        }

        const process_record* process_of(const run_result& run, std::int64_t pid)
        {
            for (const auto& p : run.processes)
            {
                if (p.pid == pid)
                {
                    return &p;
                }
            }
            return nullptr;
        }

        std::vector<const sample*> good_samples(const report& r)
        {
            std::vector<const sample*> g;
            for (const auto& s : r.samples)
            {
                if (s.ok())
                {
                    g.push_back(&s);
                }
            }
            return g;
        }

        std::optional<source_location> location_of(const std::optional<std::string>& file, const std::optional<int>& line)
        {
            if (file && line)
            {
                return source_location{*file, *line};
            }
            return std::nullopt;
        }

        std::string mechanism_for(const std::string& kind)
        {
            if (kind == "option-change")
            {
                return "CS-3";
            }
            if (kind == "generic-instance")
            {
                return "CS-6";
            }
            if (kind == "kernel-set-change" || kind == "kernel-instances-added" || kind == "kernel-content-change")
            {
                return "CS-1";
            }
            if (kind == "dependency-change")
            {
                return "dependency-change";
            }
            return "unexplained-rebuild";
        }

        std::vector<std::string> triggers_for(const std::string& mechanism)
        {
            if (mechanism == "CS-1")
            {
                return {"kernel", "function", "struct"};
            }
            if (mechanism == "CS-6")
            {
                return {"overload"};
            }
            if (mechanism == "CS-3")
            {
                return {"options"};
            }
            if (mechanism == "dependency-change")
            {
                return {"function", "kernel", "struct"};
            }
            return {};
        }

        // The dirtying event between two loads of a module that matches the mechanism.
        const dirty_event* dirty_between(const process_record* p,
                                         const std::string& module,
                                         std::int64_t after_seq,
                                         std::int64_t before_seq,
                                         const std::vector<std::string>& triggers)
        {
            if (!p)
            {
                return nullptr;
            }
            const dirty_event* any = nullptr;
            for (const auto& d : p->dirty_events)
            {
                if (d.module != module || d.seq <= after_seq || d.seq >= before_seq)
                {
                    continue;
                }
                if (std::find(triggers.begin(), triggers.end(), d.trigger) != triggers.end())
                {
                    return &d;
                }
                if (!any)
                {
                    any = &d;
                }
            }
            return triggers.empty() ? any : nullptr;
        }

        struct finding_acc
        {
            finding f;
            std::vector<double> savings_per_sample;
        };

        std::string guide_anchor(const std::string& mechanism)
        {
            std::string a = mechanism;
            std::transform(a.begin(), a.end(), a.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            return a;
        }

        // ---------------------------------------------------------------------------------------
        // Recommendations, in the user's terms, with their limits and what to verify.

        std::string recommend_churn(const std::string& mechanism, const json& detail)
        {
            if (mechanism == "CS-1")
            {
                return "Define these kernels before the module's first launch: move them to module scope (keep their "
                       "names), or create every dynamic kernel before the first wp.launch. Kernels that really depend "
                       "on runtime data (plugins, user expressions) belong in a module of their own so they stop "
                       "rebuilding this one; module=\"unique\" is the last resort. Verify with warp-probe compare: one "
                       "identity for this module and the same launches.";
            }
            if (mechanism == "CS-3")
            {
                std::vector<std::string> keys;
                const json options = detail.value("options", json::object());
                for (const auto& [k, v] : options.items())
                {
                    keys.push_back(k);
                }
                return "Set " + (keys.empty() ? std::string("these options") : join(keys))
                       + " before the module's first load (wp.set_module_options at the top of the module, or "
                         "wp.get_module(name).options while it is empty). If kernels really need different options, "
                         "give them their own module. Verify the module now loads under one hash.";
            }
            if (mechanism == "CS-6")
            {
                return "Register the routine signatures with wp.overload(kernel, [...]) before the first launch and keep "
                       "the returned objects alive. Only for signatures the program really uses: registering rare types "
                       "makes every build bigger. Verify one identity with warp-probe compare.";
            }
            if (mechanism == "dependency-change")
            {
                return "A @wp.func (or wp.static value) this module calls changed after the module loaded; every module "
                       "calling it rebuilds. Define or redefine shared functions before any launch, or isolate the "
                       "changing function in the module that needs it.";
            }
            return "The recorded content does not explain this hash change (no kernel, option or function difference, or "
                   "no content snapshot). Check for cache_kernels=False or verify_autograd_array_access, and look at the "
                   "dirtying events listed in the cause.";
        }

        std::string title_for(const std::string& mechanism)
        {
            static const std::map<std::string, std::string> titles = {
                {"CS-1", "kernels defined after their module loaded"},
                {"CS-2", "cache never reused"},
                {"CS-3", "module options changed after first load"},
                {"CS-4", "module boundaries too granular"},
                {"CS-5", "one module built at several block_dims"},
                {"CS-6", "generic instances created after first load"},
                {"CS-7", "MathDx LTO built without amortization"},
                {"CS-8", "concurrent first CPU loads raced the native JIT"},
                {"CS-9", "module=\"unique\" on stable kernels"},
                {"CS-10", "backward code generated but never used"},
                {"CS-12", "precompiled header may not pay for itself"},
                {"CS-13", "independent modules built one at a time"},
                {"option-not-arrived", "a wp.config option never reached the module"},
                {"preload-block-dim", "a preload built a block_dim no launch uses"},
                {"same-hash-rebuilt", "the same module identity compiled more than once"},
                {"hash-thrash", "module hash returned to an earlier value"},
                {"compile-small-share", "compilation is a small share of wall time"},
                {"dependency-change", "a called function changed after load"},
                {"unexplained-rebuild", "module rebuilt for a reason the records do not show"},
                {"ptx-load-compile", "a PTX module compiles again at every load"},
            };
            auto it = titles.find(mechanism);
            return it == titles.end() ? mechanism : it->second;
        }

        finding make_finding(const std::string& mechanism, const std::string& module, const std::string& device)
        {
            finding f;
            f.mechanism = mechanism;
            f.title = title_for(mechanism);
            f.module = module;
            f.device = device;
            f.guide = guide_anchor(mechanism);
            return f;
        }

        // ---------------------------------------------------------------------------------------
        // Hash churn: CS-1, CS-3, CS-6, dependency change, unexplained; and hash thrash.

        void churn_findings(const std::vector<const sample*>& good, std::map<std::string, finding_acc>& acc)
        {
            for (std::size_t gi = 0; gi < good.size(); ++gi)
            {
                const run_result& run = good[gi]->cold;
                std::map<std::string, double> sample_savings;
                for (const auto& seq : sequences(run))
                {
                    const process_record* proc = process_of(run, seq.pid);
                    // The module's hashes as they followed each other, repeats of one hash merged.
                    std::vector<std::string> sequence;
                    for (const auto* l : seq.loads)
                    {
                        if (sequence.empty() || sequence.back() != l->hash.substr(0, 7))
                        {
                            sequence.push_back(l->hash.substr(0, 7));
                        }
                    }
                    std::vector<std::string> seen;
                    const module_load* prev = nullptr;
                    for (const auto* l : seq.loads)
                    {
                        if (!prev)
                        {
                            seen.push_back(l->hash);
                            prev = l;
                            continue;
                        }
                        if (prev->hash == l->hash)
                        {
                            prev = l;
                            continue;
                        }
                        const bool returning = std::find(seen.begin(), seen.end(), l->hash) != seen.end();
                        std::string mechanism;
                        hash_change change;
                        if (returning)
                        {
                            mechanism = "hash-thrash";
                        }
                        else
                        {
                            change = classify_hash_change(*prev, *l);
                            mechanism = mechanism_for(change.kind);
                            seen.push_back(l->hash);
                        }
                        std::string key = mechanism + "|" + seq.module + "|" + seq.device + "|" + std::to_string(seq.block_dim);
                        // the build this change forced, minus what the fix still pays once
                        double cost = returning ? l->work_ms() : removable(*prev);
                        sample_savings[key] += cost;
                        if (gi == 0)
                        {
                            auto it = acc.find(key);
                            if (it == acc.end())
                            {
                                finding f = make_finding(mechanism, seq.module, seq.device);
                                f.cause = {{"block_dim", seq.block_dim}, {"sequence", sequence}, {"changes", json::array()}};
                                it = acc.emplace(key, finding_acc{f, {}}).first;
                            }
                            auto& f = it->second.f;
                            json ch = {{"from", prev->hash.substr(0, 7)}, {"to", l->hash.substr(0, 7)}};
                            if (!returning)
                            {
                                ch["kind"] = change.kind;
                                ch["detail"] = change.detail;
                            }
                            const dirty_event* d = dirty_between(proc, seq.module, prev->seq, l->seq, triggers_for(mechanism));
                            if (d)
                            {
                                ch["trigger"] = d->trigger;
                                ch["trigger_detail"] = d->detail;
                                if (auto loc = location_of(d->file, d->line))
                                {
                                    ch["location"] = {{"file", loc->file}, {"line", loc->line}};
                                    if (!f.location)
                                    {
                                        f.location = loc;
                                    }
                                }
                            }
                            f.cause["changes"].push_back(ch);
                        }
                        prev = l;
                    }
                }
                for (auto& [key, a] : acc)
                {
                    if (a.f.mechanism == "option-not-arrived")
                    {
                        continue;
                    }
                    auto it = sample_savings.find(key);
                    if (it != sample_savings.end())
                    {
                        a.savings_per_sample.push_back(it->second);
                    }
                }
            }
            for (auto& [key, a] : acc)
            {
                auto& f = a.f;
                const auto& changes = f.cause["changes"];
                const std::vector<std::string> hashes = f.cause.value("sequence", std::vector<std::string>{});
                std::set<std::string> distinct(hashes.begin(), hashes.end());
                const int bd = f.cause.value("block_dim", -1);
                if (f.mechanism == "hash-thrash")
                {
                    f.evidence = "module " + f.module + " on " + f.device + " (block_dim " + std::to_string(bd)
                                 + ") went back to an earlier hash: " + join(hashes, " -> ");
                    f.recommendation = "Two kernel sets or option sets take turns in this module, so each switch "
                                       "reloads (or rebuilds) it. Give each stable set its own module, and create "
                                       "every kernel before the first launch.";
                }
                else
                {
                    std::vector<std::string> what;
                    for (const auto& c : changes)
                    {
                        const auto& d = c.value("detail", json::object());
                        const std::string kind = c.value("kind", "");
                        if (kind == "kernel-set-change")
                        {
                            for (const auto& k : d.value("added", json::array()))
                            {
                                what.push_back("kernel " + k.get<std::string>() + " added");
                            }
                            for (const auto& k : d.value("removed", json::array()))
                            {
                                what.push_back("kernel " + k.get<std::string>() + " gone");
                            }
                        }
                        else if (kind == "kernel-instances-added")
                        {
                            what.push_back("new instance(s) of " + d.value("kernel", std::string("?"))
                                           + " with different captured values (a kernel factory)");
                        }
                        else if (kind == "kernel-content-change")
                        {
                            what.push_back("kernel(s) " + join(d.value("kernels", std::vector<std::string>{}))
                                           + " redefined with new content");
                        }
                        else if (kind == "option-change")
                        {
                            const json options = d.value("options", json::object());
                            for (const auto& [k, v] : options.items())
                            {
                                what.push_back("option " + k + " " + v.value("old", json()).dump() + " -> "
                                               + v.value("new", json()).dump());
                            }
                        }
                        else if (kind == "generic-instance")
                        {
                            what.push_back("generic " + d.value("kernel", std::string("?")) + " instantiated for "
                                           + join(d.value("signatures", std::vector<std::string>{})));
                        }
                        else if (kind == "dependency-change")
                        {
                            what.push_back("function(s) " + join(d.value("functions", std::vector<std::string>{}))
                                           + " changed");
                        }
                        else
                        {
                            what.push_back(d.value("why", std::string("no recorded difference")));
                        }
                    }
                    f.evidence = "module " + f.module + " on " + f.device + " (block_dim " + std::to_string(bd)
                                 + ") loaded under " + std::to_string(distinct.size()) + " hashes in one process ("
                                 + join(hashes, " -> ") + "): " + join(what, "; ");
                    json first_detail = changes.empty() ? json::object() : changes[0].value("detail", json::object());
                    f.recommendation = recommend_churn(f.mechanism, first_detail);
                }
                f.savings_ms = median(a.savings_per_sample);
                f.evidence += std::string(f.mechanism == "hash-thrash" ? "; the returning loads cost "
                                                                        : "; the builds it forced cost ")
                              + format_ms(f.savings_ms.value_or(0.0)) + " (median of "
                              + std::to_string(a.savings_per_sample.size()) + " sample(s))";
            }
        }

        // ---------------------------------------------------------------------------------------
        // Same identity compiled more than once in one pass.

        void same_hash_findings(const std::vector<const sample*>& good, std::vector<finding>& out)
        {
            std::map<identity_key, std::vector<double>> extra_per_sample;
            std::map<identity_key, int> builds_first;
            for (std::size_t gi = 0; gi < good.size(); ++gi)
            {
                std::map<identity_key, std::vector<const module_load*>> compiled;
                for (const auto& l : good[gi]->cold.module_loads)
                {
                    if (l.status == load_status::compiled && !l.hash.empty())
                    {
                        compiled[key_of(l)].push_back(&l);
                    }
                }
                for (const auto& [k, v] : compiled)
                {
                    if (v.size() < 2)
                    {
                        continue;
                    }
                    double extra = 0.0;
                    for (std::size_t i = 1; i < v.size(); ++i)
                    {
                        extra += removable(*v[i]);
                    }
                    extra_per_sample[k].push_back(extra);
                    if (gi == 0)
                    {
                        builds_first[k] = static_cast<int>(v.size());
                    }
                }
            }
            for (const auto& [k, v] : extra_per_sample)
            {
                finding f = make_finding("same-hash-rebuilt", std::get<0>(k), std::get<2>(k));
                f.cause = {{"hash", std::get<1>(k).substr(0, 7)}, {"block_dim", std::get<3>(k)}, {"builds", builds_first[k]}};
                f.evidence = "identity " + std::get<0>(k) + " " + std::get<1>(k).substr(0, 7) + " on " + std::get<2>(k)
                             + " was compiled " + std::to_string(builds_first[k])
                             + " times in one pass: the cache was bypassed or cleared between loads, or processes "
                               "built it concurrently";
                f.recommendation = "Look for wp.config.cache_kernels = False, verify_autograd_array_access = True, "
                                   "wp.clear_kernel_cache() or module unloads between the loads; remove them outside "
                                   "debugging sessions.";
                f.savings_ms = median(v);
                out.push_back(f);
            }
        }

        // ---------------------------------------------------------------------------------------
        // CS-2: the warm pass did not reuse the cache the cold pass filled.

        void cache_findings(const std::vector<const sample*>& good, std::vector<finding>& out)
        {
            std::vector<double> warm_compiled_ms;
            int passes_with_builds = 0;
            for (const auto* s : good)
            {
                double ms = 0.0;
                bool any = false;
                for (const auto& l : s->warm->module_loads)
                {
                    if (l.status == load_status::compiled)
                    {
                        ms += l.work_ms();
                        any = true;
                    }
                }
                warm_compiled_ms.push_back(ms);
                passes_with_builds += any;
            }
            if (passes_with_builds == 0)
            {
                return;
            }
            finding f = make_finding("CS-2", "", "");
            const run_result& warm = *good[0]->warm;
            json causes = json::array();
            for (const auto& p : warm.processes)
            {
                for (const auto& c : p.calls)
                {
                    if (c.function == "clear_kernel_cache" || c.function == "clear_lto_cache")
                    {
                        causes.push_back({{"what", "wp." + c.function + "()"}, {"file", c.file.value_or("")}, {"line", c.line.value_or(0)}});
                        if (!f.location)
                        {
                            f.location = location_of(c.file, c.line);
                        }
                    }
                }
                for (const auto& c : p.config_sets)
                {
                    const bool disables = (c.key == "cache_kernels" && c.new_value == false)
                                          || (c.key == "verify_autograd_array_access" && c.new_value == true)
                                          || c.key == "kernel_cache_dir";
                    if (disables)
                    {
                        causes.push_back({{"what", "wp.config." + c.key + " = " + c.new_value.dump()},
                                          {"file", c.file.value_or("")},
                                          {"line", c.line.value_or(0)}});
                        if (!f.location)
                        {
                            f.location = location_of(c.file, c.line);
                        }
                    }
                }
            }
            std::vector<std::string> modules;
            for (const auto& l : warm.module_loads)
            {
                if (l.status == load_status::compiled
                    && std::find(modules.begin(), modules.end(), l.module) == modules.end())
                {
                    modules.push_back(l.module);
                }
            }
            f.module = join(modules);
            f.cause = {{"causes", causes}, {"warm_passes_with_builds", passes_with_builds}};
            f.evidence = std::to_string(passes_with_builds) + " of " + std::to_string(good.size())
                         + " warm pass(es) compiled again on the cache their cold pass had just filled (median "
                         + format_ms(median(warm_compiled_ms).value_or(0.0)) + " of builds)";
            if (!causes.empty())
            {
                std::vector<std::string> c;
                for (const auto& x : causes)
                {
                    c.push_back(x.value("what", std::string()));
                }
                f.evidence += ": " + join(c);
            }
            f.recommendation = "Let the kernel cache persist: remove wp.clear_kernel_cache()/clear_lto_cache() calls, "
                               "cache_kernels=False, per-run temporary or timestamped cache directories and "
                               "verify_autograd_array_access outside debugging; persist WARP_CACHE_PATH and "
                               "CUDA_CACHE_PATH between runs (in CI, cache them keyed on the Warp version and the "
                               "sources). Never clear a live cache another process may be using.";
            f.savings_ms = median(warm_compiled_ms);
            out.push_back(f);
        }

        // ---------------------------------------------------------------------------------------
        // ptx-load-compile: a PTX module taken from Warp's cache still compiles at every load.
        // The driver JIT-compiles PTX (its compute cache keeps the result) when it is at least
        // as new as the CUDA toolkit Warp was built with; otherwise Warp compiles the PTX itself
        // on each load and nothing keeps the result. Either way the warm pass shows it.

        std::string version_text(const json& v)
        {
            if (!v.is_array() || v.empty())
            {
                return {};
            }
            std::string t;
            for (const auto& x : v)
            {
                t += (t.empty() ? "" : ".") + (x.is_number_integer() ? std::to_string(x.get<int>()) : x.dump());
            }
            return t;
        }

        void ptx_load_findings(const std::vector<const sample*>& good, std::vector<finding>& out)
        {
            constexpr double min_warm_ms = 50.0;  // below this a cached load is not worth a finding
            std::vector<double> warm_ptx_ms;
            std::vector<std::string> modules;
            std::string device;
            for (const auto* s : good)
            {
                std::set<std::tuple<std::string, std::string, std::string>> ptx;  // module, hash, device
                for (const auto& l : s->cold.module_loads)
                {
                    if (l.output_suffix == ".ptx")
                    {
                        ptx.insert({l.module, l.hash, l.device});
                    }
                }
                double ms = 0.0;
                for (const auto& l : s->warm->module_loads)
                {
                    if (l.status == load_status::cached && ptx.count({l.module, l.hash, l.device}))
                    {
                        ms += l.work_ms();
                        if (std::find(modules.begin(), modules.end(), l.module) == modules.end())
                        {
                            modules.push_back(l.module);
                            device = l.device;
                        }
                    }
                }
                warm_ptx_ms.push_back(ms);
            }
            const double med = median(warm_ptx_ms).value_or(0.0);
            if (modules.empty() || med < min_warm_ms)
            {
                return;
            }
            finding f = make_finding("ptx-load-compile", join(modules), device);
            f.kind = "diagnosis";
            json toolkit;
            json driver;
            for (const auto& p : good[0]->warm->processes)
            {
                if (p.runtime.contains("toolkit_version") && !p.runtime["toolkit_version"].is_null())
                {
                    toolkit = p.runtime["toolkit_version"];
                    driver = p.runtime.value("driver_version", json());
                }
                for (const auto& c : p.config_sets)
                {
                    if (c.key == "cuda_output" && !f.location)
                    {
                        f.location = location_of(c.file, c.line);
                    }
                }
                for (const auto& c : p.calls)
                {
                    if (sets_module_option(c, "cuda_output") && !f.location)
                    {
                        f.location = location_of(c.file, c.line);
                    }
                }
            }
            std::string path = "unknown";
            if (toolkit.is_array() && driver.is_array())
            {
                path = driver >= toolkit ? "driver" : "warp";
            }
            f.cause = {{"modules", modules},
                       {"compiled_by", path},
                       {"toolkit_version", toolkit},
                       {"driver_version", driver},
                       {"warm_load_ms", med}};
            f.evidence = std::to_string(modules.size()) + " module(s) built as PTX still took " + format_ms(med)
                         + " to load from Warp's cache in the warm pass (median)";
            if (path == "warp")
            {
                f.evidence += ": the driver (CUDA " + version_text(driver) + ") is older than the CUDA toolkit Warp was "
                              "built with (" + version_text(toolkit) + "), so Warp compiles the PTX itself at every "
                              "load and no cache keeps the result";
            }
            else if (path == "driver")
            {
                f.evidence += ": the driver JIT-compiles the PTX, and its compute cache (CUDA_CACHE_PATH) did not "
                              "keep the result between the passes";
            }
            f.recommendation = "Leave the output format to Warp (wp.config.cuda_output = None, the default): it emits "
                               "CUBIN, which loads without compiling, whenever the driver is older than its toolkit. "
                               "Keep PTX only where one binary must serve several GPU architectures; then run a driver "
                               "at least as new as Warp's toolkit, so the driver's compute cache keeps the result, and "
                               "persist CUDA_CACHE_PATH between runs (containers and CI start it empty). Verify: the "
                               "module's cached load in the warm pass drops to a few ms.";
            f.savings_ms = med;  // paid at every process start, not once
            out.push_back(f);
        }

        // ---------------------------------------------------------------------------------------
        // option-not-arrived: a wp.config value set after the module copied it at creation.

        void option_arrival_findings(const std::vector<const sample*>& good, std::vector<finding>& out)
        {
            const run_result& run = good[0]->cold;
            std::set<std::pair<std::string, std::string>> reported;
            for (const auto& l : run.module_loads)
            {
                if (!l.config_mismatch.is_object() || l.config_mismatch.empty())
                {
                    continue;
                }
                const process_record* p = process_of(run, l.pid);
                if (!p)
                {
                    continue;
                }
                for (const auto& [key, v] : l.config_mismatch.items())
                {
                    if (reported.count({l.module, key}))
                    {
                        continue;
                    }
                    // The user's assignment of that global, and when the module was created.
                    const config_set_event* set = nullptr;
                    for (const auto& c : p->config_sets)
                    {
                        if (c.key == key && c.new_value == v.value("config", json()))
                        {
                            set = &c;
                        }
                    }
                    if (!set)
                    {
                        continue;  // the global was never set by user code: nothing was meant
                    }
                    const module_created_event* created = nullptr;
                    for (const auto& m : p->modules_created)
                    {
                        if (m.module == l.module)
                        {
                            created = &m;
                            break;
                        }
                    }
                    if (created && created->seq > set->seq)
                    {
                        continue;  // set before creation: a later module option overrode it on purpose
                    }
                    // An explicit module option wins over the global on purpose.
                    bool explicit_option = false;
                    for (const auto& c : p->calls)
                    {
                        if (sets_module_option(c, key) && c.args.value("module", json()) == l.module)
                        {
                            explicit_option = true;
                        }
                    }
                    if (explicit_option)
                    {
                        continue;
                    }
                    reported.insert({l.module, key});
                    finding f = make_finding("option-not-arrived", l.module, l.device);
                    f.location = location_of(set->file, set->line);
                    f.cause = {{"option", key},
                               {"module_value", v.value("module", json())},
                               {"config_value", v.value("config", json())},
                               {"module_created_at",
                                created && created->file ? json{{"file", *created->file}, {"line", created->line.value_or(0)}}
                                                         : json()}};
                    f.evidence = "module " + l.module + " was built with " + key + "="
                                 + v.value("module", json()).dump() + " while wp.config." + key + " was "
                                 + v.value("config", json()).dump() + ": the global was set after the module was created"
                                 + (created && created->file ? " (at " + *created->file + ":"
                                                                   + std::to_string(created->line.value_or(0)) + ")"
                                                             : "");
                    f.recommendation = "Set wp.config." + key + " at the application entry point before importing the "
                                       "module (modules copy it when they are created), or set the module's own option "
                                       "with wp.set_module_options before its first load. Then check with warp-probe "
                                       "compare that the module's hash moved.";
                    f.kind = "diagnosis";
                    out.push_back(f);
                }
            }
        }

        // ---------------------------------------------------------------------------------------
        // preload-block-dim and CS-5 (block_dim spread with equal kernel sets).

        void block_dim_findings(const report& r, const std::vector<const sample*>& good, std::vector<finding>& out)
        {
            const run_result& run = good[0]->cold;
            // block_dims the launches used, per (module, device); launches carry both.
            std::map<std::pair<std::string, std::string>, std::map<int, std::set<std::string>>> launched;
            for (const auto& l : run.launches)
            {
                launched[{l.module, l.device}][l.block_dim].insert(l.kernel);
            }
            const bool have_launches = run.launch_total > 0;
            std::set<identity_key> reported;
            for (const auto& l : run.module_loads)
            {
                if (!l.via_preload || !have_launches || !l.block_dim || reported.count(key_of(l)))
                {
                    continue;
                }
                auto it = launched.find({l.module, l.device});
                const bool used = it != launched.end() && it->second.count(*l.block_dim);
                if (used)
                {
                    continue;
                }
                reported.insert(key_of(l));
                finding f = make_finding("preload-block-dim", l.module, l.device);
                std::vector<int> used_bds;
                if (it != launched.end())
                {
                    for (const auto& [bd, ks] : it->second)
                    {
                        used_bds.push_back(bd);
                    }
                }
                const process_record* p = process_of(run, l.pid);
                if (p)
                {
                    for (const auto& c : p->calls)
                    {
                        if ((c.function == "force_load" || c.function == "load_module") && c.seq < l.seq)
                        {
                            f.location = location_of(c.file, c.line);
                            f.cause["preload_call"] = {{"function", c.function}, {"args", c.args}};
                        }
                    }
                }
                f.cause["built_block_dim"] = *l.block_dim;
                f.cause["launched_block_dims"] = used_bds;
                f.evidence = "a preload built " + l.module + " on " + l.device + " at block_dim "
                             + std::to_string(*l.block_dim) + ", but its launches there used block_dim "
                             + (used_bds.empty() ? std::string("(none)") : [&] {
                                   std::vector<std::string> s;
                                   for (int b : used_bds)
                                   {
                                       s.push_back(std::to_string(b));
                                   }
                                   return join(s);
                               }())
                             + "; the launch built its own variant again";
                f.recommendation = "Pass the launches' block_dim to the preload (block_dim=1 for CPU launches; the "
                                   "launch's block_dim on CUDA), or drop the preload for that device.";
                // The whole preload build goes: no launch needs its block_dim, so neither the
                // module variant nor a header written for that block_dim is needed.
                std::vector<double> per_sample;
                for (const auto* s : good)
                {
                    for (const auto& x : s->cold.module_loads)
                    {
                        if (key_of(x) == key_of(l) && x.via_preload)
                        {
                            per_sample.push_back(removable(x, false));
                            break;
                        }
                    }
                }
                f.savings_ms = median(per_sample);
                out.push_back(f);
            }

            for (const auto& g : r.result.rebuilt)
            {
                if (g.kind != "block-dim-spread" || !g.kernel_sets_known)
                {
                    continue;
                }
                // Variants a preload created are the preload finding, not CS-5.
                bool preload_variant = false;
                std::map<int, std::set<std::string>> kernel_set;
                std::map<int, double> variant_ms;
                for (const auto& l : run.module_loads)
                {
                    if (l.module != g.module || l.device != g.device || !l.block_dim)
                    {
                        continue;
                    }
                    preload_variant = preload_variant || (l.via_preload && reported.count(key_of(l)));
                    if (l.snapshot)
                    {
                        std::set<std::string> ks;
                        for (const auto& k : l.snapshot->kernels)
                        {
                            ks.insert(k.key + "|" + k.hash);
                        }
                        kernel_set[*l.block_dim] = ks;
                    }
                    variant_ms[*l.block_dim] += l.work_ms();
                }
                if (preload_variant)
                {
                    continue;
                }
                std::set<std::set<std::string>> distinct;
                for (const auto& [bd, ks] : kernel_set)
                {
                    distinct.insert(ks);
                }
                if (distinct.size() != 1)
                {
                    continue;  // kernel sets differ too: that is churn, reported as such
                }
                // Builds of kernels never launched at that block_dim are the duplication.
                double wasted = 0.0;
                auto lit = launched.find({g.module, g.device});
                json coverage = json::object();
                for (const auto& [bd, ms] : variant_ms)
                {
                    const auto total = static_cast<double>(kernel_set[bd].size());
                    double used = 0.0;
                    if (lit != launched.end() && lit->second.count(bd))
                    {
                        used = static_cast<double>(lit->second.at(bd).size());
                    }
                    if (total > 0)
                    {
                        wasted += ms * std::max(0.0, 1.0 - used / total);
                    }
                    coverage[std::to_string(bd)] = {{"kernels_in_module", total}, {"kernels_launched", used}};
                }
                finding f = make_finding("CS-5", g.module, g.device);
                f.cause = {{"block_dims", g.block_dims}, {"coverage", coverage}};
                f.evidence = "module " + g.module + " on " + g.device + " was built at " + std::to_string(g.block_dims.size())
                             + " block_dims with the same kernel set (" + std::to_string(g.builds) + " builds, "
                             + format_ms(g.ms) + "); every build compiles every kernel";
                f.recommendation = "Put kernels launched at one stable block_dim in a named module of their own (one "
                                   "module per stable block_dim), or use fewer distinct block_dims. Keep a runtime-chosen "
                                   "block_dim in its own module. Never merge or drop kernels to fix this. Not on CPU, "
                                   "where a split made things slower.";
                f.savings_ms = wasted;
                f.evidence += "; builds of kernels never launched at their block_dim: " + format_ms(wasted);
                out.push_back(f);
            }
        }

        // ---------------------------------------------------------------------------------------
        // CS-9 and CS-4: many single-kernel modules.

        void granularity_findings(const std::vector<const sample*>& good, std::vector<finding>& out)
        {
            static const std::regex unique_name(R"(^(.+)_([0-9a-f]{8})$)");
            // Merging N builds saves N-1 per-build fixed costs, and one run cannot separate a
            // build's fixed cost from its kernels' own compile. The smallest build of the set
            // (without its precompiled header) bounds the fixed cost from above; the estimate
            // takes the share a one-kernel module's build spends on fixed cost in Warp 1.19 CPU
            // builds (see references/mechanisms.md#cs-9), and the cause carries both bounds.
            // The smallest build is taken within each sample, then the median over samples: a
            // minimum over every sample falls as samples are added, and its machine moment need
            // not be the one the other builds ran at.
            struct sample_groups
            {
                // per (pid, device): unique modules and small named modules, compiled
                std::map<std::pair<std::int64_t, std::string>, std::vector<const module_load*>> unique, small;
                double smallest = std::numeric_limits<double>::infinity();  // of either kind
            };
            auto classify = [&](const run_result& run)
            {
                sample_groups g;
                for (const auto& l : run.module_loads)
                {
                    if (l.status != load_status::compiled || !l.snapshot || is_warp_internal(l.module))
                    {
                        continue;
                    }
                    std::smatch m;
                    const auto& ks = l.snapshot->kernels;
                    if (std::regex_match(l.module, m, unique_name) && ks.size() == 1 && ks[0].key == m[1].str())
                    {
                        g.unique[{l.pid, l.device}].push_back(&l);
                    }
                    else if (ks.size() <= 2)
                    {
                        g.small[{l.pid, l.device}].push_back(&l);
                    }
                    else
                    {
                        continue;
                    }
                    g.smallest = std::min(g.smallest, removable(l));
                }
                return g;
            };
            std::vector<sample_groups> per_sample;
            for (const auto* s : good)
            {
                per_sample.push_back(classify(s->cold));
            }
            auto merge_savings = [&](const std::vector<const module_load*>& v, double smallest)
            { return v.size() > 1 ? static_cast<double>(v.size() - 1) * smallest * fixed_cost_share : 0.0; };
            for (const char* mech : {"CS-9", "CS-4"})
            {
                const bool unique = std::string(mech) == "CS-9";
                const std::size_t min_modules = unique ? 2 : 4;
                std::map<std::string, std::vector<double>> per_device_savings;
                std::map<std::string, std::vector<std::string>> names;
                for (std::size_t gi = 0; gi < good.size(); ++gi)
                {
                    const auto& groups = unique ? per_sample[gi].unique : per_sample[gi].small;
                    const double smallest = per_sample[gi].smallest;
                    std::map<std::string, double> dev_total;
                    for (const auto& [k, v] : groups)
                    {
                        if (v.size() < min_modules)
                        {
                            continue;
                        }
                        dev_total[k.second] += merge_savings(v, smallest);
                        if (gi == 0)
                        {
                            for (const auto* l : v)
                            {
                                names[k.second].push_back(l->module);
                            }
                        }
                    }
                    for (const auto& [d, t] : dev_total)
                    {
                        per_device_savings[d].push_back(t);
                    }
                }
                for (const auto& [device, n] : names)
                {
                    finding f = make_finding(mech, join(n), device);
                    f.cause = {{"modules", n}};
                    if (unique)
                    {
                        f.evidence = std::to_string(n.size()) + " module=\"unique\" modules with one stable kernel each "
                                                               "were built separately on " + device;
                        f.recommendation = "Put stable kernels in a shared named module (module=\"name\" or a real "
                                           "Python module) instead of module=\"unique\"; keep unique for per-request or "
                                           "plugin kernels that would otherwise churn a shared module. Check factory "
                                           "helpers for a hidden module=\"unique\" default. Verify with warp-probe compare.";
                    }
                    else
                    {
                        f.evidence = std::to_string(n.size()) + " small modules (at most two kernels each) were built "
                                                               "separately on " + device;
                        f.recommendation = "Group kernels that load together into fewer named modules, by lifecycle. Keep "
                                           "apart kernels with different options, different stable block_dims or "
                                           "independent edit cycles: a bigger module also rebuilds whole on every edit.";
                        f.kind = "advisory";
                    }
                    f.savings_ms = median(per_device_savings[device]);
                    const double high = f.savings_ms.value_or(0.0) / fixed_cost_share;
                    f.cause["estimate"] = {{"fixed_cost_share", fixed_cost_share},
                                           {"upper_bound_ms", high},
                                           {"lower_bound_ms", 0.5 * high}};
                    f.evidence += "; merging them saves about " + format_ms(f.savings_ms.value_or(0)) + " (between "
                                  + format_ms(0.5 * high) + " and " + format_ms(high)
                                  + ", depending on how much of each build is fixed cost)";
                    out.push_back(f);
                }
            }
        }

        // ---------------------------------------------------------------------------------------
        // Advisories: CS-10, CS-12, CS-13, CS-7, CS-8.

        void advisories(const report& r, const std::vector<const sample*>& good, std::vector<finding>& out)
        {
            const run_result& run = good[0]->cold;
            // CS-10: backward code where no adjoint launch and no tape was seen.
            bool adjoint = std::any_of(run.launches.begin(), run.launches.end(), [](const launch_record& l) { return l.adjoint; });
            bool tape = false;
            for (const auto& p : run.processes)
            {
                for (const auto& c : p.calls)
                {
                    tape = tape || c.function == "Tape";
                }
            }
            if (!adjoint && !tape && run.launch_total > 0)
            {
                std::vector<std::string> modules;
                double ms = 0.0;
                for (const auto& l : run.module_loads)
                {
                    if (l.status != load_status::compiled || !l.snapshot || is_warp_internal(l.module))
                    {
                        continue;
                    }
                    if (l.snapshot->options.value("enable_backward", false))
                    {
                        if (std::find(modules.begin(), modules.end(), l.module) == modules.end())
                        {
                            modules.push_back(l.module);
                        }
                        ms += l.work_ms();
                    }
                }
                if (!modules.empty())
                {
                    finding f = make_finding("CS-10", join(modules), "");
                    f.kind = "advisory";
                    f.cause = {{"modules", modules}, {"adjoint_launches", 0}, {"tapes", 0}};
                    f.evidence = std::to_string(modules.size()) + " module(s) generated backward (adjoint) code ("
                                 + format_ms(ms) + " of builds) but this run launched no adjoint kernel and created no "
                                 "wp.Tape";
                    f.recommendation = "An opportunity to measure, not an instruction: if this application never needs "
                                       "gradients, set wp.config.enable_backward = False at its entry point, before "
                                       "importing Warp libraries (never inside library code, whose other users may "
                                       "differentiate through it), then compare. Kernels that are differentiated must keep "
                                       "backward code: a tape through them gives silently wrong gradients otherwise; split "
                                       "forward-only and differentiable kernels instead.";
                    out.push_back(f);
                }
            }

            // CS-12: a thread wrote a precompiled header for one or two builds.
            std::map<std::pair<std::int64_t, std::string>, std::pair<int, double>> per_thread;  // builds, pch ms
            for (const auto& l : run.module_loads)
            {
                if (l.status != load_status::compiled || l.native_kind != "cpu")
                {
                    continue;
                }
                auto& t = per_thread[{l.pid, l.thread}];
                t.first++;
                if (l.pch_ms)
                {
                    t.second += *l.pch_ms;
                }
            }
            double pch_total = 0.0;
            int threads = 0;
            for (const auto& [k, t] : per_thread)
            {
                if (t.second > 0 && t.first <= 2)
                {
                    pch_total += t.second;
                    ++threads;
                }
            }
            if (threads > 0)
            {
                finding f = make_finding("CS-12", "", "cpu");
                f.kind = "advisory";
                f.cause = {{"threads", threads}, {"pch_ms", pch_total}};
                f.evidence = format_ms(pch_total) + " went into writing CPU precompiled headers in " + std::to_string(threads)
                             + " thread(s) that built at most two modules with them (Warp keeps the header per "
                               "thread and per process)";
                f.recommendation = "Measure wp.config.use_precompiled_headers = False at the application entry point "
                                   "(never from library code): without the header each build parses Warp's headers "
                                   "itself, which costs less than writing the header only when few modules build per "
                                   "thread. Restore the default unless the comparison says otherwise.";
                out.push_back(f);
            }

            // CS-13: several modules built one after another in one thread.
            std::map<std::pair<std::int64_t, std::string>, std::vector<const module_load*>> serial;
            bool parallel_preload = false;
            for (const auto& p : run.processes)
            {
                for (const auto& c : p.calls)
                {
                    auto mw = c.args.find("max_workers");
                    parallel_preload = parallel_preload
                                       || (mw != c.args.end() && mw->is_number_integer() && mw->get<int>() > 1);
                }
            }
            for (const auto& l : run.module_loads)
            {
                if (l.status == load_status::compiled && !is_warp_internal(l.module))
                {
                    serial[{l.pid, l.device}].push_back(&l);
                }
            }
            const double overlap = r.result.overlap_factor.median.value_or(1.0);
            if (!parallel_preload && overlap <= overlap_flag_threshold)
            {
                for (const auto& [k, v] : serial)
                {
                    std::set<std::string> mods;
                    for (const auto* l : v)
                    {
                        mods.insert(l->module);
                    }
                    if (mods.size() < 2)
                    {
                        continue;
                    }
                    double sum = 0.0;
                    double biggest = 0.0;
                    for (const auto* l : v)
                    {
                        sum += removable(*l);
                        biggest = std::max(biggest, removable(*l));
                    }
                    const int workers = std::max(1, std::min(4, r.env.cpu_count));
                    double ceiling = sum - std::max(biggest, sum / workers);
                    // On the CPU every extra worker thread writes its own precompiled header.
                    double header = 0.0;
                    for (const auto* l : v)
                    {
                        header = std::max(header, l->pch_ms.value_or(0.0));
                    }
                    ceiling -= header * (workers - 1) / workers;
                    if (ceiling <= 0.0)
                    {
                        continue;  // more threads would not pay here: no advice
                    }
                    finding f = make_finding("CS-13", join(std::vector<std::string>(mods.begin(), mods.end())), k.second);
                    f.kind = "advisory";
                    f.cause = {{"modules", mods}, {"workers", workers}, {"overlap_factor", overlap}};
                    f.evidence = std::to_string(mods.size()) + " independent modules were built one at a time on "
                                 + k.second + " (" + format_ms(sum) + " of builds, the largest " + format_ms(biggest)
                                 + "; overlap factor " + format_fixed(overlap, 2) + ")";
                    f.recommendation = "Preload them together from the entry point: wp.force_load(device=..., modules=[...], "
                                       "max_workers=N) or wp.load_module(..., max_workers=N), naming the modules (never "
                                       "modules=None) and the block_dim the launches use. This moves work, it does not "
                                       "remove it: judge it on compile elapsed. Codegen stays serial; only native "
                                       "compiles overlap. On CPU with Warp 1.16 or older keep max_workers <= 1 (CS-8), "
                                       "and each CPU worker thread writes its own precompiled header.";
                    f.savings_ms = ceiling;
                    f.evidence += "; ceiling with " + std::to_string(workers) + " workers: " + format_ms(ceiling);
                    out.push_back(f);
                }
            }

            // CS-7: MathDx LTO artifacts built.
            double lto_ms = 0.0;
            int lto_built = 0;
            std::set<std::string> lto_modules;
            for (const auto& l : run.module_loads)
            {
                for (const auto& a : l.lto)
                {
                    if (a.built)
                    {
                        lto_ms += a.ms;
                        ++lto_built;
                        lto_modules.insert(l.module);
                    }
                }
            }
            if (lto_built > 0)
            {
                finding f = make_finding("CS-7", join(std::vector<std::string>(lto_modules.begin(), lto_modules.end())), "");
                f.kind = "advisory";
                f.cause = {{"lto_artifacts_built", lto_built}, {"lto_ms", lto_ms}};
                f.evidence = std::to_string(lto_built) + " MathDx LTO artifact(s) were generated (" + format_ms(lto_ms)
                             + " inside codegen, outside the NVRTC compile)";
                f.recommendation = "Check CS-10 first: backward code triples the GEMM links. Then measure "
                                   "enable_mathdx_gemm (or _fft/_solver) both ways, build time and steady-state kernel "
                                   "time: it is a numerics and speed trade-off (float16 GEMMs were about 2.9x faster with "
                                   "MathDx in one test), so never turn it off blindly. Ask which matters: a fast edit-run "
                                   "loop or production start-up.";
                f.savings_ms = lto_ms;
                out.push_back(f);
            }

            // CS-8: the CPU JIT lookup race of Warp <= 1.16.
            for (const auto* s : good)
            {
                for (const auto* run2 : {&s->cold, &*s->warm})
                {
                    const auto& tail = run2->stderr_tail;
                    if (tail.find("Failed to find module: wp_") != std::string::npos
                        || tail.find("Failed to find forward kernel") != std::string::npos)
                    {
                        finding f = make_finding("CS-8", "", "cpu");
                        f.evidence = "the output says 'Failed to find module' / 'Failed to find forward kernel' after "
                                     "loads that reported success";
                        f.recommendation = "Keep max_workers <= 1 for every load that may target the CPU (device=None and "
                                           "mixed device lists included) on Warp 1.16 or older; the race is fixed in "
                                           "later releases. Retries and prewarming only hide it.";
                        out.push_back(f);
                        return;
                    }
                }
            }
        }

        json diff_options(const json& a, const json& b)
        {
            json out = json::object();
            for (const auto& [k, v] : b.items())
            {
                if (k == "block_dim" || k == "output_arch")
                {
                    continue;
                }
                auto it = a.find(k);
                if (it == a.end() || *it != v)
                {
                    out[k] = {{"old", it == a.end() ? json() : *it}, {"new", v}};
                }
            }
            for (const auto& [k, v] : a.items())
            {
                if (k != "block_dim" && k != "output_arch" && !b.contains(k))
                {
                    out[k] = {{"old", v}, {"new", json()}};
                }
            }
            return out;
        }
    }

    hash_change classify_hash_change(const module_load& before, const module_load& after)
    {
        if (!before.snapshot || !after.snapshot)
        {
            return {"unknown", {{"why", "no content snapshot (figures from Warp's log lines)"}}};
        }
        const auto& a = *before.snapshot;
        const auto& b = *after.snapshot;
        json opts = diff_options(a.options, b.options);
        if (!opts.empty())
        {
            return {"option-change", {{"options", opts}}};
        }
        std::multiset<std::string> keys_a, keys_b;
        std::set<std::tuple<std::string, std::string, std::string>> entries_a, entries_b;
        for (const auto& k : a.kernels)
        {
            keys_a.insert(k.key);
            entries_a.insert({k.key, k.hash, k.sig});
        }
        for (const auto& k : b.kernels)
        {
            keys_b.insert(k.key);
            entries_b.insert({k.key, k.hash, k.sig});
        }
        std::set<std::string> set_a(keys_a.begin(), keys_a.end()), set_b(keys_b.begin(), keys_b.end());
        std::vector<std::string> added, removed;
        std::set_difference(set_b.begin(), set_b.end(), set_a.begin(), set_a.end(), std::back_inserter(added));
        std::set_difference(set_a.begin(), set_a.end(), set_b.begin(), set_b.end(), std::back_inserter(removed));

        // New generic instances of kernels already there.
        std::vector<std::string> new_sigs;
        std::string generic_key;
        bool only_generic = true;
        for (const auto& k : b.kernels)
        {
            if (entries_a.count({k.key, k.hash, k.sig}))
            {
                continue;
            }
            if (k.generic && set_a.count(k.key))
            {
                new_sigs.push_back(k.sig);
                generic_key = k.key;
            }
            else
            {
                only_generic = false;
            }
        }
        if (!new_sigs.empty() && only_generic && added.empty())
        {
            return {"generic-instance", {{"kernel", generic_key}, {"signatures", new_sigs}}};
        }
        if (!added.empty())
        {
            return {"kernel-set-change", {{"added", added}, {"removed", removed}}};
        }
        // Same names: more instances of one key (closures from a factory), or new content.
        for (const auto& key : set_b)
        {
            if (keys_b.count(key) > keys_a.count(key))
            {
                return {"kernel-instances-added",
                        {{"kernel", key}, {"instances_before", keys_a.count(key)}, {"instances_after", keys_b.count(key)}}};
            }
        }
        std::vector<std::string> changed;
        for (const auto& k : b.kernels)
        {
            if (!entries_a.count({k.key, k.hash, k.sig}) && set_a.count(k.key))
            {
                changed.push_back(k.key);
            }
        }
        if (!changed.empty())
        {
            return {"kernel-content-change", {{"kernels", changed}}};
        }
        if (!removed.empty())
        {
            return {"kernel-set-change", {{"added", json::array()}, {"removed", removed}}};
        }
        std::vector<std::string> funcs;
        for (const auto& [k, h] : b.functions)
        {
            auto it = a.functions.find(k);
            if (it == a.functions.end() || it->second != h)
            {
                funcs.push_back(k);
            }
        }
        for (const auto& [k, h] : a.functions)
        {
            if (!b.functions.count(k))
            {
                funcs.push_back(k);
            }
        }
        if (!funcs.empty())
        {
            return {"dependency-change", {{"functions", funcs}}};
        }
        return {"unknown", {{"why", "kernels, options and functions recorded identical"}}};
    }

    void diagnose(report& r)
    {
        r.findings.clear();
        if (!r.result.valid)
        {
            return;
        }
        auto good = good_samples(r);
        if (good.empty())
        {
            return;
        }
        // Compilation is not where the time goes: say so first and stop.
        for (const auto& fl : r.result.flags)
        {
            if (fl.id == "COMPILE_SMALL_SHARE")
            {
                finding f = make_finding("compile-small-share", "", "");
                f.kind = "diagnosis";
                f.evidence = fl.message;
                f.cause = {{"compile_share", r.result.compile_share.median.value_or(0.0)},
                           {"compile_elapsed_ms", r.result.compile_elapsed_ms.median.value_or(0.0)},
                           {"cold_wall_ms", r.result.cold_wall_ms.median.value_or(0.0)}};
                f.recommendation = "Profile the rest of the program first (a Python profiler, Nsight Systems): cutting "
                                   "compilation cannot save more than " + format_ms(std::max(0.0, r.result.compile_elapsed_ms.median.value_or(0.0)))
                                   + " here.";
                r.findings.push_back(f);
                return;
            }
        }
        std::map<std::string, finding_acc> churn;
        churn_findings(good, churn);
        std::vector<finding> out;
        for (auto& [k, a] : churn)
        {
            out.push_back(a.f);
        }
        same_hash_findings(good, out);
        cache_findings(good, out);
        ptx_load_findings(good, out);
        option_arrival_findings(good, out);
        block_dim_findings(r, good, out);
        granularity_findings(good, out);
        advisories(r, good, out);
        std::stable_sort(out.begin(),
                         out.end(),
                         [](const finding& a, const finding& b)
                         {
                             // by ms at stake; unestimated last; a diagnosis before an advisory on a tie
                             const double sa = a.savings_ms.value_or(-1.0);
                             const double sb = b.savings_ms.value_or(-1.0);
                             if (sa != sb)
                             {
                                 return sa > sb;
                             }
                             return a.kind == "diagnosis" && b.kind != "diagnosis";
                         });
        r.findings = std::move(out);
    }
}
