#include "xwarp/analysis/compare.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/stats.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/model/format.hpp"
#include "xwarp/model/release.hpp"
#include "xwarp/model/tuple_hash.hpp"

namespace xwarp
{
    namespace
    {

        std::vector<std::string> devices_of(const run_result& run)
        {
            std::set<std::string> d;
            for (const auto& l : run.module_loads)
            {
                d.insert(l.device);
            }
            for (const auto& l : run.launches)
            {
                d.insert(l.device);
            }
            return {d.begin(), d.end()};
        }

        compare_side side_of(const report& r, const std::string& name)
        {
            compare_side s;
            s.path = name;
            s.label = r.label;
            s.command = r.command;
            s.warp_version = r.env.warp_version;
            s.samples_ok = r.result.samples_ok;
            s.samples_total = r.result.samples_total;
            s.status = r.status;
            if (const sample* g = r.first_good())
            {
                s.devices = devices_of(g->cold);
            }
            return s;
        }

        bool looks_like_script(const std::string& tok)
        {
            auto ends = [&](const char* suf)
            {
                std::string s(suf);
                return tok.size() >= s.size() && tok.compare(tok.size() - s.size(), s.size(), s) == 0;
            };
            return tok.find('/') != std::string::npos || ends(".py") || ends(".sh") || ends(".ipynb");
        }

        // ------------------------------------------------------------------------------------
        // Workload: the ordered launch signatures, kernel and module names left out (moving a
        // closure to module scope renames it; that is allowed and listed).

        // Whether two launch runs have the same signature: dims, device, dtypes, block_dim and
        // adjoint flag. Dims compare as their compact JSON text, as they are held: 1 and 1.0, 0.0
        // and -0.0 are equal numbers but not the same text, and without a float JSON equality
        // is text equality. Runs once per launch run of each side.
        bool same_signature(const launch_record& x, const launch_record& y)
        {
            return x.device == y.device && x.block_dim == y.block_dim && x.adjoint == y.adjoint && x.dtypes == y.dtypes
                   && x.dim.text() == y.dim.text();
        }

        // What differs between two launches' signatures, in words ("block_dim 64 -> 1"), so a
        // refused comparison says what the edit changed, not only where.
        std::string signature_change(const launch_record& x, const launch_record& y)
        {
            std::vector<std::string> parts;
            if (x.kernel != y.kernel)
            {
                parts.push_back("kernel " + x.kernel + " -> " + y.kernel);
            }
            if (x.block_dim != y.block_dim)
            {
                parts.push_back("block_dim " + std::to_string(x.block_dim) + " -> " + std::to_string(y.block_dim));
            }
            if (x.device != y.device)
            {
                parts.push_back("device " + x.device.str() + " -> " + y.device.str());
            }
            if (x.dim.text() != y.dim.text())
            {
                parts.push_back("dim " + x.dim.text() + " -> " + y.dim.text());
            }
            if (x.adjoint != y.adjoint)
            {
                parts.push_back(std::string("adjoint ") + (x.adjoint ? "on -> off" : "off -> on"));
            }
            if (x.dtypes != y.dtypes)
            {
                parts.push_back("argument types differ");
            }
            std::string out;
            for (const auto& part : parts)
            {
                out += (out.empty() ? "" : ", ") + part;
            }
            return out;
        }

        // The record covering launch number `index` (0-based), if stored.
        std::optional<launch_record> record_at(const std::vector<launch_record>& launches, std::int64_t index)
        {
            std::int64_t pos = 0;
            for (const auto& l : launches)
            {
                if (index < pos + l.count)
                {
                    launch_record r = l;
                    r.count = 1;
                    return r;
                }
                pos += l.count;
            }
            return std::nullopt;
        }

        bool launch_hook_everywhere(const run_result& run)
        {
            if (run.processes.empty())
            {
                return false;
            }
            return std::all_of(run.processes.begin(),
                               run.processes.end(),
                               [](const process_record& p) { return field_or(p.hooks, "launch", false); });
        }

        // Launches recorded by more than one process: a test suite's workers, whose launches
        // interleave in no fixed order from run to run.
        bool several_processes(const run_result& r)
        {
            std::set<std::int64_t> pids;
            for (const auto& l : r.launches)
            {
                pids.insert(l.pid);
                if (pids.size() > 1)
                {
                    return true;
                }
            }
            return false;
        }

        std::string launch_key(const launch_record& l)
        {
            std::string key = l.kernel + '\x1f' + l.device.str() + '\x1f' + std::to_string(l.block_dim) + '\x1f'
                              + (l.adjoint ? "1" : "0") + '\x1f' + l.dim.text();
            for (const auto& t : l.dtypes)
            {
                key += '\x1f' + t.str();
            }
            return key;
        }

        // Several processes: the same launches, each kernel with the same signatures as often,
        // in whatever order the processes ran them.
        workload_check same_launches_any_order(const run_result& b, const run_result& a, workload_check& w)
        {
            if (b.launches_truncated || a.launches_truncated)
            {
                w.status = workload_status::unverified;
                w.reason = "the suite's launches were stored in part, and its processes run them in no fixed order";
                return w;
            }
            std::map<std::string, std::pair<std::int64_t, std::int64_t>> by_key;
            std::map<std::string, std::pair<std::int64_t, std::int64_t>> by_kernel;
            for (const auto& l : b.launches)
            {
                by_key[launch_key(l)].first += l.count;
                by_kernel[l.kernel].first += l.count;
            }
            for (const auto& l : a.launches)
            {
                by_key[launch_key(l)].second += l.count;
                by_kernel[l.kernel].second += l.count;
            }
            const bool same = std::all_of(by_key.begin(), by_key.end(), [](const auto& kv) { return kv.second.first == kv.second.second; });
            if (same && b.launch_total == a.launch_total)
            {
                w.status = workload_status::same;
                w.reason = std::to_string(a.launch_total) + " launches over several processes, each kernel as often with the "
                           "same dims, devices, dtypes, block_dims and adjoint flags (a suite's processes run them in no "
                           "fixed order)";
                return w;
            }
            w.status = workload_status::changed;
            w.reason = "the launches of the suite's processes differ (" + std::to_string(b.launch_total) + " before, "
                       + std::to_string(a.launch_total) + " after, counted per kernel and signature)";
            for (const auto& [k, c] : by_kernel)
            {
                if (c.first != c.second)
                {
                    w.moved_counts.push_back({k, c.first, c.second});
                }
            }
            return w;
        }

        // pytest's closing line ("12 passed, 1 skipped in 3.40s"): the count of passed tests, or
        // nullopt when the output does not end with one.
        std::optional<long> passed_tests(const run_result& r)
        {
            static const std::regex line(R"((\d+) passed)");
            std::optional<long> passed;
            const std::string& out = r.stdout_tail;
            const auto last = out.find_last_not_of(" \n\r\t");
            if (last == std::string::npos)
            {
                return passed;
            }
            const auto start = out.rfind('\n', last);
            const std::string closing = out.substr(start == std::string::npos ? 0 : start + 1, last + 1);
            std::smatch m;
            if (std::regex_search(closing, m, line))
            {
                passed = std::stol(m[1].str());
            }
            return passed;
        }

        // A change to how a suite runs (its workers, how they draw tests) changes the launches each
        // worker makes outside any test (a session fixture runs once per worker): what must stay
        // the same is the suite's tests, each sample passing as many, with no test failing.
        void suite_workload(const report& before, const report& after, workload_check& w)
        {
            if (w.status == workload_status::same)
            {
                return;
            }
            std::set<long> counts;
            for (const auto* side : {&before, &after})
            {
                for (const auto& s : side->samples)
                {
                    if (!s.ok())
                    {
                        continue;
                    }
                    const auto n = passed_tests(s.cold);
                    if (!n || s.cold.exit_code != 0 || !s.cold.failed_tests.empty())
                    {
                        w.status = workload_status::unverified;
                        w.reason = "a suite lever's launches differ by the workers' set-up, and pytest's closing line "
                                   "(N passed) was not found with every test passing: " + w.reason;
                        return;
                    }
                    counts.insert(*n);
                }
            }
            if (counts.size() == 1)
            {
                w.status = workload_status::same;
                w.reason = "the suite passed the same " + std::to_string(*counts.begin()) + " tests in every sample on both "
                           "sides (pytest's closing line); the launches differ only as the workers' set-up does: "
                           + w.reason;
                w.moved_counts.clear();
            }
            else
            {
                w.status = workload_status::changed;
                w.reason = "the suite passed a different number of tests on the two sides (pytest's closing lines): "
                           + w.reason;
            }
        }

        workload_check check_workload(const run_result& b, const run_result& a)
        {
            workload_check w;
            w.before_launches = b.launch_total;
            w.after_launches = a.launch_total;
            if (!launch_hook_everywhere(b) || !launch_hook_everywhere(a))
            {
                w.status = workload_status::unverified;
                w.reason = std::string("the launch hook was not installed in every Warp process of the ")
                           + (!launch_hook_everywhere(b) ? "before" : "after") + " run";
                return w;
            }
            if (b.launch_total == 0 || a.launch_total == 0)
            {
                w.status = workload_status::unverified;
                w.reason = b.launch_total == 0 && a.launch_total == 0
                               ? "no launches were recorded on either side"
                               : std::string("no launches were recorded in the ")
                                     + (b.launch_total == 0 ? "before" : "after") + " run";
                return w;
            }

            if (several_processes(b) || several_processes(a))
            {
                return same_launches_any_order(b, a, w);
            }
            // Renames and divergence, walking both flattened sequences run by run.
            std::set<std::pair<std::string, std::string>> renames;
            std::map<std::string, std::string> rename_map;
            std::size_t ib = 0;
            std::size_t ia = 0;
            std::int64_t left_b = b.launches.empty() ? 0 : b.launches[0].count;
            std::int64_t left_a = a.launches.empty() ? 0 : a.launches[0].count;
            std::int64_t pos = 0;
            std::optional<std::int64_t> diverge;
            while (ib < b.launches.size() && ia < a.launches.size())
            {
                const auto& lb = b.launches[ib];
                const auto& la = a.launches[ia];
                if (!same_signature(lb, la))
                {
                    diverge = pos;
                    break;
                }
                if (lb.kernel != la.kernel)
                {
                    renames.insert({lb.kernel, la.kernel});
                    rename_map[lb.kernel] = la.kernel;
                }
                std::int64_t step = std::min(left_b, left_a);
                pos += step;
                left_b -= step;
                left_a -= step;
                if (left_b == 0 && ++ib < b.launches.size())
                {
                    left_b = b.launches[ib].count;
                }
                if (left_a == 0 && ++ia < a.launches.size())
                {
                    left_a = a.launches[ia].count;
                }
            }
            const bool truncated = b.launches_truncated || a.launches_truncated;
            if (!diverge)
            {
                const bool stored_ends_differ = (ib < b.launches.size()) != (ia < a.launches.size());
                if (b.launch_total != a.launch_total || (!truncated && stored_ends_differ))
                {
                    diverge = pos;
                }
            }
            for (const auto& [from, to] : renames)
            {
                w.renames.push_back({from, to});
            }
            if (!diverge)
            {
                w.status = workload_status::same;
                w.reason = std::to_string(a.launch_total) + " launches in the same order with the same dims, devices, "
                           "dtypes, block_dims and adjoint flags"
                           + std::string(truncated ? " (compared up to the stored prefix; totals equal)" : "");
                return w;
            }
            w.status = workload_status::changed;
            launch_divergence d;
            d.index = *diverge;
            d.before = record_at(b.launches, *diverge);
            d.after = record_at(a.launches, *diverge);
            w.first_divergence = d;
            w.reason = "the launch sequences part at launch #" + std::to_string(*diverge + 1) + " ("
                       + std::to_string(b.launch_total) + " launches before, " + std::to_string(a.launch_total)
                       + " after)";
            if (d.before && d.after)
            {
                if (const std::string change = signature_change(*d.before, *d.after); !change.empty())
                {
                    w.reason += ": " + d.before->kernel + " launched with " + change;
                }
            }
            std::map<std::string, std::pair<std::int64_t, std::int64_t>> counts;
            for (const auto& l : b.launches)
            {
                auto it = rename_map.find(l.kernel);
                counts[it == rename_map.end() ? l.kernel : it->second].first += l.count;
            }
            for (const auto& l : a.launches)
            {
                counts[l.kernel].second += l.count;
            }
            for (const auto& [k, c] : counts)
            {
                if (c.first != c.second)
                {
                    w.moved_counts.push_back({k, c.first, c.second});
                }
            }
            return w;
        }

        // ------------------------------------------------------------------------------------
        // Clocks

        // Every sample of one side beyond every sample of the other, in the direction of the change.
        bool separated(const std::vector<double>& before, const std::vector<double>& after, bool fell)
        {
            if (before.empty() || after.empty())
            {
                return false;
            }
            const auto [b_min, b_max] = std::minmax_element(before.begin(), before.end());
            const auto [a_min, a_max] = std::minmax_element(after.begin(), after.end());
            return fell ? *a_max < *b_min : *a_min > *b_max;
        }

        clock_judgement judge(const std::string& name, const stat& b, const stat& a)
        {
            clock_judgement c;
            c.clock = name;
            c.n_before = static_cast<int>(b.values.size());
            c.n_after = static_cast<int>(a.values.size());
            c.before_median = b.median;
            c.after_median = a.median;
            c.before_mad = b.mad;
            if (!b.median || !a.median)
            {
                c.outcome = "n/a";
                c.test = "none";
                return c;
            }
            const double delta = *a.median - *b.median;
            c.delta_ms = delta;
            if (*b.median != 0.0)
            {
                c.delta_pct = 100.0 * delta / *b.median;
            }
            const double band = std::max(noise_floor_fraction * std::fabs(*b.median), noise_mad_factor * b.mad.value_or(0.0));
            c.band_ms = band;
            const bool ranked = b.values.size() >= rank_test_min_samples && a.values.size() >= rank_test_min_samples;
            if (ranked)
            {
                auto mw = mann_whitney_u(b.values, a.values);
                c.p_value = mw.p_value;
                c.test = mw.exact ? "mann-whitney-exact" : "mann-whitney-normal";
            }
            else
            {
                c.test = "none (fewer than 5 samples a side)";
            }
            if (std::fabs(delta) <= band)
            {
                c.outcome = "within-noise";
            }
            else if (ranked && *c.p_value >= significance_level)
            {
                c.outcome = "not-significant";
            }
            else if (!ranked && !separated(b.values, a.values, delta < 0))
            {
                // too few samples for the rank test: only sides that do not overlap at all are
                // credited, so that one disturbed sample (a stray build) decides nothing
                c.outcome = "overlapping";
            }
            else
            {
                c.outcome = delta < 0 ? "improved" : "regressed";
            }
            // Samples a side for a rank test to detect this difference: the normal-theory size
            // for 80% power at the 5% level, inflated by pi/3 (the rank test's efficiency).
            // The spread is the larger of the two sides' standard deviations and scaled MADs,
            // so a lumpy sample is not mistaken for a tight one.
            if (c.outcome == "not-significant" || c.outcome == "overlapping" || (!ranked && c.outcome != "within-noise"))
            {
                auto stdev = [](const std::vector<double>& v)
                {
                    if (v.size() < 2)
                    {
                        return 0.0;
                    }
                    double m = 0.0;
                    for (double x : v)
                    {
                        m += x;
                    }
                    m /= static_cast<double>(v.size());
                    double ss = 0.0;
                    for (double x : v)
                    {
                        ss += (x - m) * (x - m);
                    }
                    return std::sqrt(ss / static_cast<double>(v.size() - 1));
                };
                const double sigma = std::max({1.4826 * b.mad.value_or(0.0),
                                               1.4826 * a.mad.value_or(0.0),
                                               stdev(b.values),
                                               stdev(a.values),
                                               1e-9});
                const double n = 2.0 * std::pow((1.96 + 0.8416) * sigma / std::fabs(delta), 2.0) * (M_PI / 3.0);
                c.samples_needed = std::max(static_cast<int>(rank_test_min_samples), static_cast<int>(std::ceil(n)));
            }
            return c;
        }

        // A pass's identities, sorted and each once (views of its loads' strings).
        std::vector<identity_key> identities_of(const run_result& run)
        {
            std::vector<identity_key> ids;
            ids.reserve(run.module_loads.size());
            for (const auto& l : run.module_loads)
            {
                ids.push_back(key_of(l));
            }
            std::sort(ids.begin(), ids.end());
            ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
            return ids;
        }

        // Whether two passes loaded the same identities. Two runs of one program mostly load
        // them in the same order: compared load by load first, sorted only when that differs
        // (sorting 100,000 identities' strings on both sides was a quarter of the comparison).
        bool same_identities(const run_result& b, const run_result& a)
        {
            const auto same_key = [](const module_load& x, const module_load& y) { return key_of(x) == key_of(y); };
            return std::equal(b.module_loads.begin(), b.module_loads.end(), a.module_loads.begin(), a.module_loads.end(), same_key)
                   || identities_of(b) == identities_of(a);
        }

        // Per (module, device), its hashes in load order, each once, as the first load under
        // each; sorted by (module, device). Views of the pass's strings and its loads: a tree of
        // copies per load was most of compare's own time on 100,000 identities.
        using module_device_view = std::pair<std::string_view, std::string_view>;
        using loads_by_hash = std::vector<const module_load*>;
        std::vector<std::pair<module_device_view, loads_by_hash>> hashes_by_module(const run_result& run)
        {
            std::vector<std::pair<module_device_view, loads_by_hash>> modules;
            std::unordered_map<module_device_view, std::size_t, tuple_hash> index;
            // sized once: grown by rehashing, a table of 50,000 modules was walked at every growth
            index.reserve(run.module_loads.size());
            for (const auto& l : run.module_loads)
            {
                const auto [it, added] = index.try_emplace(module_device_view(l.module, l.device), modules.size());
                if (added)
                {
                    modules.push_back({it->first, {}});
                }
                auto& v = modules[it->second].second;
                if (std::none_of(v.begin(), v.end(), [&](const module_load* first) { return first->hash == l.hash; }))
                {
                    v.push_back(&l);
                }
            }
            std::sort(modules.begin(), modules.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
            return modules;
        }

        std::optional<double> count_if_loads(const run_result& run, load_status st)
        {
            return static_cast<double>(std::count_if(
                run.module_loads.begin(), run.module_loads.end(), [&](const module_load& l) { return l.status == st; }));
        }

        std::vector<option_check> check_options(const run_result& b, const run_result& a,
                                                const std::vector<hash_receipt>& receipts)
        {
            std::vector<option_check> out;
            std::set<std::pair<std::string, std::string>> before_sets;
            for (const auto& p : b.processes)
            {
                for (const auto& c : p.config_sets)
                {
                    before_sets.insert({c.key, c.new_value.dump()});
                }
            }
            std::map<std::string, const config_set_event*> intended;  // last assignment wins
            for (const auto& p : a.processes)
            {
                for (const auto& c : p.config_sets)
                {
                    if (!before_sets.count({c.key, c.new_value.dump()}))
                    {
                        intended[c.key] = &c;
                    }
                }
            }
            if (intended.empty())
            {
                return out;  // no option set on the after side alone: nothing can have missed its module
            }
            std::map<std::pair<std::string, std::string>, bool> changed;
            for (const auto& r : receipts)
            {
                changed[{r.module, r.device}] = r.changed;
            }
            std::set<std::pair<std::string, std::string>> reported;
            for (const auto& l : a.module_loads)
            {
                if (!l.snapshot)
                {
                    continue;
                }
                for (const auto& [key, ev] : intended)
                {
                    auto opt = l.snapshot->options->find(key);
                    if (opt == l.snapshot->options->end() || *opt == ev->new_value)
                    {
                        continue;
                    }
                    if (changed[{l.module, l.device}] || reported.count({key, l.module}))
                    {
                        continue;
                    }
                    reported.insert({key, l.module});
                    option_check oc;
                    oc.option = key;
                    oc.module = l.module;
                    oc.intended = ev->new_value;
                    oc.module_value = *opt;
                    if (ev->file && ev->line)
                    {
                        oc.set_at = source_location{*ev->file, *ev->line};
                    }
                    oc.message = "wp.config." + key + " = " + ev->new_value.dump() + " never reached module "
                                 + l.module + ": it still has " + key + "=" + opt->dump()
                                 + " and its hash did not move. The module copied the global when it was created "
                                   "(at import); set it before that import, or set the module's own option "
                                   "before its first load";
                    out.push_back(oc);
                }
            }
            return out;
        }

    }

    std::string settled_because(const comparison& c, int max_samples)
    {
        if (c.verdict == verdict::invalid || c.verdict == verdict::unverified || c.verdict == verdict::not_comparable)
        {
            return "the verdict is " + word_of(c.verdict) + ": more samples cannot change it";
        }
        const clock_judgement* d = nullptr;
        for (const auto& k : c.clocks)
        {
            if (k.clock == c.decided_by)
            {
                d = &k;
            }
        }
        if (!d)
        {
            return "no clock could be judged: more samples cannot change that";
        }
        const int n = std::min(d->n_before, d->n_after);
        const bool ranked = n >= static_cast<int>(rank_test_min_samples);
        if ((d->outcome == "improved" || d->outcome == "regressed") && ranked && d->p_value)
        {
            return "the rank test decided (p = " + format_fixed(*d->p_value, 4) + " with " + std::to_string(d->n_before)
                   + " and " + std::to_string(d->n_after) + " samples)";
        }
        if (d->outcome == "within-noise" && ranked)
        {
            return "the change is inside the noise band with " + std::to_string(n)
                   + " samples a side, and the band does not shrink with more";
        }
        if (d->outcome == "not-significant" && d->samples_needed && *d->samples_needed > max_samples)
        {
            return "about " + std::to_string(*d->samples_needed) + " samples a side would settle it, more than "
                   + std::to_string(max_samples);
        }
        return "";
    }

    void require_comparable(const report& r, const std::string& name)
    {
        if (!r.result.valid)
        {
            throw compare_input_error(name + " at /samples: the measured run failed (expected a sample that succeeded, got none): nothing to compare");
        }
    }

    void keep_what_compare_reads(report& r)
    {
        release(r.findings);
        release(r.declined);
        summary& s = r.result;
        release(s.identities);
        release(s.rebuilt);
        release(s.modules);
        release(s.launch_kernels);
        release(s.timeline.spans);
        // Of the passes, a comparison reads the cold loads' identities, times and options and
        // the first good sample's launches: while the other side is read, the warm passes'
        // records and what the loads' content snapshots and spans hold are not kept.
        for (auto& smp : r.samples)
        {
            if (smp.warm)
            {
                release(smp.warm->module_loads);
                release(smp.warm->launches);
            }
            for (auto& l : smp.cold.module_loads)
            {
                release(l.lto);
                release(l.phases);
                if (l.snapshot)
                {
                    release(l.snapshot->kernels);
                    release(l.snapshot->functions);
                }
            }
        }
    }

    comparison compare_reports(report& before, report& after, const std::string& before_name, const std::string& after_name,
                               deciding_clock clock)
    {
        analyze(before);
        analyze(after);
        return compare_analyzed(before, after, before_name, after_name, clock);
    }

    namespace
    {
        // Same machine, same Warp, same command? The reasons they are not (empty: comparable).
        std::vector<std::string> comparability(const report& before, const report& after, comparison& c)
        {
            const auto join = [](const std::vector<std::string>& v)
            {
                std::string s;
                for (const auto& x : v)
                {
                    s += (s.empty() ? "" : ", ") + x;
                }
                return s;
            };
            std::vector<std::string> not_comparable;
            if (!before.env.warp_version.empty() && !after.env.warp_version.empty()
                && before.env.warp_version != after.env.warp_version)
            {
                not_comparable.push_back("different Warp versions: " + before.env.warp_version + " vs "
                                         + after.env.warp_version);
            }
            if (!c.before.devices.empty() && !c.after.devices.empty() && c.before.devices != c.after.devices)
            {
                not_comparable.push_back("different devices: " + join(c.before.devices) + " vs " + join(c.after.devices));
            }
            std::vector<std::string> gb, ga;
            for (const auto& g : before.env.gpus)
            {
                gb.push_back(g.name);
            }
            for (const auto& g : after.env.gpus)
            {
                ga.push_back(g.name);
            }
            if (gb != ga)
            {
                not_comparable.push_back("different GPUs on the two machines");
            }
            if (before.command == after.command)
            {
                return not_comparable;
            }
            bool scripts_only = before.command.size() == after.command.size();
            std::vector<std::string> diffs;
            for (std::size_t i = 0; scripts_only && i < before.command.size(); ++i)
            {
                if (before.command[i] != after.command[i])
                {
                    scripts_only = looks_like_script(before.command[i]) && looks_like_script(after.command[i]);
                    diffs.push_back(before.command[i] + " -> " + after.command[i]);
                }
            }
            if (scripts_only)
            {
                std::string d;
                for (const auto& x : diffs)
                {
                    d += (d.empty() ? "" : "; ") + x;
                }
                c.notes.push_back("the commands differ only in script path(s) (" + d
                                  + "): the launch workload check decides whether they do the same work");
            }
            else
            {
                not_comparable.push_back("different commands");
            }
            return not_comparable;
        }

        // Both sides' (module, device) in order, merged: each one's hashes before and after.
        template <class Hashes>
        void hash_receipts(const Hashes& hb, const Hashes& ha, comparison& c)
        {
            const auto hashes = [](const loads_by_hash* firsts)
            {
                std::vector<shared_text> v;
                if (firsts)
                {
                    v.reserve(firsts->size());
                    for (const module_load* l : *firsts)
                    {
                        v.push_back(l->hash);
                    }
                }
                return v;
            };
            const auto as_set = [](const std::vector<shared_text>& hashes)
            {
                std::vector<std::string_view> v(hashes.begin(), hashes.end());
                std::sort(v.begin(), v.end());
                return v;  // each hash is once already
            };
            std::size_t ib = 0;
            std::size_t ia = 0;
            while (ib < hb.size() || ia < ha.size())
            {
                const bool take_b = ib < hb.size() && (ia >= ha.size() || !(ha[ia].first < hb[ib].first));
                const bool take_a = ia < ha.size() && (ib >= hb.size() || !(hb[ib].first < ha[ia].first));
                const module_load& first = *(take_b ? hb[ib].second : ha[ia].second).front();
                hash_receipt r;
                r.module = first.module;
                r.device = first.device;
                r.before = hashes(take_b ? &hb[ib].second : nullptr);
                r.after = hashes(take_a ? &ha[ia].second : nullptr);
                // the same hashes in the same order mostly: sorted only when not
                r.changed = r.before != r.after && as_set(r.before) != as_set(r.after);
                c.receipts.push_back(std::move(r));
                ib += take_b ? 1 : 0;
                ia += take_a ? 1 : 0;
            }
        }

        // A process writes its precompiled header(s) once whatever it builds: the counts of such
        // writes per good cold pass, and the module work without them.
        std::set<int> header_writes(const report& r)
        {
            std::set<int> counts;
            for (const auto& s : r.samples)
            {
                if (s.ok())
                {
                    counts.insert(static_cast<int>(std::count_if(s.cold.module_loads.begin(), s.cold.module_loads.end(),
                                                                 [](const module_load& l) { return l.pch_ms.has_value(); })));
                }
            }
            return counts;
        }

        std::vector<double> work_without_headers(const report& r)
        {
            std::vector<double> v;
            for (const auto& s : r.samples)
            {
                if (s.ok())
                {
                    double t = 0.0;
                    for (const auto& l : s.cold.module_loads)
                    {
                        t += l.work_ms() - l.pch_ms.value_or(0.0);
                    }
                    v.push_back(t);
                }
            }
            return v;
        }

        // "the after side's warm passes (1 of 2)" when some but not all of a side's warm passes
        // compiled: a build in one pass is a stray, not a cache that is never reused; "" else.
        std::string stray_warm_builds(const report& r, const std::string& side)
        {
            int compiled = 0;
            int passes = 0;
            for (const auto& s : r.samples)
            {
                if (!s.ok() || !s.warm)
                {
                    continue;
                }
                ++passes;
                compiled += std::any_of(s.warm->module_loads.begin(), s.warm->module_loads.end(),
                                        [](const module_load& l) { return l.status == load_status::compiled; })
                                ? 1
                                : 0;
            }
            return compiled > 0 && compiled < passes ? "the " + side + " side's warm passes (" + std::to_string(compiled)
                                                           + " of " + std::to_string(passes) + ")"
                                                     : std::string();
        }

        bool flagged(const report& r, const char* id)
        {
            return std::any_of(r.result.flags.begin(), r.result.flags.end(), [&](const flag& f) { return f.id == id; });
        }

        // The three clocks, and the one the verdict is decided on (with why, in judged_on). When
        // both sides wrote as many headers in every sample, module work is judged without them
        // (on the CPU they are most of the first build and most of its noise).
        std::size_t judge_clocks(const report& before, const report& after, comparison& c)
        {
            const auto headers_before = header_writes(before);
            const auto headers_after = header_writes(after);
            clock_judgement module_clock;
            if (headers_before.size() == 1 && headers_before == headers_after && *headers_before.begin() > 0)
            {
                module_clock = judge("cold_module_ms", make_stat(work_without_headers(before)),
                                     make_stat(work_without_headers(after)));
                module_clock.note = "precompiled-header writes left out: both sides wrote "
                                    + std::to_string(*headers_before.begin()) + " per cold pass";
            }
            else
            {
                module_clock = judge("cold_module_ms", before.result.cold_module_ms, after.result.cold_module_ms);
            }
            c.clocks = {module_clock,
                        judge("compile_elapsed_ms", before.result.compile_elapsed_ms, after.result.compile_elapsed_ms),
                        judge("warm_module_ms", before.result.warm_module_ms, after.result.warm_module_ms)};
            std::size_t decide = 0;
            const std::string stray = stray_warm_builds(before, "before") + stray_warm_builds(after, "after");
            if ((flagged(before, "CACHE_NOT_REUSED") || flagged(after, "CACHE_NOT_REUSED")) && stray.empty())
            {
                decide = 2;
                c.judged_on = "warm module work: a cache that was not reused shows in the warm pass, where cold wall - "
                              "warm wall hides it";
            }
            else if (!stray.empty())
            {
                const bool elapsed = c.same_structure || flagged(before, "BUILDS_OVERLAPPED") || flagged(after, "BUILDS_OVERLAPPED");
                decide = elapsed ? 1 : 0;
                c.judged_on = std::string(elapsed ? "compile elapsed" : "cold module work") + ": " + stray
                              + " compiled while the others reused the cache: a different experiment, left out of the "
                                "verdict (warm module work is not judged)";
                c.notes.push_back(stray + " compiled again: a stray build, not the lever's effect");
            }
            else if (c.same_structure)
            {
                decide = 1;
                c.judged_on = "compile elapsed: identities, hashes and generated source are identical, so a change in "
                              "summed module work is contention, not compilation";
            }
            else if (flagged(before, "BUILDS_OVERLAPPED") || flagged(after, "BUILDS_OVERLAPPED"))
            {
                decide = 1;
                c.judged_on = "compile elapsed: builds overlapped, so summed module work overstates the time waited";
            }
            else
            {
                c.judged_on = "cold module work: builds were serial and the compiled structure changed";
            }
            c.decided_by = c.clocks[decide].clock;
            return decide;
        }

        // Failed samples, failed builds and a changed workload: what makes a comparison invalid.
        std::vector<std::string> invalid_reasons(const report& before, const report& after, const comparison& c)
        {
            std::vector<std::string> invalid;
            for (const auto* side : {&before, &after})
            {
                const std::string name = side == &before ? "before" : "after";
                if (side->result.samples_ok < side->result.samples_total)
                {
                    invalid.push_back(name + ": " + std::to_string(side->result.samples_total - side->result.samples_ok)
                                      + " of " + std::to_string(side->result.samples_total) + " samples failed");
                }
                bool tests_failed = false;
                for (const auto& s : side->samples)
                {
                    const auto failed = std::find_if(s.cold.module_loads.begin(), s.cold.module_loads.end(),
                                                     [](const module_load& l) { return l.status == load_status::error; });
                    if (failed != s.cold.module_loads.end())
                    {
                        invalid.push_back(name + ": module " + failed->module + " failed to build");
                    }
                    tests_failed = tests_failed || s.cold.tests_failed || (s.warm && s.warm->tests_failed);
                }
                if (tests_failed)
                {
                    // what a failing suite built counts; how long it took does not (a failed test stops early)
                    invalid.push_back(name + ": tests failed: a timing verdict needs a passing suite");
                }
            }
            if (c.workload.status == workload_status::changed)
            {
                invalid.insert(invalid.begin(), "the workload changed: " + c.workload.reason);
            }
            return invalid;
        }

        // Why an inconclusive verdict is so: how many samples would settle it, or why more cannot.
        void inconclusive_reasons(const clock_judgement& d, comparison& c)
        {
            if (d.samples_needed)
            {
                c.reasons.push_back("about " + std::to_string(*d.samples_needed) + " samples a side would settle it (now "
                                    + std::to_string(d.n_before) + " and " + std::to_string(d.n_after) + ")");
                return;
            }
            if (d.outcome != "within-noise")
            {
                return;
            }
            // The band is max(1% of the baseline, 2 x its MAD). Neither shrinks with more samples
            // in expectation, but a MAD of two to four samples is itself noisy: one disturbed
            // sample widens it, and more samples can narrow it again.
            const int n = std::min(d.n_before, d.n_after);
            const bool band_is_spread =
                d.band_ms && d.before_median && *d.band_ms > noise_floor_fraction * std::fabs(*d.before_median);
            if (band_is_spread && n < static_cast<int>(rank_test_min_samples))
            {
                c.reasons.push_back("the band is twice the spread of only " + std::to_string(n)
                                    + " samples a side, which one disturbed sample widens: more samples (compare "
                                      "--until-settled) can narrow it");
            }
            else
            {
                c.reasons.push_back("more samples cannot credit a difference this small: the band (1% of the baseline, or "
                                    "twice its spread when larger) does not shrink with more samples; reduce the noise (a "
                                    "quieter machine) or measure a larger change");
            }
        }

        // The verdict of a valid, verified comparison: the deciding clock's outcome.
        void clock_verdict(std::size_t decide, comparison& c)
        {
            const auto& d = c.clocks[decide];
            const std::string clock_name = d.clock == "compile_elapsed_ms" ? "compile elapsed"
                                           : d.clock == "warm_module_ms"   ? "warm module work"
                                           : d.clock == "cold_wall_ms"     ? "cold wall"
                                                                           : "cold module work";
            const std::string detail = clock_name + " " + (d.delta_ms && *d.delta_ms < 0 ? "fell " : "rose ")
                                       + format_ms(std::fabs(d.delta_ms.value_or(0.0)))
                                       + (d.delta_pct ? " (" + format_fixed(*d.delta_pct, 1) + "%)" : "")
                                       + " against a noise band of " + format_ms(d.band_ms.value_or(0.0))
                                       + (d.p_value ? ", p = " + format_fixed(*d.p_value, 4) : "");
            if (d.outcome == "improved" || d.outcome == "regressed")
            {
                c.verdict = parse_member<verdict>(d.outcome);
                c.reasons.push_back(detail);
                if (std::min(d.n_before, d.n_after) < 3)
                {
                    c.indicative = true;
                    c.reasons.push_back("indicative: fewer than 3 samples a side (" + std::to_string(d.n_before) + " before, "
                                        + std::to_string(d.n_after) + " after), where a gap this size can come by chance; "
                                          "--samples 3 or --until-settled settles it");
                }
            }
            else
            {
                c.verdict = verdict::inconclusive;
                c.reasons.push_back(detail + (d.outcome == "within-noise" ? ": inside the noise band"
                                              : d.outcome == "overlapping"
                                                  ? ": beyond the band, but the two sides' samples overlap (with fewer "
                                                    "than 5 a side, only sides that do not overlap are credited)"
                                                  : ": beyond the band but not significant"));
                inconclusive_reasons(d, c);
            }
            for (std::size_t k = 0; k < c.clocks.size(); ++k)
            {
                const auto& other = c.clocks[k];
                if (k != decide && other.clock != "warm_module_ms"
                    && (other.outcome == "improved" || other.outcome == "regressed") && other.outcome != d.outcome)
                {
                    c.notes.push_back("another clock (" + other.clock + ") " + other.outcome);
                }
            }
        }
    }

    comparison compare_analyzed(const report& before, const report& after, const std::string& before_name,
                                const std::string& after_name, deciding_clock clock)
    {
        require_comparable(before, before_name);
        require_comparable(after, after_name);
        comparison c;
        c.created_utc = utc_timestamp();
        c.before = side_of(before, before_name);
        c.after = side_of(after, after_name);
        const run_result& b = before.first_good()->cold;
        const run_result& a = after.first_good()->cold;
        const std::vector<std::string> not_comparable = comparability(before, after, c);
        c.workload = check_workload(b, a);
        const auto hb = hashes_by_module(b);
        const auto ha = hashes_by_module(a);
        hash_receipts(hb, ha, c);
        c.structure = {
            {"identities", before.result.identity_count.median, after.result.identity_count.median},
            {"modules", static_cast<double>(hb.size()), static_cast<double>(ha.size())},
            {"builds (compiled loads)", count_if_loads(b, load_status::compiled), count_if_loads(a, load_status::compiled)},
            {"generated source bytes", before.result.source_bytes.median, after.result.source_bytes.median},
            {"LTO artifacts", before.result.lto_artifacts.median, after.result.lto_artifacts.median},
            {"launches", static_cast<double>(b.launch_total), static_cast<double>(a.launch_total)},
        };
        c.same_structure = same_identities(b, a) && before.result.source_bytes.median == after.result.source_bytes.median;
        c.option_checks = check_options(b, a, c.receipts);
        std::size_t decide = judge_clocks(before, after, c);
        if (clock == deciding_clock::cold_wall)
        {
            suite_workload(before, after, c.workload);
            c.clocks.push_back(judge("cold_wall_ms", before.result.cold_wall_ms, after.result.cold_wall_ms));
            decide = c.clocks.size() - 1;
            c.decided_by = "cold_wall_ms";
            c.judged_on = "cold wall: a change to how a test suite runs (its workers, how they draw tests, its "
                          "header settings) is for the wall the job waits on; module work summed over its "
                          "processes is CPU time";
        }
        // Verdict, most fundamental problem first.
        std::vector<std::string> invalid;
        if (!not_comparable.empty())
        {
            c.verdict = verdict::not_comparable;
            c.reasons = not_comparable;
        }
        else if (!(invalid = invalid_reasons(before, after, c)).empty())
        {
            c.verdict = verdict::invalid;
            c.reasons = invalid;
        }
        else if (c.workload.status == workload_status::unverified)
        {
            c.verdict = verdict::unverified;
            c.reasons.push_back("the workload cannot be verified: " + c.workload.reason + "; no gain is credited without it");
        }
        else
        {
            clock_verdict(decide, c);
        }
        for (const auto& oc : c.option_checks)
        {
            c.notes.push_back(oc.message);
        }
        return c;
    }
}
