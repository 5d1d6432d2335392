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

        clock_judgement judge(xwarp::clock name, const stat& b, const stat& a)
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
                c.outcome = clock_outcome::not_available;
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
                c.outcome = clock_outcome::within_noise;
            }
            else if (ranked && *c.p_value >= significance_level)
            {
                c.outcome = clock_outcome::not_significant;
            }
            else if (!ranked && !separated(b.values, a.values, delta < 0))
            {
                // too few samples for the rank test: only sides that do not overlap at all are
                // credited, so that one disturbed sample (a stray build) decides nothing
                c.outcome = clock_outcome::overlapping;
            }
            else
            {
                c.outcome = delta < 0 ? clock_outcome::improved : clock_outcome::regressed;
            }
            // Samples a side for a rank test to detect this difference: the normal-theory size
            // for 80% power at the 5% level, inflated by pi/3 (the rank test's efficiency).
            // The spread is the larger of the two sides' standard deviations and scaled MADs,
            // so a lumpy sample is not mistaken for a tight one.
            if (c.outcome == clock_outcome::not_significant || c.outcome == clock_outcome::overlapping
                || (!ranked && c.outcome != clock_outcome::within_noise))
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
            if (k.clock == c.judged_on.by)
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
        if ((d->outcome == clock_outcome::improved || d->outcome == clock_outcome::regressed) && ranked && d->p_value)
        {
            return "the rank test decided (p = " + format_fixed(*d->p_value, 4) + " with " + std::to_string(d->n_before)
                   + " and " + std::to_string(d->n_after) + " samples)";
        }
        if (d->outcome == clock_outcome::within_noise && ranked)
        {
            return "the change is inside the noise band with " + std::to_string(n)
                   + " samples a side, and the band does not shrink with more";
        }
        if (d->outcome == clock_outcome::not_significant && d->samples_needed && *d->samples_needed > max_samples)
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
                               deciding_clock clock, const std::vector<cache_kind>& the_change_fills)
    {
        analyze(before);
        analyze(after);
        return compare_analyzed(before, after, before_name, after_name, clock, the_change_fills);
    }

    namespace
    {
        // What each cache held when a side's good cold passes started: per kind, whether it was
        // empty in every pass, held something in every pass, or either (none: not recorded).
        enum class cache_start
        {
            empty,
            held,
            mixed,
        };
        std::map<cache_kind, std::pair<cache_start, std::int64_t>> cold_cache_starts(const report& r)
        {
            std::map<cache_kind, std::pair<cache_start, std::int64_t>> starts;  // kind -> (start, most bytes held)
            for (const auto& s : r.samples)
            {
                if (!s.ok())
                {
                    continue;
                }
                for (const auto& c : s.cold.caches)
                {
                    const cache_start here = c.empty_at_start() ? cache_start::empty : cache_start::held;
                    const auto [it, added] = starts.try_emplace(c.kind, here, c.bytes_before);
                    if (!added)
                    {
                        it->second.first = it->second.first == here ? here : cache_start::mixed;
                        it->second.second = std::max(it->second.second, c.bytes_before);
                    }
                }
            }
            return starts;
        }

        std::string cache_start_words(const std::pair<cache_start, std::int64_t>& start)
        {
            return start.first == cache_start::empty ? std::string("empty")
                   : start.first == cache_start::held ? "holding " + format_bytes(start.second)
                                                       : "empty in some samples only";
        }

        // Same machine, same Warp, same command, the same caches to start from? The reasons they
        // are not (empty: comparable). A cache the change itself fills (a lever that keeps one) may differ.
        std::vector<std::string> comparability(const report& before, const report& after, comparison& c,
                                               const std::vector<cache_kind>& the_change_fills)
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
            const auto starts_before = cold_cache_starts(before);
            const auto starts_after = cold_cache_starts(after);
            for (const auto& [kind, start] : starts_before)
            {
                const auto other = starts_after.find(kind);
                if (other == starts_after.end() || other->second.first == start.first
                    || std::find(the_change_fills.begin(), the_change_fills.end(), kind) != the_change_fills.end())
                {
                    continue;
                }
                not_comparable.push_back("the cold passes started from different caches: the " + word_of(kind) + " was "
                                         + cache_start_words(start) + " before and " + cache_start_words(other->second)
                                         + " after (a cold run on kept caches is another experiment: compare like with like)");
            }
            // a program that points Warp at a kernel cache of its own (kernel_cache_dir) loads from
            // it whatever the probe's private cache holds: its cold passes did not start cold
            // the first entry of a good sample's cold pass's list (caches_outside, built_outside), or ""
            const auto first_of = [](const report& r, std::vector<std::string> run_result::*list) -> std::string
            {
                for (const auto& s : r.samples)
                {
                    if (s.ok() && !(s.cold.*list).empty())
                    {
                        return (s.cold.*list).front();
                    }
                }
                return {};
            };
            const std::string outside_before = first_of(before, &run_result::caches_outside);
            const std::string outside_after = first_of(after, &run_result::caches_outside);
            if (outside_before.empty() != outside_after.empty())
            {
                not_comparable.push_back("the cold passes started from different caches: the program pointed Warp's kernel "
                                         "cache at " + (outside_before.empty() ? outside_after : outside_before)
                                         + ", outside the probe's, " + (outside_before.empty() ? "after" : "before")
                                         + " and not " + (outside_before.empty() ? "before" : "after")
                                         + " (a cold run on a kept cache is another experiment: compare like with like)");
            }
            // builds put into the probe's own cache from outside its view: that side did not start cold
            for (const auto* side : {&before, &after})
            {
                if (const std::string folder = first_of(*side, &run_result::built_outside); !folder.empty())
                {
                    not_comparable.push_back("the cold passes " + std::string(side == &before ? "before" : "after")
                                             + " did not start cold: the probe's private kernel cache held module folders "
                                               "no recorded build made (first: " + folder + ")");
                }
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

        // A good cold pass's build work on a clock without the precompiled headers it wrote (on
        // the CPU clock, each header's share of its load's CPU time).
        std::vector<double> work_without_headers(const report& r, xwarp::clock on)
        {
            std::vector<double> v;
            for (const auto& s : r.samples)
            {
                if (s.ok())
                {
                    double t = 0.0;
                    for (const auto& l : s.cold.module_loads)
                    {
                        t += l.cost_ms(on) - l.header_cost_ms(on);
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

        bool flagged(const report& r, flag_id id)
        {
            return std::any_of(r.result.flags.begin(), r.result.flags.end(), [&](const flag& f) { return f.id == id; });
        }

        // The wall the machine's other processes could have taken from one good sample on a wall
        // clock (their CPU time over the CPUs, machine_load::explains_ms): the cold pass's for
        // the cold wall and cold module work, the warm pass's for warm module work, and for
        // compile elapsed (cold wall - warm wall) the cold pass's less the warm pass's. None when
        // a pass's load was not measured.
        std::optional<double> load_on(xwarp::clock k, const sample& s)
        {
            const auto cold = s.cold.load ? std::optional<double>(s.cold.load->explains_ms()) : std::nullopt;
            const auto warm = s.warm && s.warm->load ? std::optional<double>(s.warm->load->explains_ms()) : std::nullopt;
            switch (k)
            {
                case xwarp::clock::cold_wall:
                case xwarp::clock::cold_module_work:
                    return cold;
                case xwarp::clock::warm_module_work:
                    return warm;
                case xwarp::clock::compile_elapsed:
                    return cold && warm ? std::optional<double>(*cold - *warm) : std::nullopt;
                case xwarp::clock::cold_module_cpu:
                case xwarp::clock::warm_module_cpu:
                    return std::nullopt;
            }
            return std::nullopt;
        }

        // The median of load_on over a side's good samples; none when any was not measured.
        std::optional<double> side_load(xwarp::clock k, const report& r)
        {
            std::vector<double> v;
            for (const auto& s : r.samples)
            {
                if (!s.ok() || (k != xwarp::clock::cold_wall && k != xwarp::clock::cold_module_work && !s.warm))
                {
                    continue;
                }
                const auto l = load_on(k, s);
                if (!l)
                {
                    return std::nullopt;
                }
                v.push_back(*l);
            }
            return median(v);
        }

        // The most CPUs the machine's other processes kept busy during a good cold pass of a side,
        // or none when no load was measured.
        std::optional<double> busiest(const report& r)
        {
            std::optional<double> most;
            for (const auto& s : r.samples)
            {
                if (s.ok() && s.cold.load)
                {
                    most = std::max(most.value_or(0.0), s.cold.load->busy_cpus(s.cold.wall_ms));
                }
            }
            return most;
        }

        // A wall clock beyond its band is the machine's load, not the change, when the load moved
        // the same way by enough to leave the rest inside the band: the after side's passes ran
        // beside that much more (or less) of the other processes' work than the before side's.
        void hold_to_load(clock_judgement& k, const report& before, const report& after)
        {
            if (!load_moves(k.clock))
            {
                return;
            }
            const auto lb = side_load(k.clock, before);
            const auto la = side_load(k.clock, after);
            if (!lb || !la || !k.delta_ms)
            {
                return;
            }
            k.load_delta_ms = *la - *lb;
            const bool beyond = k.outcome == clock_outcome::improved || k.outcome == clock_outcome::regressed;
            const bool same_way = (*k.load_delta_ms < 0) == (*k.delta_ms < 0) && *k.load_delta_ms != 0.0;
            if (beyond && same_way && std::fabs(*k.delta_ms) - std::fabs(*k.load_delta_ms) <= k.band_ms.value_or(0.0))
            {
                k.outcome = clock_outcome::machine_busy;
            }
        }

        // Which clock judges build work: the loading threads' CPU time when both sides recorded it
        // for every load (cold or warm pass), else Warp's module timers.
        xwarp::clock build_clock(const report& before, const report& after, bool warm)
        {
            const auto& b = warm ? before.result.warm_module_cpu_ms : before.result.cold_module_cpu_ms;
            const auto& a = warm ? after.result.warm_module_cpu_ms : after.result.cold_module_cpu_ms;
            if (b.median && a.median)
            {
                return warm ? xwarp::clock::warm_module_cpu : xwarp::clock::cold_module_cpu;
            }
            return warm ? xwarp::clock::warm_module_work : xwarp::clock::cold_module_work;
        }

        const stat& stat_of(xwarp::clock k, const report& r)
        {
            switch (k)
            {
                case xwarp::clock::cold_module_work:
                    return r.result.cold_module_ms;
                case xwarp::clock::compile_elapsed:
                    return r.result.compile_elapsed_ms;
                case xwarp::clock::warm_module_work:
                    return r.result.warm_module_ms;
                case xwarp::clock::cold_wall:
                    return r.result.cold_wall_ms;
                case xwarp::clock::cold_module_cpu:
                    return r.result.cold_module_cpu_ms;
                case xwarp::clock::warm_module_cpu:
                    return r.result.warm_module_cpu_ms;
            }
            return r.result.cold_module_ms;
        }

        // Every clock both sides can be judged on: build work on CPU time where recorded (the wall
        // of Warp's timers beside it), compile elapsed, and the cold wall for a suite's levers.
        // Each good sample's compiled identities, as often as each was built, sorted; none when
        // a side's samples did not all build the same (a side that varies is judged on its times).
        std::optional<std::vector<identity_key>> builds_of(const report& r, bool warm)
        {
            std::optional<std::vector<identity_key>> first;
            for (const auto& s : r.samples)
            {
                if (!s.ok())
                {
                    continue;
                }
                if (warm && !s.warm)
                {
                    return std::nullopt;
                }
                std::vector<identity_key> built;
                for (const auto& l : (warm ? *s.warm : s.cold).module_loads)
                {
                    if (l.status == load_status::compiled)
                    {
                        built.push_back(key_of(l));
                    }
                }
                std::sort(built.begin(), built.end());
                if (first && *first != built)
                {
                    return std::nullopt;
                }
                first = std::move(built);
            }
            return first;
        }

        // A build-work clock (the loading threads' CPU time, Warp's module timers) beyond its band
        // where every sample of both sides compiled the same identities, as many times: the code
        // gave the compiler the same work, so what moved the clock is the run's conditions (the
        // machine's load, the CPU's clock), which the CPU time does not escape (c01 compared with
        // itself moved 18% beside two busy loops). A wall clock is the job's to judge
        // (compile elapsed, cold wall: loading in parallel changes it with the same builds).
        void hold_to_same_builds(clock_judgement& k, bool same_cold_builds, bool same_warm_builds)
        {
            const bool cold_work = k.clock == xwarp::clock::cold_module_cpu || k.clock == xwarp::clock::cold_module_work;
            const bool warm_work = k.clock == xwarp::clock::warm_module_cpu || k.clock == xwarp::clock::warm_module_work;
            if (((cold_work && same_cold_builds) || (warm_work && same_warm_builds))
                && (k.outcome == clock_outcome::improved || k.outcome == clock_outcome::regressed))
            {
                k.outcome = clock_outcome::same_builds;
            }
        }

        void judge_every_clock(const report& before, const report& after, comparison& c, deciding_clock deciding,
                               const std::vector<cache_kind>& the_change_fills)
        {
            const auto headers_before = header_writes(before);
            const auto headers_after = header_writes(after);
            // the same builds under the same build settings: a change that fills a cache (NVRTC's,
            // LTO's) or writes other precompiled headers keeps the identities and changes the work
            const bool same_settings = the_change_fills.empty() && headers_before == headers_after;
            const auto same_builds = [&](bool warm)
            {
                const auto built_before = builds_of(before, warm);
                return same_settings && built_before && !built_before->empty() && built_before == builds_of(after, warm);
            };
            const bool same_cold_builds = same_builds(false);
            const bool same_warm_builds = same_builds(true);
            std::vector<xwarp::clock> clocks;
            if (build_clock(before, after, false) == xwarp::clock::cold_module_cpu)
            {
                clocks.push_back(xwarp::clock::cold_module_cpu);
            }
            clocks.push_back(xwarp::clock::cold_module_work);
            clocks.push_back(xwarp::clock::compile_elapsed);
            if (build_clock(before, after, true) == xwarp::clock::warm_module_cpu)
            {
                clocks.push_back(xwarp::clock::warm_module_cpu);
            }
            clocks.push_back(xwarp::clock::warm_module_work);
            if (deciding == deciding_clock::cold_wall)
            {
                clocks.push_back(xwarp::clock::cold_wall);
            }
            for (const auto k : clocks)
            {
                clock_judgement j;
                if ((k == xwarp::clock::cold_module_work || k == xwarp::clock::cold_module_cpu) && headers_before.size() == 1
                    && headers_before == headers_after && *headers_before.begin() > 0)
                {
                    // a header write is most of a CPU thread's first build and most of its noise,
                    // on either clock (beside busy jobs its CPU time spread 56 ms where the builds
                    // without it spread 23 ms): as many on both sides, it is left out
                    j = judge(k, make_stat(work_without_headers(before, k)), make_stat(work_without_headers(after, k)));
                    j.note = "precompiled-header writes left out: both sides wrote " + std::to_string(*headers_before.begin())
                             + " per cold pass";
                }
                else
                {
                    j = judge(k, stat_of(k, before), stat_of(k, after));
                }
                hold_to_load(j, before, after);
                hold_to_same_builds(j, same_cold_builds, same_warm_builds);
                c.clocks.push_back(std::move(j));
            }
        }

        // The clock the verdict is decided on, and why (judged_on). Build work is judged on the
        // loading threads' CPU time where both sides recorded it: the machine's load cannot move it.
        xwarp::judged_on choose_clock(const report& before, const report& after, comparison& c, deciding_clock deciding)
        {
            if (deciding == deciding_clock::cold_wall)
            {
                return {xwarp::clock::cold_wall,
                        "a change to how a test suite runs (its workers, how they draw tests, its header settings) is for "
                        "the wall the job waits on; module work summed over its processes is CPU time"};
            }
            const xwarp::clock cold_build = build_clock(before, after, false);
            const std::string on_cpu = cold_build == xwarp::clock::cold_module_cpu
                                           ? " (the loading threads' CPU time: load moves it less than a wall, not never)"
                                           : "";
            const std::string stray = stray_warm_builds(before, "before") + stray_warm_builds(after, "after");
            const bool overlapped = flagged(before, flag_id::builds_overlapped) || flagged(after, flag_id::builds_overlapped);
            if ((flagged(before, flag_id::cache_not_reused) || flagged(after, flag_id::cache_not_reused)) && stray.empty())
            {
                return {build_clock(before, after, true),
                        "a cache that was not reused shows in the warm pass, where cold wall - warm wall hides it"};
            }
            if (!stray.empty())
            {
                c.notes.push_back(stray + " compiled again: a stray build, not the lever's effect");
                return {c.same_structure || overlapped ? xwarp::clock::compile_elapsed : cold_build,
                        stray + " compiled while the others reused the cache: a different experiment, left out of the "
                                "verdict (warm module work is not judged)"};
            }
            if (c.same_structure)
            {
                return {xwarp::clock::compile_elapsed, "identities, hashes and generated source are identical, so a change "
                                                       "in summed module work is contention, not compilation"};
            }
            if (overlapped)
            {
                return {xwarp::clock::compile_elapsed, "builds overlapped, so summed module work overstates the time waited"};
            }
            return {cold_build, "builds were serial and the compiled structure changed" + on_cpu};
        }

        // A module that failed to build makes a side invalid, unless it failed on both sides in
        // the same test of a suite that passed: a build the test expects to fail (Warp's own
        // tests have them), said in the notes and judged past.
        std::vector<std::pair<std::string, std::string>> failed_builds(const report& r)
        {
            std::vector<std::pair<std::string, std::string>> failed;  // (module, test)
            for (const auto& s : r.samples)
            {
                for (const auto& l : s.cold.module_loads)
                {
                    if (l.status == load_status::error)
                    {
                        const std::pair<std::string, std::string> key{l.module.str(), l.test.str()};
                        if (std::find(failed.begin(), failed.end(), key) == failed.end())
                        {
                            failed.push_back(key);
                        }
                    }
                }
            }
            return failed;
        }

        bool any_tests_failed(const report& r)
        {
            return std::any_of(r.samples.begin(), r.samples.end(), [](const sample& s)
                               { return s.cold.tests_failed || (s.warm && s.warm->tests_failed); });
        }

        // Failed samples, failed builds and a changed workload: what makes a comparison invalid.
        std::vector<std::string> invalid_reasons(const report& before, const report& after, comparison& c)
        {
            std::vector<std::string> invalid;
            const auto failed_before = failed_builds(before);
            const auto failed_after = failed_builds(after);
            const bool suites_passed = !any_tests_failed(before) && !any_tests_failed(after);
            for (const auto* side : {&before, &after})
            {
                const std::string name = side == &before ? "before" : "after";
                if (side->result.samples_ok < side->result.samples_total)
                {
                    invalid.push_back(name + ": " + std::to_string(side->result.samples_total - side->result.samples_ok)
                                      + " of " + std::to_string(side->result.samples_total) + " samples failed");
                }
                const auto& mine = side == &before ? failed_before : failed_after;
                const auto& theirs = side == &before ? failed_after : failed_before;
                for (const auto& [module, test] : mine)
                {
                    const bool expected = suites_passed && !test.empty()
                                          && std::find(theirs.begin(), theirs.end(), std::make_pair(module, test)) != theirs.end();
                    if (!expected)
                    {
                        invalid.push_back(name + ": module " + module + " failed to build");
                    }
                    else if (side == &before)
                    {
                        c.notes.push_back("module " + module + " failed to build on both sides in " + test
                                          + ", which passed: a build the test expects to fail, judged past");
                    }
                }
                if (any_tests_failed(*side))
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
        void inconclusive_reasons(const clock_judgement& d, const report& before, const report& after, comparison& c)
        {
            if (d.outcome == clock_outcome::machine_busy)
            {
                const auto busy = std::max(busiest(before).value_or(0.0), busiest(after).value_or(0.0));
                c.reasons.push_back("the machine was busy: the after side's samples ran beside "
                                    + format_ms(std::fabs(d.load_delta_ms.value_or(0.0)))
                                    + (d.load_delta_ms.value_or(0.0) < 0 ? " less" : " more")
                                    + " of other processes' work per CPU than the before side's (up to "
                                    + format_fixed(busy, 1) + " CPUs busy with them), as much as the change; a quieter "
                                      "machine settles it");
                return;
            }
            if (d.outcome == clock_outcome::same_builds)
            {
                const auto load_words = [](const report& r)
                {
                    const auto b = busiest(r);
                    return b ? "up to " + format_fixed(*b, 1) + " CPUs busy with other processes" : std::string("not measured");
                };
                c.reasons.push_back("the machine's load during the cold passes: " + load_words(before) + " before, "
                                    + load_words(after) + " after; a change that gives the compiler less work shows as "
                                      "fewer or other builds");
                return;
            }
            if (d.samples_needed)
            {
                c.reasons.push_back("about " + std::to_string(*d.samples_needed) + " samples a side would settle it (now "
                                    + std::to_string(d.n_before) + " and " + std::to_string(d.n_after) + ")");
                return;
            }
            if (d.outcome != clock_outcome::within_noise)
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
            if (load_moves(d.clock) && std::max(busiest(before).value_or(0.0), busiest(after).value_or(0.0)) >= busy_cpus_noted)
            {
                c.reasons.push_back("the machine was busy during some samples (up to "
                                    + format_fixed(std::max(busiest(before).value_or(0.0), busiest(after).value_or(0.0)), 1)
                                    + " CPUs busy with other processes), which widens a wall clock's spread");
            }
        }

        // The verdict of a valid, verified comparison: the deciding clock's outcome.
        void clock_verdict(std::size_t decide, const report& before, const report& after, comparison& c)
        {
            const auto& d = c.clocks[decide];
            const std::string detail = clock_name(d.clock) + " " + (d.delta_ms && *d.delta_ms < 0 ? "fell " : "rose ")
                                       + format_ms(std::fabs(d.delta_ms.value_or(0.0)))
                                       + (d.delta_pct ? " (" + format_fixed(*d.delta_pct, 1) + "%)" : "")
                                       + " against a noise band of " + format_ms(d.band_ms.value_or(0.0))
                                       + (d.p_value ? ", p = " + format_fixed(*d.p_value, 4) : "");
            if (d.outcome == clock_outcome::improved || d.outcome == clock_outcome::regressed)
            {
                c.verdict = d.outcome == clock_outcome::improved ? verdict::improved : verdict::regressed;
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
                c.reasons.push_back(detail + (d.outcome == clock_outcome::within_noise ? ": inside the noise band"
                                              : d.outcome == clock_outcome::overlapping
                                                  ? ": beyond the band, but the two sides' samples overlap (with fewer "
                                                    "than 5 a side, only sides that do not overlap are credited)"
                                              : d.outcome == clock_outcome::machine_busy
                                                  ? ": beyond the band, by no more than the machine's load explains"
                                              : d.outcome == clock_outcome::same_builds
                                                  ? ": beyond the band, but every sample of both sides compiled the same "
                                                    "module identities (hashes equal) as many times: the same work for "
                                                    "the compiler, so what moved it is the run's conditions (the machine's "
                                                    "load, the CPU's clock), not the change"
                                                  : ": beyond the band but not significant"));
                inconclusive_reasons(d, before, after, c);
            }
            for (std::size_t k = 0; k < c.clocks.size(); ++k)
            {
                const auto& other = c.clocks[k];
                const bool warm = other.clock == xwarp::clock::warm_module_work || other.clock == xwarp::clock::warm_module_cpu;
                const bool beyond = other.outcome == clock_outcome::improved || other.outcome == clock_outcome::regressed;
                if (k != decide && !warm && other.clock != xwarp::clock::cold_wall && beyond && other.outcome != d.outcome)
                {
                    c.notes.push_back("another clock (" + clock_name(other.clock) + ") " + word_of(other.outcome));
                }
            }
        }
    }

    comparison compare_analyzed(const report& before, const report& after, const std::string& before_name,
                                const std::string& after_name, deciding_clock clock,
                                const std::vector<cache_kind>& the_change_fills)
    {
        require_comparable(before, before_name);
        require_comparable(after, after_name);
        comparison c;
        c.created_utc = utc_timestamp();
        c.before = side_of(before, before_name);
        c.after = side_of(after, after_name);
        const run_result& b = before.first_good()->cold;
        const run_result& a = after.first_good()->cold;
        const std::vector<std::string> not_comparable = comparability(before, after, c, the_change_fills);
        c.workload = check_workload(b, a);
        const auto hb = hashes_by_module(b);
        const auto ha = hashes_by_module(a);
        hash_receipts(hb, ha, c);
        c.structure = {
            {"identities", before.result.identity_count.median, after.result.identity_count.median},
            {"modules", static_cast<double>(hb.size()), static_cast<double>(ha.size())},
            {"builds (compiled loads)", count_if_loads(b, load_status::compiled), count_if_loads(a, load_status::compiled)},
            {"generated source bytes", before.result.source_bytes.median, after.result.source_bytes.median, true},
            {"LTO artifacts", before.result.lto_artifacts.median, after.result.lto_artifacts.median},
            {"launches", static_cast<double>(b.launch_total), static_cast<double>(a.launch_total)},
        };
        c.same_structure = same_identities(b, a) && before.result.source_bytes.median == after.result.source_bytes.median;
        c.option_checks = check_options(b, a, c.receipts);
        judge_every_clock(before, after, c, clock, the_change_fills);
        c.judged_on = choose_clock(before, after, c, clock);
        if (clock == deciding_clock::cold_wall)
        {
            suite_workload(before, after, c.workload);
        }
        std::size_t decide = 0;
        while (decide + 1 < c.clocks.size() && c.clocks[decide].clock != c.judged_on.by)
        {
            ++decide;
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
            clock_verdict(decide, before, after, c);
        }
        for (const auto& oc : c.option_checks)
        {
            c.notes.push_back(oc.message);
        }
        return c;
    }
}
