// Two findings that belong to test suites (the shim attributes each load to the test that was
// running):
// - repeated-across-workers: the same identity compiled by more than one process of one pass
//   (pytest-xdist workers, a runner's subprocesses): each worker paid for a build another had
//   made. Its headline is on the suite's wall, an upper bound (the longest repeated copy: each
//   copy sat on its own worker's wall, and the suite's wall is its slowest worker's); the CPU
//   time of all the copies is beside it, never quoted as wall;
// - same-code-other-name: identities with the same hash under different module names (a module
//   made per parametrisation whose code does not change): the same build paid once per name;
// - many-tests-one-module: one module holding the kernels of many tests, built whole at the first
//   test's launch: every test waits for all of it, and its build cannot overlap on several CPUs.
#include <algorithm>
#include <map>
#include <set>

#include "detector.hpp"
#include "xwarp/analysis/stats.hpp"
#include "xwarp/analysis/suite.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp::detect
{
    namespace
    {
        // The compiled loads of a pass grouped by `key_fn`, those groups with more than one
        // member after `distinct` keeps one load per distinct value it gives.
        template <typename Key, typename Distinct>
        std::map<Key, std::vector<const module_load*>> repeated(const run_result& cold, Key (*key_fn)(const module_load&),
                                                                Distinct distinct)
        {
            std::map<Key, std::vector<const module_load*>> groups;
            for (const auto& l : cold.module_loads)
            {
                if (l.status == load_status::compiled && !l.hash.empty())
                {
                    groups[key_fn(l)].push_back(&l);
                }
            }
            std::map<Key, std::vector<const module_load*>> out;
            for (auto& [k, loads] : groups)
            {
                std::set<decltype(distinct(*loads.front()))> seen;
                std::vector<const module_load*> kept;
                for (const auto* l : loads)
                {
                    if (seen.insert(distinct(*l)).second)
                    {
                        kept.push_back(l);
                    }
                }
                if (kept.size() > 1)
                {
                    out.emplace(k, std::move(kept));
                }
            }
            return out;
        }

        using identity_id = std::tuple<std::string, std::string, std::string, int>;
        identity_id identity_of(const module_load& l)
        {
            return {l.module.str(), l.hash.str(), l.device.str(), l.block_dim.value_or(-1)};
        }
        using code_id = std::tuple<std::string, std::string, int>;
        code_id code_of(const module_load& l)
        {
            return {l.hash.str(), l.device.str(), l.block_dim.value_or(-1)};
        }

        // Per repeated group, each good sample's time of the copies after the first, on two
        // clocks: Warp's timers (the loading threads' wall: with more workers than CPUs, mostly
        // waiting for one) and the loading threads' CPU time (absent where a copy has none).
        struct copies_ms
        {
            std::vector<double> warp;
            std::vector<double> cpu;
            bool cpu_known = true;
        };

        template <typename Key, typename Distinct>
        std::map<Key, copies_ms> repeated_ms(const context& ctx, Key (*key_fn)(const module_load&), Distinct distinct)
        {
            std::map<Key, copies_ms> extra;
            for (const auto* smp : ctx.good)
            {
                for (const auto& [k, loads] : repeated(smp->cold, key_fn, distinct))
                {
                    double warp_ms = 0.0;
                    double cpu_ms = 0.0;
                    copies_ms& into = extra[k];
                    for (std::size_t i = 1; i < loads.size(); ++i)
                    {
                        warp_ms += loads[i]->work_ms();
                        into.cpu_known = into.cpu_known && loads[i]->cpu_ms.has_value();
                        cpu_ms += loads[i]->cpu_ms.value_or(0.0);
                    }
                    into.warp.push_back(warp_ms);
                    into.cpu.push_back(cpu_ms);
                }
            }
            return extra;
        }

        // "took W on Warp's timers, of which C on a CPU": each figure with its clock.
        std::string copies_words(const copies_ms& m)
        {
            const double warp_ms = median(m.warp).value_or(0.0);
            std::string words = format_ms(warp_ms) + " on Warp's timers (the loading threads' wall)";
            if (m.cpu_known)
            {
                const double cpu_ms = median(m.cpu).value_or(0.0);
                words += ", " + format_ms(cpu_ms) + " of it on a CPU (the rest waiting for one, or for the disk)";
            }
            else
            {
                words += "; no CPU time was recorded for them (Warp's log lines carry none)";
            }
            return words;
        }

        // Where the module was created (the shim's module record: the first user frame), so that a
        // library's module is marked as library code like any finding located in it.
        void locate_module(finding& f, const run_result& cold, const std::string& module)
        {
            for (const auto& p : cold.processes)
            {
                for (const auto& m : p.modules_created)
                {
                    if (m.module == module && m.file)
                    {
                        add_location(f, m.file, m.line, "module " + module + " created here");
                        return;
                    }
                }
            }
        }

        std::string tests_of(const std::vector<const module_load*>& loads)
        {
            std::vector<std::string> names;
            for (const auto* l : loads)
            {
                names.push_back(l->test.empty() ? std::string("collection / set-up") : l->test.str());
            }
            return join(names, ", ");
        }

        void detect_workers(const context& ctx, sink& out)
        {
            if (!is_suite(ctx.first_cold()))
            {
                return;
            }
            const auto by_pid = [](const module_load& l) { return l.pid; };
            auto copies = repeated_ms(ctx, &identity_of, by_pid);
            // on the wall: each sample's longest copy after the first (the copies ran on
            // different workers' walls, side by side)
            std::map<identity_id, std::vector<double>> wall;
            for (const auto* smp : ctx.good)
            {
                for (const auto& [k, loads] : repeated(smp->cold, &identity_of, by_pid))
                {
                    double longest = 0.0;
                    for (std::size_t i = 1; i < loads.size(); ++i)
                    {
                        longest = std::max(longest, loads[i]->work_ms());
                    }
                    wall[k].push_back(longest);
                }
            }
            for (const auto& [k, loads] : repeated(ctx.first_cold(), &identity_of, by_pid))
            {
                finding f = make_finding("repeated-across-workers", std::get<0>(k), std::get<2>(k));
                const copies_ms& m = copies[k];
                const double wall_ms = median(wall[k]).value_or(0.0);
                f.evidence = "identity " + identity_name(*loads.front()) + " was compiled by " + std::to_string(loads.size())
                             + " processes of the suite (tests " + tests_of(loads) + "): every worker after the first paid "
                             + "for a build already made. On the suite's wall that is at most " + format_ms(wall_ms)
                             + " (the longest repeated copy on Warp's timers: the copies ran side by side on their own "
                               "workers); the copies after the first took " + copies_words(m);
                f.cause = json_text(nlohmann::json{{"hash", std::get<1>(k).substr(0, 7)},
                                                   {"processes", loads.size()},
                                                   {"wall_bound_ms", wall_ms},
                                                   {"warp_ms", median(m.warp).value_or(0.0)},
                                                   {"cpu_ms", m.cpu_known ? nlohmann::json(median(m.cpu).value_or(0.0))
                                                                          : nlohmann::json()}});
                f.savings_ms = wall_ms;
                locate_module(f, ctx.first_cold(), std::get<0>(k));
                f.lever = "xdist-loadfile";
                f.recommendation = "What removes the repeats, each to be measured on the suite's wall before it is kept: a "
                                   "kernel cache kept between CI runs (the workers then load it; references/ci.md), "
                                   "pytest-xdist's --dist loadfile (a file's tests on one worker: --whatif xdist-loadfile "
                                   "replays it on the suite's wall), or a warm-up step before the workers start "
                                   "(warp-probe warmup --verify measures it). A warm-up step pays only when the suite's "
                                   "workers are fewer than the modules they build: on as many CPUs as modules the "
                                   "workers already build side by side, and the step adds its own wall.";
                out.findings.push_back(std::move(f));
            }
        }

        void detect_names(const context& ctx, sink& out)
        {
            if (!is_suite(ctx.first_cold()))
            {
                return;
            }
            const auto by_name = [](const module_load& l) { return l.module.str(); };
            auto extra = repeated_ms(ctx, &code_of, by_name);
            for (const auto& [k, loads] : repeated(ctx.first_cold(), &code_of, by_name))
            {
                std::vector<std::string> names;
                for (const auto* l : loads)
                {
                    names.push_back(l->module.str());
                }
                finding f = make_finding("same-code-other-name", join(names, ", "), std::get<1>(k));
                f.evidence = std::to_string(loads.size()) + " modules with the same code (hash " + std::get<0>(k).substr(0, 7)
                             + ") were each built under a name of their own (" + join(names, ", ") + "; tests "
                             + tests_of(loads) + "): the builds after the first took " + copies_words(extra[k]);
                f.cause = json_text(nlohmann::json{{"hash", std::get<0>(k).substr(0, 7)}, {"modules", names}});
                f.savings_ms = median(extra[k].warp);
                locate_module(f, ctx.first_cold(), names.front());
                f.recommendation = "Give the kernels one module whatever the parametrisation (define them once at module "
                                   "scope, or name the module after what changes the code, not after the test's "
                                   "parameters): the same build is then paid once.";
                out.findings.push_back(std::move(f));
            }
        }

        // A module whose kernels at least this many tests launched, with at least two kernels.
        constexpr std::size_t many_tests = 3;

        void detect_one_module(const context& ctx, sink& out)
        {
            const run_result& cold = ctx.first_cold();
            if (!is_suite(cold))
            {
                return;
            }
            const int cpus = std::max(1, ctx.r.env.cpu_count);
            const auto launched_by = tests_launching(cold);
            std::set<std::pair<std::string, std::string>> seen;
            for (const auto& l : cold.module_loads)
            {
                const auto key = std::make_pair(l.module.str(), l.device.str());
                const std::size_t kernels = l.snapshot ? l.snapshot->kernels.size() : 0;
                const auto tests = launched_by.find(key);
                if (l.status != load_status::compiled || kernels < 2 || tests == launched_by.end()
                    || tests->second.size() < many_tests || !seen.insert(key).second)
                {
                    continue;
                }
                const double ms = l.work_ms();
                const double ways = static_cast<double>(std::min<std::size_t>(kernels, static_cast<std::size_t>(cpus)));
                std::vector<std::string> first(tests->second.begin(),
                                               tests->second.begin() + std::min<std::size_t>(5, tests->second.size()));
                finding f = make_finding("many-tests-one-module", l.module.str(), l.device.str());
                f.evidence = "module " + l.module.str() + " holds " + std::to_string(kernels) + " kernels that "
                             + std::to_string(tests->second.size()) + " tests launch (" + join(first, ", ")
                             + (tests->second.size() > first.size() ? ", ..." : "") + "); its build (" + format_ms(ms)
                             + ") was paid whole at the first launch, by " + (l.test.empty() ? std::string("collection / set-up") : l.test.str())
                             + (ways > 1.0 ? "; split in " + format_fixed(ways, 0) + " modules built at once on "
                                                 + std::to_string(cpus) + " CPUs, its wall could fall towards "
                                                 + format_ms(ms / ways) + " (an upper bound: each module pays Warp's "
                                                   "fixed build cost again; no replay measures a split, which changes "
                                                   "the program's modules)"
                                           : "; this machine has one CPU: a split would not overlap");
                f.cause = json_text(nlohmann::json{{"kernels", kernels},
                                                   {"tests", tests->second.size()},
                                                   {"cpus", cpus},
                                                   {"build_ms", ms},
                                                   {"split_wall_ms", ms / ways}});
                if (ways > 1.0)
                {
                    f.savings_ms = ms - ms / ways;
                }
                locate_module(f, cold, l.module.str());
                f.recommendation = "Either keep the shared module and build it once before the suite (warp-probe warmup on "
                                   "this report, --workers N), or split the test kernels into modules by the tests that use "
                                   "them (a Python module per feature, or module=\"name\"), so that a test waits only for "
                                   "its own and a warm-up builds them in parallel. Verify with warmup --verify, or by "
                                   "measuring the suite again.";
                out.findings.push_back(std::move(f));
            }
        }
    }

    extern const detector many_tests_one_module{
        {"many-tests-one-module", "one module holds the kernels of many tests", finding_kind::advisory, "many-tests-one-module", "",
         "which module a kernel belongs to is the program's source; no run-time switch splits one", "suite_builds.cpp"},
        &detect_one_module};

    extern const detector repeated_across_workers{
        {"repeated-across-workers", "the same identity compiled by several processes of a test suite", finding_kind::diagnosis,
         "repeated-across-workers", "", "the workers' builds are the runner's: a warm-up before they start removes them",
         "suite_builds.cpp"},
        &detect_workers};

    extern const detector same_code_other_name{
        {"same-code-other-name", "one module's code built under several names", finding_kind::diagnosis, "same-code-other-name", "",
         "the names come from the program's code: one module for the kernels is a source change", "suite_builds.cpp"},
        &detect_names};
}
