#include "xwarp/analysis/trend.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>

#include "xwarp/analysis/compare.hpp"
#include "xwarp/analysis/stats.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp
{
    std::string series_command(const report& r)
    {
        if (r.cell_code)
        {
            return "notebook cell " + (r.label.empty() ? std::string("(unnamed)") : r.label);
        }
        std::string line;
        for (const auto& word : r.command)
        {
            line += (line.empty() ? "" : " ") + word;
        }
        return line;
    }

    fingerprint fingerprint_of(const report& r)
    {
        fingerprint fp;
        fp.machine = r.env.host.empty() ? "unknown host" : r.env.host;
        fp.cpu = r.env.cpu_model;
        for (const auto& g : r.env.gpus)
        {
            fp.gpu += (fp.gpu.empty() ? "" : ", ") + g.name;
        }
        fp.driver = r.env.cuda_driver;
        fp.toolkit = r.env.cuda_toolkit;
        fp.warp = r.env.warp_version;
        fp.python = r.env.python_version;
        fp.probe = r.env.probe_version;
        fp.command = series_command(r);
        fp.label = r.label;
        fp.git_commit = r.env.project_commit;
        return fp;
    }

    history_run run_row_of(const report& r, run_kind kind)
    {
        history_run run;
        run.created_utc = r.created_utc;
        run.kind = word_of(kind);
        run.fp = fingerprint_of(r);
        run.status = word_of(r.status);
        run.samples = static_cast<int>(std::count_if(r.samples.begin(), r.samples.end(), [](const sample& s) { return s.ok(); }));
        run.cold_module_ms = r.result.cold_module_ms.median;
        run.cold_module_mad_ms = r.result.cold_module_ms.mad;
        run.cold_wall_ms = r.result.cold_wall_ms.median;
        run.identities = static_cast<int>(r.result.identities.size());
        for (const auto& id : r.result.identities)
        {
            run.builds += id.builds;
        }
        for (const auto& w : r.whatif)
        {
            run.whatif += (run.whatif.empty() ? "" : ", ") + w.lever + " " + word_of(w.verdict);
        }
        return run;
    }

    void for_each_identity_row(const report& r, const std::function<void(const history_identity&)>& take)
    {
        // Source bytes of each identity's first load, from the first good sample that has it:
        // (module, hash, device) views of the loads' texts, sorted once and searched. A map of
        // joined copies of the three, and every row made before the first was stored, were
        // the history store's peak on a large report (2.7 MB at 10,000 identities).
        using key = std::tuple<std::string_view, std::string_view, std::string_view>;
        std::vector<std::pair<key, std::int64_t>> source_bytes;
        for (const auto& s : r.samples)
        {
            if (!s.ok())
            {
                continue;
            }
            for (const auto& l : s.cold.module_loads)
            {
                if (l.source_bytes)
                {
                    source_bytes.emplace_back(key(l.module, l.hash, l.device), *l.source_bytes);
                }
            }
        }
        // stable: of equal keys the first seen stays first, and is the one kept
        std::stable_sort(source_bytes.begin(), source_bytes.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        source_bytes.erase(std::unique(source_bytes.begin(), source_bytes.end(),
                                       [](const auto& a, const auto& b) { return a.first == b.first; }),
                           source_bytes.end());
        history_identity row;
        for (const auto& id : r.result.identities)
        {
            row.module = id.module;
            row.hash = id.hash;
            row.device = id.device;
            row.block_dim = id.block_dim;
            row.builds = id.builds;
            row.ms = id.ms;
            row.kernels = id.kernels;
            const key k(id.module, id.hash, id.device);
            const auto it = std::lower_bound(source_bytes.begin(), source_bytes.end(), k,
                                             [](const auto& entry, const key& wanted) { return entry.first < wanted; });
            row.source_bytes = it != source_bytes.end() && it->first == k ? it->second : -1;
            take(row);
        }
    }

    std::vector<std::string> fingerprint_changes(const fingerprint& before, const fingerprint& after)
    {
        std::vector<std::string> out;
        auto field = [&](const char* name, const std::string& a, const std::string& b, std::size_t keep = std::string::npos)
        {
            if (a != b)
            {
                out.push_back(std::string(name) + " " + (a.empty() ? "(none)" : a.substr(0, keep)) + " -> "
                              + (b.empty() ? "(none)" : b.substr(0, keep)));
            }
        };
        field("Warp", before.warp, after.warp);
        field("Python", before.python, after.python);
        field("driver", before.driver, after.driver);
        field("CUDA toolkit", before.toolkit, after.toolkit);
        field("GPU", before.gpu, after.gpu);
        field("CPU", before.cpu, after.cpu);
        field("warp-probe", before.probe, after.probe);
        field("commit", before.git_commit, after.git_commit, 12);
        return out;
    }

    std::vector<trend_step> detect_steps(const std::vector<double>& values,
                                         const std::vector<double>& bands,
                                         series_measure measure)
    {
        std::vector<trend_step> steps;
        std::size_t level_start = 0;
        // A time can only be told from noise by the run after it; a count is exact, so a change
        // at the last run is worth saying as a possible step.
        const bool exact = measure == series_measure::identities;
        // The widest single-run excursion seen at this level that did not persist: noise this
        // series has shown, which a later change must exceed to count.
        double seen_noise = 0.0;
        for (std::size_t i = 1; i < values.size(); ++i)
        {
            const std::size_t from = std::max(level_start, i >= static_cast<std::size_t>(step_window) ? i - step_window : 0);
            const std::vector<double> window(values.begin() + static_cast<std::ptrdiff_t>(from),
                                             values.begin() + static_cast<std::ptrdiff_t>(i));
            const double level = median(window).value_or(values[i - 1]);
            // The band: the run's own (from its samples), or the runs' spread around the level,
            // whichever is wider.
            double band = i < bands.size() ? bands[i] : 0.0;
            if (window.size() >= 2)
            {
                band = std::max(band, noise_mad_factor * mad(window).value_or(0.0));
            }
            band = std::max(band, seen_noise);
            const double delta = values[i] - level;
            if (std::fabs(delta) <= band)
            {
                continue;
            }
            trend_step st;
            st.index = static_cast<int>(i);
            st.measure = measure;
            st.before = level;
            st.band = band;
            if (i + 1 < values.size())
            {
                // It persisted: the next run is beyond the band on the same side and stays near
                // this run (within the band, or half the step): not a second, larger step.
                const double next = values[i + 1] - level;
                if (std::fabs(next) <= band || (next > 0) != (delta > 0)
                    || std::fabs(values[i + 1] - values[i]) > std::max(band, std::fabs(delta) / 2))
                {
                    seen_noise = std::max(seen_noise, std::fabs(delta));
                    continue;  // a single odd run, not a step
                }
                st.after = median({values[i], values[i + 1]}).value_or(values[i]);
            }
            else if (!exact)
            {
                continue;
            }
            else
            {
                st.after = values[i];
                st.confirmed = false;
            }
            steps.push_back(st);
            level_start = i;
            seen_noise = 0.0;
        }
        return steps;
    }

    namespace
    {
        using module_key = std::pair<std::string, std::string>;  // module, device

        void attach_runs(std::vector<trend_step>& steps, const std::vector<history_run>& runs)
        {
            for (auto& st : steps)
            {
                const auto i = static_cast<std::size_t>(st.index);
                st.at_run = runs[i].id;
                st.changed = fingerprint_changes(runs[i - 1].fp, runs[i].fp);
            }
        }

        // The band of a share of a run's module work: the run's own 2 x MAD scaled by the
        // share, and never under trend_floor_fraction of it (runs far apart in time drift more
        // than compare's interleaved samples do).
        double share_band(const history_run& run, double part_ms)
        {
            double band = trend_floor_fraction * part_ms;
            if (run.cold_module_mad_ms && run.cold_module_ms && *run.cold_module_ms > 0.0)
            {
                band = std::max(band, noise_mad_factor * *run.cold_module_mad_ms * part_ms / *run.cold_module_ms);
            }
            return band;
        }
    }

    namespace
    {
        using identity_set = std::set<std::string>;  // "module hash7 on device [block_dim N]"

        std::string identity_words(const std::string& module, const std::string& hash, const std::string& device,
                                   std::optional<int> block_dim)
        {
            return module + " " + hash.substr(0, 7) + " on " + device
                   + (block_dim ? " block_dim " + std::to_string(*block_dim) : std::string());
        }

        // "new X", "gone Y" from one set to the next, at most `most` named and a count of the rest.
        std::vector<std::string> set_changes(const identity_set& before, const identity_set& after, std::size_t most = 6)
        {
            std::vector<std::string> out;
            std::size_t more = 0;
            // what `in` holds and `other` lacks, each named as `word` while there is room
            auto name_missing = [&](const identity_set& in, const identity_set& other, const char* word)
            {
                for (const auto& x : in)
                {
                    if (other.count(x))
                    {
                        continue;
                    }
                    if (out.size() < most)
                    {
                        out.push_back(word + x);
                    }
                    else
                    {
                        ++more;
                    }
                }
            };
            name_missing(after, before, "new ");
            name_missing(before, after, "gone ");
            if (more > 0)
            {
                out.push_back("and " + std::to_string(more) + " more");
            }
            return out;
        }

        // Names what was built differently at each step; a time step with nothing built
        // differently says so (the time moved: the machine, the compiler, not the code).
        void attach_builds(std::vector<trend_step>& steps, const std::vector<identity_set>& sets)
        {
            for (auto& st : steps)
            {
                const auto i = static_cast<std::size_t>(st.index);
                if (i == 0 || i >= sets.size())
                {
                    continue;
                }
                st.built = set_changes(sets[i - 1], sets[i]);
                st.same_builds = st.measure != series_measure::identities && st.built.empty();
            }
        }
    }

    history_trend build_trend(const std::vector<history_run>& runs,
                              const std::vector<std::vector<history_identity>>& rows)
    {
        history_trend t;
        t.runs = runs;
        if (!runs.empty())
        {
            t.machine = runs.back().fp.machine;
            t.command = runs.back().fp.command;
        }
        std::map<module_key, module_trend> modules;
        std::vector<std::map<module_key, trend_point>> per_run(runs.size());
        std::vector<std::map<module_key, identity_set>> sets_per_run(runs.size());
        std::vector<identity_set> run_sets(runs.size());
        std::vector<double> total_ms, total_bands, total_ids;
        for (std::size_t i = 0; i < runs.size(); ++i)
        {
            trend_point total;
            total.run = runs[i].id;
            auto& here = per_run[i];
            for (const auto& row : i < rows.size() ? rows[i] : std::vector<history_identity>{})
            {
                auto& p = here[{row.module, row.device}];
                const std::string words = identity_words(row.module, row.hash, row.device, row.block_dim);
                sets_per_run[i][{row.module, row.device}].insert(words);
                run_sets[i].insert(words);
                p.run = runs[i].id;
                p.cold_ms += row.ms;
                p.identities += 1;
                p.builds += row.builds;
                total.cold_ms += row.ms;
                total.identities += 1;
                total.builds += row.builds;
            }
            if (runs[i].cold_module_ms)
            {
                total.cold_ms = *runs[i].cold_module_ms;
            }
            t.total.push_back(total);
            total_ms.push_back(total.cold_ms);
            total_bands.push_back(share_band(runs[i], total.cold_ms));
            total_ids.push_back(total.identities);
            for (const auto& [key, p] : here)
            {
                auto& m = modules[key];
                m.module = key.first;
                m.device = key.second;
            }
        }
        t.total_steps = detect_steps(total_ids, std::vector<double>(runs.size(), 0.0), series_measure::identities);
        auto ms_steps = detect_steps(total_ms, total_bands, series_measure::cold_ms);
        t.total_steps.insert(t.total_steps.end(), ms_steps.begin(), ms_steps.end());
        attach_runs(t.total_steps, runs);
        attach_builds(t.total_steps, run_sets);

        for (auto& [key, m] : modules)
        {
            std::vector<double> ms, bands, ids;
            for (std::size_t i = 0; i < runs.size(); ++i)
            {
                trend_point p;
                p.run = runs[i].id;
                auto found = per_run[i].find(key);
                if (found != per_run[i].end())
                {
                    p = found->second;
                }
                m.points.push_back(p);
                ms.push_back(p.cold_ms);
                bands.push_back(share_band(runs[i], p.cold_ms));
                ids.push_back(p.identities);
            }
            m.steps = detect_steps(ids, std::vector<double>(runs.size(), 0.0), series_measure::identities);
            auto module_ms_steps = detect_steps(ms, bands, series_measure::cold_ms);
            m.steps.insert(m.steps.end(), module_ms_steps.begin(), module_ms_steps.end());
            std::stable_sort(m.steps.begin(), m.steps.end(), [](const trend_step& a, const trend_step& b) { return a.index < b.index; });
            attach_runs(m.steps, runs);
            std::vector<identity_set> module_sets;
            for (std::size_t i = 0; i < runs.size(); ++i)
            {
                auto found = sets_per_run[i].find(key);
                module_sets.push_back(found != sets_per_run[i].end() ? found->second : identity_set{});
            }
            attach_builds(m.steps, module_sets);
        }
        for (auto& [key, m] : modules)
        {
            t.modules.push_back(std::move(m));
        }
        std::stable_sort(t.modules.begin(), t.modules.end(),
                         [](const module_trend& a, const module_trend& b)
                         { return a.points.back().cold_ms > b.points.back().cold_ms; });
        std::stable_sort(t.total_steps.begin(), t.total_steps.end(),
                         [](const trend_step& a, const trend_step& b) { return a.index < b.index; });
        return t;
    }

    void add_test_trends(history_trend& t, const std::vector<std::vector<test_cost>>& rows)
    {
        std::map<std::string, test_trend> by_name;
        // per test and run: what it built (nullopt: not listed, or the store does not know)
        std::map<std::string, std::vector<std::optional<identity_set>>> built;
        std::vector<identity_set> run_built(t.runs.size());  // every test's builds of a run
        std::vector<bool> run_known(t.runs.size(), true);
        for (std::size_t i = 0; i < rows.size() && i < t.runs.size(); ++i)
        {
            for (const auto& c : rows[i])
            {
                test_trend& tt = by_name[c.test];
                tt.test = c.test.empty() ? "collection / set-up" : c.test;
                tt.build_ms.resize(t.runs.size());
                tt.builds.resize(t.runs.size(), 0);
                tt.build_ms[i] = c.build_ms;
                tt.builds[i] = c.builds;
                auto& sets = built[c.test];
                sets.resize(t.runs.size());
                if (!c.identities_known)
                {
                    run_known[i] = false;
                    continue;
                }
                identity_set here;
                for (const auto& b : c.identities)
                {
                    here.insert(identity_words(b.module.str(), b.hash, b.device.str(), b.block_dim));
                }
                run_built[i].insert(here.begin(), here.end());
                sets[i] = std::move(here);
            }
        }
        for (auto& [name, tt] : by_name)
        {
            const auto& sets = built[name];
            // the runs that listed the test (a run that did not is no level)
            std::vector<std::size_t> at;
            bool known = true;
            for (std::size_t i = 0; i < tt.build_ms.size(); ++i)
            {
                if (tt.build_ms[i])
                {
                    at.push_back(i);
                    known = known && sets[i].has_value() && run_known[i];
                }
            }
            if (known)
            {
                // A step is a change in what the test built: an identity no test of the run
                // before built (the code changed), or one it built that no test builds any more.
                // An identity another test built before (xdist drew the tests otherwise, or the
                // order changed) moved, and time alone, with the same builds, is not a step.
                for (std::size_t k = 1; k < at.size(); ++k)
                {
                    const std::size_t i = at[k];
                    const std::size_t before = at[k - 1];
                    identity_set fresh;
                    identity_set gone;
                    for (const auto& x : *sets[i])
                    {
                        if (!run_built[before].count(x))
                        {
                            fresh.insert(x);
                        }
                    }
                    for (const auto& x : *sets[before])
                    {
                        if (!run_built[i].count(x))
                        {
                            gone.insert(x);
                        }
                    }
                    if (fresh.empty() && gone.empty())
                    {
                        continue;
                    }
                    trend_step st;
                    st.index = static_cast<int>(i);
                    st.measure = series_measure::identities;
                    st.before = static_cast<double>(tt.builds[before]);
                    st.after = static_cast<double>(tt.builds[i]);
                    st.built = set_changes(gone, fresh);
                    tt.steps.push_back(std::move(st));
                }
            }
            else
            {
                // a store that did not keep what its tests built: time steps, judged as before
                std::vector<double> ms;
                std::vector<double> bands;
                for (const auto i : at)
                {
                    ms.push_back(*tt.build_ms[i]);
                    bands.push_back(share_band(t.runs[i], *tt.build_ms[i]));
                }
                for (auto s : detect_steps(ms, bands, series_measure::cold_ms))
                {
                    s.index = static_cast<int>(at[static_cast<std::size_t>(s.index)]);
                    tt.steps.push_back(s);
                }
            }
            attach_runs(tt.steps, t.runs);
            t.tests.push_back(std::move(tt));
        }
        std::stable_sort(t.tests.begin(), t.tests.end(), [](const test_trend& a, const test_trend& b)
                         { return a.build_ms.back().value_or(-1.0) > b.build_ms.back().value_or(-1.0); });
    }

    machine_table build_machine_table(const std::string& command,
                                      const std::vector<history_run>& latest_per_machine,
                                      const std::vector<std::vector<history_identity>>& rows)
    {
        machine_table table;
        table.command = command;
        std::map<module_key, std::size_t> index;
        for (std::size_t m = 0; m < latest_per_machine.size(); ++m)
        {
            table.machines.push_back(latest_per_machine[m].fp.machine);
            table.runs.push_back(latest_per_machine[m].id);
        }
        for (std::size_t m = 0; m < latest_per_machine.size() && m < rows.size(); ++m)
        {
            for (const auto& row : rows[m])
            {
                auto [it, fresh] = index.emplace(module_key{row.module, row.device}, table.rows.size());
                if (fresh)
                {
                    machine_table::row r;
                    r.module = row.module;
                    r.device = row.device;
                    r.ms.assign(latest_per_machine.size(), std::nullopt);
                    r.identities.assign(latest_per_machine.size(), 0);
                    table.rows.push_back(std::move(r));
                }
                auto& r = table.rows[it->second];
                r.ms[m] = r.ms[m].value_or(0.0) + row.ms;
                r.identities[m] += 1;
            }
        }
        std::stable_sort(table.rows.begin(), table.rows.end(),
                         [](const machine_table::row& a, const machine_table::row& b)
                         {
                             auto top = [](const machine_table::row& r)
                             {
                                 double v = 0.0;
                                 for (const auto& x : r.ms)
                                 {
                                     v = std::max(v, x.value_or(0.0));
                                 }
                                 return v;
                             };
                             return top(a) > top(b);
                         });
        return table;
    }

    history_diff build_history_diff(const history_run& a, const std::vector<history_identity>& a_rows,
                                    const history_run& b, const std::vector<history_identity>& b_rows,
                                    const std::vector<test_cost>& b_tests)
    {
        history_diff d;
        d.a = a;
        d.b = b;
        d.changed = fingerprint_changes(a.fp, b.fp);
        if (a.fp.command != b.fp.command)
        {
            d.changed.insert(d.changed.begin(), "command " + a.fp.command + " -> " + b.fp.command);
        }
        if (a.fp.machine != b.fp.machine)
        {
            d.changed.insert(d.changed.begin(), "machine " + a.fp.machine + " -> " + b.fp.machine);
        }
        struct side
        {
            double ms = 0.0;
            std::set<std::string> hashes;
        };
        std::map<module_key, std::pair<side, side>> modules;
        for (const auto& r : a_rows)
        {
            auto& m = modules[{r.module, r.device}].first;
            m.ms += r.ms;
            m.hashes.insert(r.hash.substr(0, 7) + (r.block_dim ? "@" + std::to_string(*r.block_dim) : ""));
        }
        for (const auto& r : b_rows)
        {
            auto& m = modules[{r.module, r.device}].second;
            m.ms += r.ms;
            m.hashes.insert(r.hash.substr(0, 7) + (r.block_dim ? "@" + std::to_string(*r.block_dim) : ""));
        }
        for (const auto& [key, sides] : modules)
        {
            const auto& [x, y] = sides;
            if (x.hashes == y.hashes && std::fabs(y.ms - x.ms) <= noise_floor_fraction * std::max(x.ms, y.ms))
            {
                ++d.unchanged;
                continue;
            }
            history_diff::module_change c;
            c.module = key.first;
            c.device = key.second;
            c.a_ms = x.ms;
            c.b_ms = y.ms;
            c.delta_ms = y.ms - x.ms;
            c.a_identities = static_cast<int>(x.hashes.size());
            c.b_identities = static_cast<int>(y.hashes.size());
            std::set_difference(y.hashes.begin(), y.hashes.end(), x.hashes.begin(), x.hashes.end(), std::back_inserter(c.added));
            std::set_difference(x.hashes.begin(), x.hashes.end(), y.hashes.begin(), y.hashes.end(), std::back_inserter(c.removed));
            for (const auto& added : c.added)
            {
                for (const auto& test : b_tests)
                {
                    for (const auto& built : test.identities)
                    {
                        const std::string key = built.hash.substr(0, 7)
                                                + (built.block_dim ? "@" + std::to_string(*built.block_dim) : "");
                        if (built.module.str() == c.module && built.device.str() == c.device && key == added)
                        {
                            c.paid_by[added].push_back(test.test.empty() ? "collection / set-up" : test.test);
                            break;
                        }
                    }
                }
            }
            d.modules.push_back(std::move(c));
        }
        std::stable_sort(d.modules.begin(), d.modules.end(),
                         [](const history_diff::module_change& p, const history_diff::module_change& q)
                         { return std::fabs(p.delta_ms) > std::fabs(q.delta_ms); });
        return d;
    }
}
