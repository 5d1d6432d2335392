#include "xwarp/analysis/summarize.hpp"
#include "xwarp/analysis/suite.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "xwarp/analysis/compare.hpp"
#include "xwarp/analysis/diagnose.hpp"
#include "xwarp/analysis/stats.hpp"
#include "xwarp/model/format.hpp"
#include "xwarp/model/release.hpp"

namespace xwarp
{
    namespace
    {
        std::string seconds(double ms)
        {
            return format_fixed(ms / 1000.0, 2) + " s";
        }

        double sum_work(const run_result& run)
        {
            double t = 0.0;
            for (const auto& l : run.module_loads)
            {
                t += l.work_ms();
            }
            return t;
        }

        // The loading threads' CPU time summed over a pass's loads; none when a load did not
        // record it (parsed from Warp's log, or a shim before it was recorded).
        std::optional<double> sum_cpu(const run_result& run)
        {
            double t = 0.0;
            for (const auto& l : run.module_loads)
            {
                if (!l.cpu_ms)
                {
                    return std::nullopt;
                }
                t += *l.cpu_ms;
            }
            return t;
        }

        // How far a pass's builds ran at the same time: the summed duration of its compiled loads
        // over the time during which at least one of them ran, from the spans the shim recorded
        // (process start + offset, the load wrapper's duration). A load nested inside another
        // load of the same thread counts once. Empty, with the reason, where it means nothing.
        std::optional<double> overlap_of(const run_result& run, std::string& why)
        {
            struct span
            {
                double start;
                double end;
                std::int64_t pid;
                std::string thread;
            };
            std::map<std::int64_t, double> started;
            for (const auto& p : run.processes)
            {
                started[p.pid] = p.started_unix * 1000.0;
            }
            std::vector<span> spans;
            for (const auto& l : run.module_loads)
            {
                if (l.status != load_status::compiled)
                {
                    continue;
                }
                if (l.source != figure_source::hook || !started.count(l.pid))
                {
                    why = "the builds came from Warp's log lines, which carry no start times";
                    return std::nullopt;
                }
                const double d = l.total_ms ? *l.total_ms : l.work_ms();
                const double s0 = started[l.pid] + l.t_start_ms;
                spans.push_back({s0, s0 + d, l.pid, l.thread});
            }
            if (spans.size() < 2)
            {
                why = spans.empty() ? "no module was compiled" : "one build: nothing could overlap";
                return std::nullopt;
            }
            std::sort(spans.begin(), spans.end(), [](const span& a, const span& b) { return a.start < b.start; });
            std::vector<span> outer;
            std::map<std::pair<std::int64_t, std::string>, double> lane_end;  // end of the lane's current outer span
            for (const auto& sp : spans)
            {
                auto& end = lane_end.try_emplace({sp.pid, sp.thread}, -1e300).first->second;
                if (sp.end <= end)
                {
                    continue;  // nested inside an earlier load of its thread
                }
                end = sp.end;
                outer.push_back(sp);
            }
            double summed = 0.0;
            double covered = 0.0;
            double reach = -1e300;
            for (const auto& sp : outer)
            {
                summed += sp.end - sp.start;
                if (sp.end > reach)
                {
                    covered += sp.end - std::max(sp.start, reach);
                    reach = sp.end;
                }
            }
            if (covered <= 0.0)
            {
                why = "the builds recorded no duration";
                return std::nullopt;
            }
            return summed / covered;
        }

        template <typename String>
        void add_unique(std::vector<String>& v, const String& s);

        // --nvrtc-trace: the phases NVRTC traced for this CUDA build (its folder wp_<module>_<hash7>
        // names the identity), placed inside the load's native compile on NVRTC's own clock,
        // counted from its first event.
        void add_nvrtc_spans(const run_result& run,
                             const module_load& l,
                             const timeline_span& load,
                             double compile_start_ms,
                             std::vector<timeline_span>& spans)
        {
            if (l.status != load_status::compiled || l.device.str().rfind("cuda", 0) != 0)
            {
                return;
            }
            for (const auto& trace : run.nvrtc_traces)
            {
                if (trace.hash_prefix.empty() || l.hash.str().rfind(trace.hash_prefix, 0) != 0 || trace.events.empty())
                {
                    continue;
                }
                double origin = 0.0;
                bool first = true;
                for (const auto& e : trace.events)
                {
                    const double ts = e.value("ts", 0.0);
                    origin = first ? ts : std::min(origin, ts);
                    first = false;
                }
                for (const auto& e : trace.events)
                {
                    timeline_span part = load;
                    part.kind = span_kind::nvrtc;
                    std::string detail = e.value("name", std::string("?"));
                    if (e.contains("args") && e["args"].is_object() && e["args"].contains("detail")
                        && e["args"]["detail"].is_string() && !e["args"]["detail"].get<std::string>().empty())
                    {
                        detail += ": " + e["args"]["detail"].get<std::string>();
                    }
                    part.detail = std::move(detail);
                    part.start_ms = compile_start_ms + (e.value("ts", 0.0) - origin) / 1000.0;
                    part.ms = e.value("dur", 0.0) / 1000.0;
                    spans.push_back(std::move(part));
                }
                return;
            }
        }

        // The timeline of one pass: each load and its phases, from the spans the shim recorded,
        // in ms since the pass's first process started. Loads from Warp's log have no times.
        build_timeline timeline_of(const sample& smp)
        {
            build_timeline t;
            t.sample = smp.index;
            t.wall_ms = smp.cold.wall_ms;
            const run_result& run = smp.cold;
            std::map<std::int64_t, double> started;
            double first = 0.0;
            bool any = false;
            std::size_t span_count = 0;  // sized once: a vector grown by doubling holds up to twice its spans
            for (const auto& l : run.module_loads)
            {
                span_count += 1 + l.phases.size();
            }
            t.spans.reserve(span_count);
            for (const auto& p : run.processes)
            {
                started[p.pid] = p.started_unix * 1000.0;
                first = any ? std::min(first, started[p.pid]) : started[p.pid];
                any = true;
            }
            for (const auto& l : run.module_loads)
            {
                if (l.source != figure_source::hook || !started.count(l.pid))
                {
                    continue;
                }
                const double base = started[l.pid] - first;
                const std::string lane = "pid " + std::to_string(l.pid) + " / " + (l.thread.empty() ? "?" : l.thread);
                add_unique(t.lanes, lane);
                timeline_span load;
                load.pid = l.pid;
                load.thread = l.thread;
                load.kind = span_kind::load;
                load.module = l.module;
                load.hash = l.short_hash();
                load.device = l.device;
                load.block_dim = l.block_dim;
                load.status = l.status;
                load.triggered_by = l.triggered_by;
                load.start_ms = base + l.t_start_ms;
                load.ms = l.total_ms ? *l.total_ms : l.work_ms();
                t.spans.push_back(load);
                std::optional<double> compile_start;
                for (const auto& ph : l.phases)
                {
                    const auto kind = phase_kind(ph.name);
                    if (!kind)
                    {
                        continue;  // outside the records' contract (both readers refuse one)
                    }
                    timeline_span part = load;
                    part.kind = *kind;
                    part.start_ms = base + ph.start_ms;
                    part.ms = ph.ms;
                    t.spans.push_back(part);
                    if (*kind == span_kind::compile && !compile_start)
                    {
                        compile_start = part.start_ms;
                    }
                }
                add_nvrtc_spans(run, l, load, compile_start.value_or(load.start_ms), t.spans);
            }
            return t;
        }

        template <typename String>
        void add_unique(std::vector<String>& v, const String& s)
        {
            if (std::find(v.begin(), v.end(), s) == v.end())
            {
                v.push_back(s);
            }
        }
    }

    identity_key key_of(const module_load& l)
    {
        return {l.module, l.hash, l.device, l.block_dim.value_or(-1)};
    }


    std::string describe_failure(const run_result& run, std::optional<double> timeout_s)
    {
        if (!run.spawn_error.empty())
        {
            return "could not start: " + run.spawn_error;
        }
        if (run.interrupted)
        {
            return "interrupted";
        }
        if (run.timed_out)
        {
            return "timed out after " + (timeout_s ? format_fixed(*timeout_s, 1) + " s" : std::string("the time limit"))
                   + " (process group killed)";
        }
        if (run.term_signal)
        {
            // A report may come from anywhere: only name signal numbers that exist. The names are
            // Linux's own table (x86_64 and aarch64 share it), not sigabbrev_np, which glibc has only
            // since 2.32 while the wheels run on 2.28.
            static constexpr std::array<const char*, 32> linux_signal_names = {
                nullptr, "HUP",  "INT",  "QUIT", "ILL",  "TRAP", "ABRT", "BUS",    "FPE",  "KILL",  "USR1",
                "SEGV",  "USR2", "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP",   "TSTP", "TTIN",
                "TTOU",  "URG",  "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO",  "PWR",    "SYS"};
            const int sig = *run.term_signal;
            const char* name = sig > 0 && sig < static_cast<int>(linux_signal_names.size()) ? linux_signal_names[sig]
                                                                                             : nullptr;
            return "killed by signal " + std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : "");
        }
        if (!run.records_lost.empty() && run.exit_code && *run.exit_code == 0)
        {
            return "its records were not all read, so it is not judged: " + run.records_lost;
        }
        if (run.exit_code && *run.exit_code != 0)
        {
            return "exited with code " + std::to_string(*run.exit_code)
                   + (run.error_line.empty() ? std::string()
                                             : " (" + (run.error_line.size() > 300 ? run.error_line.substr(0, 297) + "..."
                                                                                   : run.error_line) + ")");
        }
        return "ok";
    }

    void summarize(report& r)
    {
        summarize_figures(r);
        draw_timeline(r);
    }

    void draw_timeline(report& r)
    {
        // The good sample whose cold wall is nearest the median summarize_figures found: a
        // typical run, not the fastest or the slowest (the first of equals).
        r.result.timeline = {};
        const double med = r.result.cold_wall_ms.median.value_or(0.0);
        const sample* typical = nullptr;
        for (const auto& smp : r.samples)
        {
            if (smp.ok() && (!typical || std::fabs(smp.cold.wall_ms - med) < std::fabs(typical->cold.wall_ms - med)))
            {
                typical = &smp;
            }
        }
        if (typical)
        {
            r.result.timeline = timeline_of(*typical);
        }
    }

    namespace
    {
        // What summarize_figures makes, a step at a time: the good samples (and why the others
        // failed), every load counted by identity, the statistics and where each figure came
        // from, the flags, and with the whole scope the tables by identity.
        class figures
        {
            // Modules that loaded under several identities, gathered as the loads are counted,
            // by identity index: looked up again by their strings, a report of 100,000
            // identities hashed every load's strings twice more. A group's members are few
            // (one per hash it loaded under): a list, not a map of lists (an allocation more per
            // module); its block_dims are its members', in first-seen order.
            struct group_acc
            {
                std::vector<std::pair<int, std::size_t>> members;  // (block_dim, identity), first-seen, each once
                bool sets_known = true;
            };
            // keyed by views of the loads' (module, device), which outlive these tables
            using module_device = std::pair<std::string_view, std::string_view>;

        public:
            figures(report& r, summary_scope scope) : m_r(r), m_tables(scope == summary_scope::whole) {}

            void make()
            {
                split_samples();
                if (!m_s.valid)
                {
                    if (m_s.samples_total > 0)
                    {
                        m_s.flags.push_back({flag_id::all_samples_failed,
                                             "every sample failed: there is no measurement (see the warnings and the "
                                             "command's output)"});
                    }
                    m_r.result = std::move(m_s);
                    return;
                }
                if (m_tables)
                {
                    // The first sample's loads bound its identities: sized once, the tables are
                    // not copied as they grow (grown by doubling, the old and the new were held
                    // together).
                    const std::size_t loads = m_good.front()->cold.module_loads.size();
                    m_group_index.reserve(loads);
                    m_groups.reserve(loads);
                    m_ident.reserve(loads);
                    m_group_of.reserve(loads);
                    m_first_load_of.reserve(loads);
                }
                // sized for the first sample's loads: grown by doubling, a table of 100,000
                // identities was walked again at every growth
                m_index_of.reserve(m_good.front()->cold.module_loads.size());
                for (const sample* smp : m_good)
                {
                    m_failed_tests.insert(smp->cold.failed_tests.begin(), smp->cold.failed_tests.end());
                }
                for (std::size_t gi = 0; gi < m_good.size(); ++gi)
                {
                    count_sample(gi);
                }
                // The two hash tables are done with: freed now, before the tables the summary
                // keeps are made, those take the holes instead of leaving them between them (at
                // 10,000 identities the diagnosis then grew the heap by 0.7 MB more).
                release(m_index_of);
                release(m_group_index);
                statistics();
                sources();
                flags();
                if (m_tables)
                {
                    identity_tables();
                    rebuilt_groups();
                    launches_per_kernel();
                    suite_tables(m_good.front()->cold, m_s);
                }
                m_r.result = std::move(m_s);
            }

        private:
            // The good samples; a warning for each other one, and every pass's notes.
            void split_samples()
            {
                m_s.samples_total = static_cast<int>(m_r.samples.size());
                for (const auto& smp : m_r.samples)
                {
                    if (smp.ok())
                    {
                        m_good.push_back(&smp);
                    }
                    else
                    {
                        std::string why;
                        if (!smp.cold.ok())
                        {
                            why = "cold pass " + describe_failure(smp.cold, m_r.run_settings.timeout_s);
                        }
                        else if (!smp.warm)
                        {
                            why = "no warm pass was recorded";
                        }
                        else
                        {
                            why = "warm pass " + describe_failure(*smp.warm, m_r.run_settings.timeout_s);
                        }
                        m_s.warnings.push_back("sample " + std::to_string(smp.index) + ": " + why);
                    }
                    for (const auto* run : {&smp.cold, smp.warm ? &*smp.warm : nullptr})
                    {
                        if (!run)
                        {
                            continue;
                        }
                        for (const auto& n : run->notes)
                        {
                            add_unique(m_s.warnings, n);
                        }
                    }
                }
                m_s.samples_ok = static_cast<int>(m_good.size());
                m_s.valid = !m_good.empty();
                if (m_s.valid && m_s.samples_ok < m_s.samples_total)
                {
                    m_s.warnings.insert(m_s.warnings.begin(),
                                        std::to_string(m_s.samples_total - m_s.samples_ok) + " of "
                                            + std::to_string(m_s.samples_total) + " samples failed; statistics use the "
                                            + std::to_string(m_s.samples_ok) + " good one(s)");
                }
            }

            // One good sample's clocks and counts.
            void count_figures(const sample& smp)
            {
                const run_result& cold = smp.cold;
                const run_result* warm = smp.warm ? &*smp.warm : nullptr;  // none in a one-pass sample
                m_cold_wall.push_back(cold.wall_ms);
                const double el = warm ? cold.wall_ms - warm->wall_ms : 0.0;
                if (warm)
                {
                    m_warm_wall.push_back(warm->wall_ms);
                    m_elapsed.push_back(el);
                }
                const double cm = sum_work(cold);
                m_cold_mod.push_back(cm);
                if (warm)
                {
                    m_warm_mod.push_back(sum_work(*warm));
                }
                // A CPU figure for a side only when every good pass has one: a median over some
                // samples would compare other samples than the wall clocks do.
                const auto cold_cpu = sum_cpu(cold);
                m_cold_cpu_whole = m_cold_cpu_whole && cold_cpu.has_value();
                m_cold_cpu.push_back(cold_cpu.value_or(0.0));
                if (warm)
                {
                    const auto warm_cpu = sum_cpu(*warm);
                    m_warm_cpu_whole = m_warm_cpu_whole && warm_cpu.has_value();
                    m_warm_cpu.push_back(warm_cpu.value_or(0.0));
                }
                if (cold.load)
                {
                    m_busy.push_back(cold.load->busy_cpus(cold.wall_ms));
                }
                double nat = 0.0;
                double bytes = 0.0;
                bool have_bytes = false;
                for (const auto& l : cold.module_loads)
                {
                    nat += l.native_ms.value_or(0.0);
                    if (l.source_bytes)
                    {
                        bytes += static_cast<double>(*l.source_bytes);
                        have_bytes = true;
                    }
                    (l.warp_ms ? m_with_warp_ms : m_without_warp_ms)++;
                    if (l.native_ms)
                    {
                        (l.source == figure_source::log ? m_native_log : m_native_hook) = true;
                    }
                }
                m_native.push_back(nat);
                std::string no_overlap;
                if (auto o = overlap_of(cold, no_overlap))
                {
                    m_overlap.push_back(*o);
                }
                else if (m_s.overlap_note.empty())
                {
                    m_s.overlap_note = no_overlap;
                }
                // Compile elapsed misses builds the warm pass repeats (a cache thrown away), and
                // module work over-counts parallel builds: take the larger, capped at the wall.
                m_share.push_back(cold.wall_ms > 0 ? std::max(el, std::min(cm, cold.wall_ms)) / cold.wall_ms : 0.0);
                m_src.push_back(have_bytes ? bytes : static_cast<double>(cold.cache.source_bytes));
                m_cache_binaries.push_back(cold.cache.binary_files);
                m_cache_bytes.push_back(static_cast<double>(cold.cache.source_bytes + cold.cache.binary_bytes + cold.cache.lto_bytes));
                m_lto.push_back(static_cast<double>(cold.cache.lto_files));
                m_launches.push_back(static_cast<double>(cold.launch_total));
                m_load_sources.insert(cold.load_source);
                m_any_process = m_any_process || !cold.processes.empty();
                for (const auto& p : cold.processes)
                {
                    m_launch_hook = m_launch_hook || field_or(p.hooks, "launch", false);
                }
                if (cold.cache.lto_files > 0)
                {
                    m_any_lto = true;
                    m_lto_work += cm;
                    m_lto_native += nat;
                }
                // a warm pass compiled again what its cold pass had just cached: an identity the cold
                // pass loaded (a suite's warm pass can build others, its tests split otherwise over
                // its workers: that says nothing about the cache)
                if (warm)
                {
                    std::unordered_set<identity_key, tuple_hash> cold_ids;
                    for (const auto& l : cold.module_loads)
                    {
                        cold_ids.insert(key_of(l));
                    }
                    if (std::any_of(warm->module_loads.begin(), warm->module_loads.end(), [&](const module_load& l)
                                    { return l.status == load_status::compiled && cold_ids.count(key_of(l)) > 0; }))
                    {
                        ++m_warm_compiled_samples;
                    }
                }
            }

            // What a failed load says in the identities table: Warp's first line, the test it
            // failed in, and whether that test passed (a build it expects to fail).
            std::string failure_of(const module_load& l) const
            {
                if (l.status != load_status::error)
                {
                    return {};
                }
                std::string first = l.error ? l.error->str() : std::string("no error text recorded");
                first = first.substr(0, first.find('\n'));
                if (first.size() > 200)
                {
                    first = first.substr(0, 197) + "...";
                }
                if (l.test.empty())
                {
                    return first;
                }
                return first + " (in " + l.test.str() + (m_failed_tests.count(l.test.str()) ? ", which failed)" : ", which passed: a build the test expects to fail)");
            }

            // A load's identity (and with the tables, its module's group), added when new.
            std::size_t identity_of(const module_load& l, std::size_t& known)
            {
                const auto [at, added] = m_index_of.try_emplace(key_of(l), known);
                const std::size_t i = at->second;
                known += added ? 1 : 0;
                if (!m_tables)
                {
                    return i;
                }
                const auto [group_at, new_group] =
                    m_group_index.try_emplace(module_device{l.module, l.device}, m_groups.size());
                if (new_group)
                {
                    m_groups.emplace_back();
                }
                group_acc& g = m_groups[group_at->second];
                if (added)
                {
                    m_group_of.push_back(group_at->second);
                    identity id;
                    id.module = l.module;
                    id.hash = l.hash;
                    id.device = l.device;
                    id.block_dim = l.block_dim;
                    id.status = l.status;
                    id.failure = failure_of(l);
                    id.kernels = l.snapshot ? static_cast<int>(l.snapshot->kernels.size()) : -1;
                    id.builds = 0;
                    m_ident.push_back(std::move(id));
                    m_first_load_of.push_back(&l);
                }
                add_unique(g.members, std::pair<int, std::size_t>(l.block_dim.value_or(-1), i));
                g.sets_known = g.sets_known && l.snapshot.has_value();
                return i;
            }

            void count_sample(std::size_t gi)
            {
                const sample& smp = *m_good[gi];
                count_figures(smp);
                std::vector<char> in_here;  // by identity index
                std::vector<double> here_ms;
                std::vector<int> here_builds;
                std::vector<std::size_t> here;  // the identities this pass loaded
                for (const auto& l : smp.cold.module_loads)
                {
                    const std::size_t i = identity_of(l, m_known);
                    if (in_here.size() < m_known)
                    {
                        in_here.resize(m_known, 0);
                        here_ms.resize(m_known, 0.0);
                        here_builds.resize(m_known, 0);
                    }
                    if (!in_here[i])
                    {
                        in_here[i] = 1;
                        here.push_back(i);
                    }
                    here_ms[i] += l.work_ms();
                    here_builds[i] += l.status == load_status::compiled ? 1 : 0;
                }
                here_ms.resize(m_known, 0.0);
                in_here.resize(m_known, 0);
                for (const std::size_t i : here)
                {
                    if (m_tables)
                    {
                        m_ident[i].samples_seen++;
                        if (gi == 0)
                        {
                            m_ident[i].builds = here_builds[i];
                        }
                    }
                }
                std::sort(here.begin(), here.end());
                if (gi == 0)
                {
                    m_first_sample_ids = here;
                }
                else if (here != m_first_sample_ids)
                {
                    m_consistent = false;
                }
                m_ids.push_back(static_cast<double>(here.size()));
                m_s.identities_per_sample.push_back(static_cast<int>(here.size()));
                m_ms_by_sample.push_back(std::move(here_ms));
                m_seen_by_sample.push_back(std::move(in_here));
            }

            void statistics()
            {
                m_s.cold_wall_ms = make_stat(m_cold_wall);
                m_s.warm_wall_ms = make_stat(m_warm_wall);
                m_s.compile_elapsed_ms = make_stat(m_elapsed);
                m_s.cold_module_ms = make_stat(m_cold_mod);
                m_s.warm_module_ms = make_stat(m_warm_mod);
                if (m_cold_cpu_whole && !m_cold_cpu.empty())
                {
                    m_s.cold_module_cpu_ms = make_stat(m_cold_cpu);
                    m_s.module_clock = clock::cold_module_cpu;
                }
                if (m_warm_cpu_whole && !m_warm_cpu.empty())
                {
                    m_s.warm_module_cpu_ms = make_stat(m_warm_cpu);
                }
                m_s.busy_cpus = make_stat(m_busy);
                const auto& cpu = m_s.cold_module_cpu_ms.values;
                if (cpu.size() >= 2 && m_busy.size() == cpu.size() && m_s.cold_module_cpu_ms.median
                    && *m_s.cold_module_cpu_ms.median > 0)
                {
                    const auto [least, most] = std::minmax_element(cpu.begin(), cpu.end());
                    const auto [quiet, busy] = std::minmax_element(m_busy.begin(), m_busy.end());
                    m_s.cpu_under_load = summary::clock_under_load{100.0 * (*most - *least) / *m_s.cold_module_cpu_ms.median,
                                                                   *quiet, *busy, static_cast<int>(cpu.size())};
                }
                m_s.native_ms = make_stat(m_native);
                m_s.overlap_factor = make_stat(m_overlap);
                if (!m_overlap.empty())
                {
                    m_s.overlap_note.clear();
                }
                m_s.identity_count = make_stat(m_ids);
                m_s.source_bytes = make_stat(m_src);
                m_s.cache_binaries = make_stat(m_cache_binaries);
                m_s.cache_bytes = make_stat(m_cache_bytes);
                m_s.lto_artifacts = make_stat(m_lto);
                m_s.launch_count = make_stat(m_launches);
                m_s.compile_share = make_stat(m_share);
                m_s.identities_consistent = m_consistent;
            }

            // Where the figures came from: the shim's hooks, Warp's log, or both.
            void sources()
            {
                m_s.load_source = m_load_sources.size() == 1 ? *m_load_sources.begin() : figure_source::mixed;
                if (m_s.load_source == figure_source::log)
                {
                    m_s.module_ms_source = figure_source::log;
                }
                else if (m_without_warp_ms == 0)
                {
                    m_s.module_ms_source = figure_source::warp_timer;
                }
                else if (m_with_warp_ms == 0)
                {
                    m_s.module_ms_source = figure_source::wrapper;
                }
                else
                {
                    m_s.module_ms_source = figure_source::mixed;
                }
                m_s.native_ms_source = m_native_hook ? (m_native_log ? figure_source::mixed : figure_source::hook)
                                                   : (m_native_log ? figure_source::log : figure_source::none);
            }

            void flags()
            {
                auto& s = m_s;
                const double med_cold_mod = s.cold_module_ms.median.value_or(0.0);
                const double med_warm_mod = s.warm_module_ms.median.value_or(0.0);
                if (m_warm_compiled_samples > 0 || (med_cold_mod > 0 && med_warm_mod > warm_reuse_threshold * med_cold_mod))
                {
                    std::string why = m_warm_compiled_samples > 0
                                          ? std::to_string(m_warm_compiled_samples) + " warm pass(es) compiled modules again"
                                          : "warm module work is " + format_fixed(100.0 * med_warm_mod / med_cold_mod, 0)
                                                + "% of cold";
                    s.flags.push_back({flag_id::cache_not_reused, "the warm pass did not reuse the cache the cold pass filled: " + why});
                }
                if (s.overlap_factor.median && *s.overlap_factor.median > overlap_flag_threshold)
                {
                    s.flags.push_back({flag_id::builds_overlapped,
                                       "summed build time is " + format_fixed(*s.overlap_factor.median, 2)
                                           + "x the time during which a build ran: builds ran in parallel, judge changes "
                                             "on compile elapsed"});
                }
                if (!m_any_process)
                {
                    s.flags.push_back({flag_id::no_warp_process, "no process imported Warp under the shim: nothing was recorded"});
                }
                else if (s.launch_count.median.value_or(0.0) == 0.0)
                {
                    s.flags.push_back({flag_id::no_launches, m_launch_hook
                                                          ? "no kernel launches were recorded: compare cannot verify the workload"
                                                          : "the launch hook was not installed: launches were not recorded"});
                }
                if (s.compile_share.median && *s.compile_share.median < small_share_threshold)
                {
                    s.flags.push_back({flag_id::compile_small_share,
                                       "compilation is a small share of wall time: "
                                           + format_fixed(100.0 * *s.compile_share.median, 1) + "% of the cold run ("
                                           + seconds(std::max(0.0, s.compile_elapsed_ms.median.value_or(0.0))) + " of "
                                           + seconds(s.cold_wall_ms.median.value_or(0.0)) + "); the time goes elsewhere"});
                }
                if (m_any_lto && m_lto_work > 0 && (m_lto_work - m_lto_native) / m_lto_work > link_dominated_threshold)
                {
                    s.flags.push_back({flag_id::link_dominated,
                                       "LTO artifacts were built and "
                                           + format_fixed(100.0 * (m_lto_work - m_lto_native) / m_lto_work, 0)
                                           + "% of module work was outside the NVRTC compile (MathDx LTO generation)"});
                }
                if (!m_consistent)
                {
                    s.flags.push_back({flag_id::samples_disagree, "the samples did not load the same module identities; see "
                                                           "identities seen in fewer samples than ran"});
                }
            }

            // The identities heaviest first (ties in first-seen order), each with the median of
            // its ms over the samples that loaded it, and each module's totals in the order its
            // heaviest identity comes; a module is its identities' group.
            void identity_tables()
            {
                m_ms_of.resize(m_ident.size());
                std::vector<double> per_sample;
                for (std::size_t i = 0; i < m_ident.size(); ++i)
                {
                    per_sample.clear();
                    for (std::size_t gi = 0; gi < m_ms_by_sample.size(); ++gi)
                    {
                        if (i < m_seen_by_sample[gi].size() && m_seen_by_sample[gi][i])
                        {
                            per_sample.push_back(m_ms_by_sample[gi][i]);
                        }
                    }
                    m_ms_of[i] = median(per_sample).value_or(0.0);
                }
                release(m_ms_by_sample);
                release(m_seen_by_sample);
                std::vector<std::size_t> by_time(m_ident.size());
                std::iota(by_time.begin(), by_time.end(), std::size_t{0});
                std::stable_sort(by_time.begin(), by_time.end(), [&](std::size_t a, std::size_t b) { return m_ms_of[a] > m_ms_of[b]; });
                m_s.identities.reserve(m_ident.size());
                m_s.modules.reserve(m_groups.size());
                m_builds_of.resize(m_ident.size());
                constexpr std::size_t none = static_cast<std::size_t>(-1);
                std::vector<std::size_t> module_of_group(m_groups.size(), none);
                for (const std::size_t i : by_time)
                {
                    m_builds_of[i] = m_ident[i].builds;
                    identity id = std::move(m_ident[i]);
                    id.ms = m_ms_of[i];
                    std::size_t& m = module_of_group[m_group_of[i]];
                    if (m == none)
                    {
                        m = m_s.modules.size();
                        m_s.modules.push_back({id.module, id.device, 0, 0, 0.0});
                    }
                    m_s.modules[m].identities++;
                    m_s.modules[m].builds += id.builds;
                    m_s.modules[m].ms += id.ms;
                    m_s.identities.push_back(std::move(id));
                }
                release(m_ident);  // each moved into the summary's list; the groups read m_builds_of
                std::stable_sort(m_s.modules.begin(), m_s.modules.end(),
                                 [](const module_total& a, const module_total& b) { return a.ms > b.ms; });
            }

            // Several hashes at one block_dim: hash churn, with why each hash gave way to the next
            // (from their first loads' content snapshots).
            void churn_group(const std::vector<std::size_t>& members, int bd, const group_acc& g)
            {
                rebuild_group rg;
                rg.module = m_first_load_of[members.front()]->module;  // shared, not copied
                rg.device = m_first_load_of[members.front()]->device;
                rg.kind = rebuild_kind::hash_churn;
                rg.block_dims = {bd};
                rg.kernel_sets_known = g.sets_known;
                for (const std::size_t i : members)
                {
                    rg.hashes.push_back(m_first_load_of[i]->hash);
                    rg.ms += m_ms_of[i];
                    rg.builds += m_builds_of[i];
                }
                for (std::size_t k = 0; k + 1 < members.size(); ++k)
                {
                    rg.moves.push_back(describe_hash_change(
                        classify_hash_change(*m_first_load_of[members[k]], *m_first_load_of[members[k + 1]])));
                }
                m_s.rebuilt.push_back(std::move(rg));
            }

            // Several block_dims of one module: block_dim spread.
            void spread_group(const std::vector<int>& bds, const group_acc& g)
            {
                rebuild_group rg;
                // the first member is the first of the first block_dim
                const module_load* first = m_first_load_of[g.members.front().second];
                rg.module = first->module;  // shared, not copied
                rg.device = first->device;
                rg.kind = rebuild_kind::block_dim_spread;
                rg.block_dims = bds;
                rg.kernel_sets_known = g.sets_known;
                for (int bd : bds)
                {
                    for (const auto& [member_bd, i] : g.members)
                    {
                        if (member_bd == bd)
                        {
                            rg.hashes.push_back(m_first_load_of[i]->hash);
                            rg.ms += m_ms_of[i];
                            rg.builds += m_builds_of[i];
                        }
                    }
                }
                m_s.rebuilt.push_back(std::move(rg));
            }

            // Modules that loaded under several identities, per (module, device).
            void rebuilt_groups()
            {
                for (const group_acc& g : m_groups)
                {
                    std::vector<int> bds;  // in first-seen order
                    for (const auto& [bd, i] : g.members)
                    {
                        add_unique(bds, bd);
                    }
                    std::vector<std::size_t> members;
                    for (int bd : bds)
                    {
                        members.clear();
                        for (const auto& [member_bd, i] : g.members)
                        {
                            if (member_bd == bd)
                            {
                                members.push_back(i);
                            }
                        }
                        if (members.size() > 1)
                        {
                            churn_group(members, bd, g);
                        }
                    }
                    if (bds.size() > 1)
                    {
                        spread_group(bds, g);
                    }
                }
                m_s.rebuilt.shrink_to_fit();
                std::stable_sort(m_s.rebuilt.begin(), m_s.rebuilt.end(),
                                 [](const rebuild_group& a, const rebuild_group& b) { return a.ms > b.ms; });
            }

            // Launches per kernel, as the first good sample's cold pass made them. Each kernel's
            // index first and then the list at its size: grown by doubling and cut to size
            // after, the list was held twice.
            void launches_per_kernel()
            {
                using kernel_key = std::tuple<std::string_view, std::string_view, std::string_view>;  // views of the launches
                const auto& first_launches = m_good.front()->cold.launches;
                std::vector<std::size_t> kernel_of(first_launches.size());  // by launch record
                {
                    std::unordered_map<kernel_key, std::size_t, tuple_hash> kernel_index;
                    kernel_index.reserve(first_launches.size());
                    std::vector<std::size_t> first_record;  // by kernel index
                    for (std::size_t k = 0; k < first_launches.size(); ++k)
                    {
                        const auto& l = first_launches[k];
                        const auto [pos, inserted] =
                            kernel_index.try_emplace(kernel_key(l.kernel, l.module, l.device), first_record.size());
                        if (inserted)
                        {
                            first_record.push_back(k);
                        }
                        kernel_of[k] = pos->second;
                    }
                    m_s.launch_kernels.reserve(first_record.size());
                    for (const std::size_t k : first_record)
                    {
                        const auto& l = first_launches[k];
                        m_s.launch_kernels.push_back({l.kernel, l.module, l.device, 0, {}, false});
                    }
                }
                for (std::size_t k = 0; k < first_launches.size(); ++k)
                {
                    const auto& l = first_launches[k];
                    const auto it = m_s.launch_kernels.begin() + static_cast<long>(kernel_of[k]);
                    it->count += l.count;
                    it->adjoint = it->adjoint || l.adjoint;
                    if (std::find(it->block_dims.begin(), it->block_dims.end(), l.block_dim) == it->block_dims.end())
                    {
                        it->block_dims.push_back(l.block_dim);
                    }
                }
            }

            report& m_r;
            // The figures count identities and compare samples by them; only the tables hold
            // what each one is, and the groups only feed the tables.
            const bool m_tables;
            summary m_s;
            std::vector<const sample*> m_good;
            std::set<std::string> m_failed_tests;  // the tests a good sample's cold pass said failed
            std::vector<double> m_cold_wall, m_warm_wall, m_elapsed, m_cold_mod, m_warm_mod, m_native, m_overlap, m_ids,
                m_src, m_lto, m_launches, m_share, m_cache_binaries, m_cache_bytes, m_cold_cpu, m_warm_cpu, m_busy;
            bool m_cold_cpu_whole = true;  // every good cold pass recorded its loads' CPU time
            bool m_warm_cpu_whole = true;
            // Each identity is looked up once per load, for its index in first-seen order; what
            // is known of it is kept in vectors by that index (a hash table per figure made a
            // report of 100,000 identities hash and compare every load's strings half a dozen
            // times).
            std::unordered_map<identity_key, std::size_t, tuple_hash> m_index_of;
            std::size_t m_known = 0;                         // identities seen so far
            std::vector<identity> m_ident;                   // first-seen order (with the tables)
            std::vector<std::vector<double>> m_ms_by_sample; // per good sample, by identity index
            std::vector<std::vector<char>> m_seen_by_sample; // per good sample: which identities it loaded
            std::vector<const module_load*> m_first_load_of; // the first cold load of each
            std::vector<std::size_t> m_first_sample_ids;     // sorted
            std::vector<double> m_ms_of;                     // by identity index: the median ms
            std::vector<int> m_builds_of;                    // by identity index
            std::unordered_map<module_device, std::size_t, tuple_hash> m_group_index;
            std::vector<group_acc> m_groups;                 // first-seen order
            std::vector<std::size_t> m_group_of;             // by identity index: its (module, device) group
            bool m_consistent = true;
            int m_warm_compiled_samples = 0;
            bool m_any_lto = false;
            double m_lto_work = 0.0;
            double m_lto_native = 0.0;
            std::set<figure_source> m_load_sources;
            int m_with_warp_ms = 0;
            int m_without_warp_ms = 0;
            bool m_native_hook = false;
            bool m_native_log = false;
            bool m_any_process = false;
            bool m_launch_hook = false;
        };
    }

    void summarize_figures(report& r, summary_scope scope)
    {
        figures(r, scope).make();
    }

    std::string sampling_settled(const std::vector<sample>& samples)
    {
        std::vector<const sample*> good;
        for (const auto& smp : samples)
        {
            if (smp.ok())
            {
                good.push_back(&smp);
            }
        }
        if (good.size() < 2)
        {
            return {};
        }
        auto identities = [](const run_result& run)
        {
            std::unordered_set<identity_key, tuple_hash> keys;
            for (const auto& l : run.module_loads)
            {
                keys.insert(key_of(l));
            }
            return keys;
        };
        const auto first = identities(good.front()->cold);
        for (const auto* smp : good)
        {
            if (identities(smp->cold) != first)
            {
                return {};
            }
        }
        std::vector<double> work;
        for (const auto* smp : good)
        {
            work.push_back(sum_work(smp->cold));
        }
        // How well the median is known (a 95% half-width: 1.96 x the standard error of a median,
        // 1.2533 sigma / sqrt(n), sigma from the MAD) against the band compare judges changes by.
        const double med = median(work).value_or(0.0);
        const double spread = mad(work).value_or(0.0);
        const double half_width = 1.96 * 1.2533 * 1.4826 * spread / std::sqrt(static_cast<double>(work.size()));
        const double band = std::max(noise_floor_fraction * med, noise_mad_factor * spread);
        if (half_width > band)
        {
            return {};
        }
        return "settled after " + std::to_string(good.size()) + " good samples: the same " + std::to_string(first.size())
               + " identities in each, and the median cold module work (" + format_ms(med) + ") is known to within "
               + format_ms(half_width) + ", inside the band compare judges changes by (" + format_ms(band) + ")";
    }
}
