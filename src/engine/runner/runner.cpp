#include "xwarp/engine/runner/runner.hpp"
#include "xwarp/engine/runner/ownership.hpp"
#include "xwarp/engine/runner/sampler.hpp"

#include "xwarp/model/contracts.hpp"
#include "xwarp/model/shim_contract.hpp"
#include "xwarp/engine/os/bounded_read.hpp"
#include "xwarp/engine/os/cpu_time.hpp"
#include "xwarp/engine/os/file_tail.hpp"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "xwarp/engine/env/environment.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/model/format.hpp"
#include "xwarp/engine/runner/records.hpp"
#include "xwarp/engine/os/tempdir.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace xwarp
{
    namespace
    {
        constexpr std::size_t output_tail_bytes = 4000;
        constexpr std::size_t max_launch_records = 100000;

        std::map<std::string, std::string> current_environment()
        {
            std::map<std::string, std::string> env;
            for (char** e = environ; e && *e; ++e)
            {
                std::string kv = *e;
                auto eq = kv.find('=');
                if (eq != std::string::npos && eq > 0)
                {
                    env[kv.substr(0, eq)] = kv.substr(eq + 1);
                }
            }
            return env;
        }

        std::string basename_of(const std::string& p)
        {
            return fs::path(p).filename().string();
        }

        bool is_python_name(const std::string& name)
        {
            static const std::regex re(R"(^python(\d+(\.\d+)?)?$)");
            return std::regex_match(name, re);
        }

        // `env [-i] [NAME=VALUE]... cmd`: the env program would replace the variables the
        // probe set, so the probe's variables go in as NAME=VALUE tokens after env's options,
        // and a PYTHONPATH token of the command keeps the shim in front.
        std::vector<std::string> adapt_env_command(const std::vector<std::string>& argv,
                                                   const std::map<std::string, std::string>& injected)
        {
            if (argv.empty() || basename_of(argv[0]) != "env")
            {
                return argv;
            }
            std::vector<std::string> out{argv[0]};
            std::size_t i = 1;
            while (i < argv.size() && !argv[i].empty() && argv[i][0] == '-')
            {
                out.push_back(argv[i]);
                // options taking a separate value
                if ((argv[i] == "-u" || argv[i] == "-C" || argv[i] == "-S") && i + 1 < argv.size())
                {
                    out.push_back(argv[++i]);
                }
                ++i;
            }
            for (const auto& [name, value] : injected)
            {
                out.push_back(name + "=" + value);
            }
            const std::string shim = injected.at("PYTHONPATH");
            for (; i < argv.size(); ++i)
            {
                const auto& tok = argv[i];
                if (tok.rfind("PYTHONPATH=", 0) == 0)
                {
                    std::string user = tok.substr(11);
                    // injected PYTHONPATH is "shim[:inherited]"; the command's own value replaces
                    // the inherited part, as it would without the probe.
                    std::string shim_dir = shim.substr(0, shim.find(':'));
                    out.push_back("PYTHONPATH=" + shim_dir + (user.empty() ? "" : ":" + user));
                }
                else
                {
                    out.push_back(tok);
                }
            }
            return out;
        }

        // A cold pass that started from an empty private cache holds only what its processes
        // built: a module folder whose hash no recorded load had, or whose every recorded load
        // came from the cache (nothing of the pass built it), was put there from outside the
        // probe's view (kept builds copied in, a process without the shim).
        void note_built_outside(run_result& run, const std::string& warp_cache)
        {
            std::set<std::string> seen;
            std::set<std::string> built;
            for (const auto& l : run.module_loads)
            {
                seen.insert(l.short_hash());
                if (l.status == load_status::compiled)
                {
                    built.insert(l.short_hash());
                }
            }
            constexpr std::size_t most = 20;
            std::size_t found = 0;
            for (const std::string& folder : module_folders(warp_cache))
            {
                const std::string hash7 = folder.substr(folder.rfind('_') + 1);
                const char* why = !seen.count(hash7)   ? "no recorded load of this pass had its hash"
                                  : !built.count(hash7) ? "every recorded load of it came from the cache: nothing of this pass built it"
                                                        : nullptr;
                if (why && ++found <= most)
                {
                    run.built_outside.push_back(folder + ": " + why);
                }
            }
            if (found > 0)
            {
                run.notes.push_back(std::to_string(found) + " module folder(s) in the probe's private kernel cache were not "
                                    "built by this pass as the probe recorded it (first: " + run.built_outside.front()
                                    + "): copied in, or built by a process without the shim; this pass did not start cold");
            }
        }

        // A kernel cache a process used: the probe's own, one in the sample's private temporary
        // folder (empty at every pass: CS-2 material), or one from elsewhere (not isolated).
        void note_cache_used(run_result& run, std::int64_t pid, const std::string& used_as_named, const std::string& warp_cache_as_named)
        {
            // compared resolved (the shim resolves at the load; what still exists is resolved here
            // too): a link inside the probe's cache that points at a kept cache is the kept cache
            std::error_code ec;
            const fs::path resolved_used = fs::weakly_canonical(used_as_named, ec);
            const std::string used = ec ? used_as_named : resolved_used.string();
            const fs::path resolved_cache = fs::weakly_canonical(warp_cache_as_named, ec);
            const std::string warp_cache = ec ? warp_cache_as_named : resolved_cache.string();
            if (used == warp_cache || used.rfind(warp_cache + "/", 0) == 0)
            {
                return;
            }
            const std::string sample_dir = fs::path(warp_cache).parent_path().string();
            if (!sample_dir.empty() && sample_dir != "/" && used.rfind(sample_dir + "/", 0) == 0)
            {
                run.notes.push_back("pid " + std::to_string(pid) + " used a kernel cache of its own in its "
                                    "private temporary folder (" + used + "), empty at each pass");
                return;
            }
            run.notes.push_back("pid " + std::to_string(pid) + " used its own kernel cache " + used
                                + ", outside the probe's: this pass was not isolated");
            if (std::find(run.caches_outside.begin(), run.caches_outside.end(), used) == run.caches_outside.end())
            {
                run.caches_outside.push_back(used);
            }
        }

        // What the records say went wrong: what was lost decides the pass (a record that could not
        // be read is data the figures miss, an identity, a process, and a budget would be judged
        // without it); shim errors and a process that used its own cache are notes.
        void note_record_problems(run_result& run, const shim_records& rec, const std::string& warp_cache)
        {
            std::vector<std::string> lost;
            if (rec.malformed_lines > 0)
            {
                lost.push_back(std::to_string(rec.malformed_lines) + " unreadable record line(s) (a process killed while writing?)");
            }
            if (rec.rejected_count > 0)
            {
                std::string named;
                for (const auto& why : rec.rejected)
                {
                    named += (named.empty() ? "" : "; ") + why;
                }
                lost.push_back(std::to_string(rec.rejected_count) + " shim record(s) outside the record contract, left out: " + named);
            }
            for (const auto& f : rec.unreadable)
            {
                lost.push_back("record file " + f);
            }
            for (const auto& p : rec.processes)
            {
                for (const auto& e : p.shim_errors)
                {
                    if (e.rfind("writing a ", 0) == 0)
                    {
                        lost.push_back("pid " + std::to_string(p.pid) + " could not write a record (" + e + ")");
                    }
                }
            }
            for (const auto& why : lost)
            {
                run.notes.push_back(why);
                run.records_lost += (run.records_lost.empty() ? "" : "; ") + why;
            }
            if (rec.newer_contract > 0)
            {
                run.notes.push_back("the shim wrote records under contract " + std::to_string(rec.newer_contract)
                                    + ", newer than this warp-probe reads (" + std::to_string(shim_contract_version())
                                    + "): a field it added is not read");
            }
            for (const auto& p : rec.processes)
            {
                for (const auto& e : p.shim_errors)
                {
                    run.notes.push_back("shim error in pid " + std::to_string(p.pid) + ": " + e);
                }
                // The cache in force at exit, and at each load that did work: a program that
                // pointed Warp elsewhere and set it back before it ended loaded from there.
                std::vector<std::string> used_dirs;
                if (auto dir = p.runtime.find("kernel_cache_dir"); dir != p.runtime.end() && dir->is_string())
                {
                    used_dirs.push_back(dir->get<std::string>());
                }
                if (auto at_loads = p.runtime.find("kernel_cache_dirs_at_loads"); at_loads != p.runtime.end() && at_loads->is_array())
                {
                    for (const auto& d : *at_loads)
                    {
                        if (d.is_string() && std::find(used_dirs.begin(), used_dirs.end(), d.get<std::string>()) == used_dirs.end())
                        {
                            used_dirs.push_back(d.get<std::string>());
                        }
                    }
                }
                for (const std::string& used : used_dirs)
                {
                    note_cache_used(run, p.pid, used, warp_cache);
                }
            }
        }

        // A suite whose tests failed ran to its end: what it built, and by which test, still counts.
        void note_failed_tests(run_result& run, const process_outcome& outcome, const std::string& stdout_path,
                               const std::string& stderr_path)
        {
            const bool suite = std::any_of(run.module_loads.begin(), run.module_loads.end(), [](const module_load& l) { return !l.test.empty(); })
                               || std::any_of(run.processes.begin(), run.processes.end(), [](const process_record& p) {
                                      return std::any_of(p.calls.begin(), p.calls.end(), [](const api_call_event& c) { return c.function == "test_use"; });
                                  });
            if (suite && outcome.exit_code && *outcome.exit_code == 1 && !outcome.timed_out && !outcome.interrupted)
            {
                run.tests_failed = true;
                for (const auto& path : {stdout_path, stderr_path})
                {
                    if (is_plain_file(path))
                    {
                        std::ifstream in(path);
                        scan_test_failures(in, run.failed_tests);
                    }
                }
                run.notes.push_back("tests failed (exit code 1)"
                                    + (run.failed_tests.empty() ? std::string() : ": " + std::to_string(run.failed_tests.size())
                                                                                       + " named, first " + run.failed_tests.front())
                                    + ": what the suite built and by which test still counts; no timing verdict is judged on it");
            }
        }

        // A pass's result from what it left: the process outcome, the shim's records, the
        // command's output (Warp's log lines, the fallback source) and the cache it filled. The
        // same assembly reads a pass recorded with --keep-records back.
        run_result assemble_pass(const process_outcome& outcome,
                                 const std::string& records,
                                 const std::string& stdout_path,
                                 const std::string& stderr_path,
                                 const std::string& warp_cache,
                                 const cache_inventory& cache)
        {
            run_result run;
            run.wall_ms = outcome.wall_ms;
            run.exit_code = outcome.exit_code;
            run.term_signal = outcome.term_signal;
            run.timed_out = outcome.timed_out;
            run.interrupted = outcome.interrupted;
            run.spawn_error = outcome.spawn_error;

            shim_records rec = read_shim_records(records);
            log_scan log;
            for (const auto& path : {stdout_path, stderr_path})
            {
                std::ifstream in(path);
                log_scan part = scan_warp_log(in);
                log.native_ms_total += part.native_ms_total;
                log.native_lines += part.native_lines;
                for (auto& l : part.loads)
                {
                    log.loads.push_back(std::move(l));
                }
            }

            const bool fallback = std::any_of(rec.processes.begin(),
                                              rec.processes.end(),
                                              [](const process_record& p) { return p.log_fallback; });
            if (!fallback && !rec.loads.empty())
            {
                run.load_source = figure_source::hook;
                run.module_loads = std::move(rec.loads);
                // A log line of an identity no hook recorded is a process the shim did not reach. The
                // same line printed twice (pytest repeats a failing test's captured output) is one
                // load, and so is a line whose identity a hook did record.
                std::set<std::pair<std::string, std::string>> hooked;
                for (const auto& l : run.module_loads)
                {
                    hooked.insert({l.module.str(), l.short_hash()});
                }
                std::set<std::pair<std::string, std::string>> unmatched;
                for (const auto& l : log.loads)
                {
                    if (!hooked.count({l.module.str(), l.short_hash()}))
                    {
                        unmatched.insert({l.module.str(), l.short_hash()});
                    }
                }
                if (!unmatched.empty())
                {
                    run.notes.push_back(std::to_string(unmatched.size())
                                        + " module identit(ies) in Warp's log lines had no hook record (first: "
                                        + unmatched.begin()->first + " " + unmatched.begin()->second
                                        + "): a Python process without the shim, e.g. python -I or -E?");
                }
            }
            else if (!log.loads.empty())
            {
                run.load_source = figure_source::log;
                run.module_loads = std::move(log.loads);
                run.notes.push_back(fallback ? "Warp's load hooks were not available: module figures come from "
                                               "Warp's own log lines"
                                             : "no hook records: module figures come from Warp's own log lines");
            }
            else
            {
                run.load_source = rec.processes.empty() ? figure_source::none : figure_source::hook;
            }
            if (rec.processes.empty() && run.ok())
            {
                run.notes.push_back("no Python process imported Warp under the shim (does the command run Python "
                                    "with -I or -E, or reset PYTHONPATH?)");
            }
            note_record_problems(run, rec, warp_cache);
            // Show loads in the order they happened across processes.
            std::map<std::int64_t, double> start_of;
            for (const auto& p : rec.processes)
            {
                start_of[p.pid] = p.started_unix * 1000.0;
            }
            std::stable_sort(run.module_loads.begin(),
                             run.module_loads.end(),
                             [&](const module_load& a, const module_load& b)
                             {
                                 return start_of[a.pid] + a.t_start_ms < start_of[b.pid] + b.t_start_ms;
                             });
            run.processes = std::move(rec.processes);
            run.launch_total = rec.launch_total;
            run.launches_truncated = rec.launches_truncated;
            run.launches = std::move(rec.launches);
            if (run.launches.size() > max_launch_records)
            {
                run.launches.resize(max_launch_records);
                run.launches_truncated = true;
            }
            run.cache = cache;
            note_failed_tests(run, outcome, stdout_path, stderr_path);
            run.stdout_tail = file_tail(stdout_path, output_tail_bytes);
            run.stderr_tail = file_tail(stderr_path, output_tail_bytes);
            if (!run.ok())
            {
                run.error_line = last_error_line(stderr_path);
            }

            return run;
        }

        // A recorded pass's account of its own work, beside its records.
        constexpr const char* own_results_name = "results.json";

        // The command's own results file: the command wrote it, so it is read as the records
        // are (a regular file, no link followed, at most 16 MiB); null with a note otherwise.
        nlohmann::json read_own_results(const std::string& path, std::vector<std::string>& notes)
        {
            std::error_code ec;
            if (!fs::exists(fs::symlink_status(path, ec)))
            {
                return nullptr;
            }
            const bounded_read file = read_regular_file(path, 16u << 20);
            if (!file.ok)
            {
                notes.push_back("the command's own results " + path + " were not read: " + file.why);
                return nullptr;
            }
            nlohmann::json j = nlohmann::json::parse(file.text, nullptr, false);
            if (j.is_discarded())
            {
                notes.push_back("the command's own results " + path + " are not JSON");
                return nullptr;
            }
            // the warm-up file's --results: read only inside its contract
            if (const std::string wrong = contract_violation(contract::warmup_results, j); !wrong.empty())
            {
                notes.push_back("the command's own results " + path + " are outside the warm-up results contract: " + wrong);
                return nullptr;
            }
            return j;
        }

        // A regular file only (a record folder is the program's: a FIFO there would block the
        // copy, a link would copy what it points to).
        void copy_file_if_there(const fs::path& from, const fs::path& to)
        {
            std::error_code ec;
            if (is_plain_file(from.string()))
            {
                fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
            }
        }

        // --keep-records: the raw records of one pass, its output and the facts that are not in
        // the records (outcome, cache contents), for tests/fixtures/streams.
        void keep_records(const std::string& dest,
                          const std::string& records,
                          const std::string& stdout_path,
                          const std::string& stderr_path,
                          const std::string& warp_cache,
                          const run_result& run)
        {
            std::error_code ec;
            fs::remove_all(dest, ec);  // a pass recorded again replaces the last one's records, never adds to them
            fs::create_directories(dest, ec);
            for (const auto& entry : fs::directory_iterator(records, ec))
            {
                copy_file_if_there(entry.path(), fs::path(dest) / entry.path().filename());
            }
            copy_file_if_there(stdout_path, fs::path(dest) / "stdout");
            copy_file_if_there(stderr_path, fs::path(dest) / "stderr");
            if (!run.own_results.is_null())
            {
                std::ofstream(fs::path(dest) / own_results_name) << run.own_results.dump() << "\n";
            }
            nlohmann::json meta = {{"wall_ms", run.wall_ms},
                                   {"exit_code", run.exit_code ? nlohmann::json(*run.exit_code) : nlohmann::json()},
                                   {"term_signal", run.term_signal ? nlohmann::json(*run.term_signal) : nlohmann::json()},
                                   {"timed_out", run.timed_out},
                                   {"interrupted", run.interrupted},
                                   {"spawn_error", run.spawn_error},
                                   {"warp_cache", warp_cache},
                                   {"load", run.load ? nlohmann::json(*run.load) : nlohmann::json()},
                                   {"caches", run.caches},
                                   {"built_outside", run.built_outside},
                                   {"cache",
                                    {{"module_dirs", run.cache.module_dirs},
                                     {"source_files", run.cache.source_files},
                                     {"source_bytes", run.cache.source_bytes},
                                     {"binary_files", run.cache.binary_files},
                                     {"binary_bytes", run.cache.binary_bytes},
                                     {"lto_files", run.cache.lto_files},
                                     {"lto_bytes", run.cache.lto_bytes}}}};
            std::ofstream(fs::path(dest) / "pass.json") << meta.dump(2) << "\n";
        }

        struct pass_context
        {
            const measure_options& options;
            const std::string& exe;
            const std::vector<std::string>& argv;  // argv[0] already resolved
            const std::map<std::string, std::string>& base_env;
            const std::string& cwd;
            run_observer* observer;
            const cancel_check& cancelled;
            std::string variant;  // a what-if lever's name, shown with the phase; "" for the baseline
        };

        // --nvrtc-trace: the traces NVRTC wrote in the cold pass, and why there are none when the
        // pass built CUDA modules without them.
        void note_nvrtc_traces(run_result& run, const std::string& warp_cache)
        {
            run.nvrtc_traces = collect_nvrtc_traces(warp_cache, run.notes);
            bool turned_on = false;
            bool no_option = false;
            for (const auto& p : run.processes)
            {
                auto h = p.hooks.find("nvrtc_trace");
                if (h != p.hooks.end() && h->is_boolean())
                {
                    (h->get<bool>() ? turned_on : no_option) = true;
                }
            }
            const bool cuda_built = std::any_of(run.module_loads.begin(), run.module_loads.end(), [](const module_load& l)
                                                { return l.status == load_status::compiled && l.device.str().rfind("cuda", 0) == 0; });
            if (no_option && !turned_on)
            {
                run.notes.push_back("--nvrtc-trace: this Warp has no compile_time_trace option (Warp 1.8 or newer has it)");
            }
            else if (turned_on && run.nvrtc_traces.empty())
            {
                run.notes.push_back(cuda_built ? "--nvrtc-trace: CUDA modules were built but NVRTC wrote no trace (it "
                                                 "needs CUDA 12.8 or newer in Warp's build, and NVRTC, not llvm_cuda)"
                                               : "--nvrtc-trace: no CUDA module was built, so NVRTC traced nothing "
                                                 "(CPU builds have no such trace)");
            }
        }

        run_result run_pass(const pass_context& pc, const scoped_temp_dir& tmp, int index, pass_phase which)
        {
            const std::string phase = word_of(which);
            const std::string shown = pc.variant.empty() ? phase : phase + " [" + pc.variant + "]";
            const int samples = pc.options.samples;
            if (pc.observer)
            {
                pc.observer->pass_started(index, samples, shown);
            }
            const std::string warp_cache = tmp.sub("warp-cache");
            const std::string cuda_cache = tmp.sub("cuda-cache");
            const std::string records = tmp.sub("records-" + phase);
            // The target's own temporary files (Warp's per-thread PCH dirs among them) live
            // inside the sample's directory, so a killed pass leaves none behind.
            const std::string target_tmp = tmp.sub("tmp-" + phase);

            std::map<std::string, std::string> injected{
                {"WARP_CACHE_PATH", warp_cache},
                {"WARP_CACHE_ROOT", warp_cache},
                {"CUDA_CACHE_PATH", cuda_cache},
                {"XWARP_RECORD_DIR", records},
                // Python must not write __pycache__ into the measured project. Reading existing
                // .pyc files stays on, so cold and warm passes pay the same Python cost.
                {"PYTHONDONTWRITEBYTECODE", "1"},
                {"TMPDIR", target_tmp},
                {"TMP", target_tmp},
                {"TEMP", target_tmp},
            };
            auto inherited = pc.base_env.find("PYTHONPATH");
            injected["PYTHONPATH"] = pc.options.shim_dir
                                     + (inherited != pc.base_env.end() && !inherited->second.empty()
                                            ? ":" + inherited->second
                                            : std::string());

            process_spec spec;
            spec.env = pc.base_env;
            for (const auto& [k, v] : injected)
            {
                spec.env[k] = v;
            }
            std::vector<std::string> argv = adapt_env_command(pc.argv, injected);
            spec.exe = pc.exe;
            spec.args.assign(argv.begin() + 1, argv.end());
            spec.cwd = pc.cwd;
            spec.stdout_path = tmp.path() + "/" + phase + ".stdout";
            spec.stderr_path = tmp.path() + "/" + phase + ".stderr";

            auto tick = [&](double elapsed)
            {
                if (pc.observer)
                {
                    pc.observer->pass_running(index, samples, shown, elapsed);
                }
            };
            // The pass's conditions: what its caches held when it started, and the machine's CPU
            // counters on both sides of it (what the other processes took while it ran).
            const pass_caches caches_at{warp_cache, cuda_cache, target_tmp};
            const std::vector<cache_state> caches_before = read_cache_states(caches_at);
            const auto cpu_before = read_cpu();
            process_outcome outcome = run_process(spec, pc.options.timeout_s, pc.cancelled, tick);
            const auto cpu_after = read_cpu();

            run_result run = assemble_pass(outcome, records, spec.stdout_path, spec.stderr_path, warp_cache, inventory_cache(warp_cache));
            run.caches = read_cache_states(caches_at);
            note_cache_starts(run.caches, caches_before);
            const bool started_empty = std::any_of(caches_before.begin(), caches_before.end(), [](const cache_state& c)
                                                   { return c.kind == cache_kind::warp_kernels && c.empty_at_start(); });
            if (which == pass_phase::cold && started_empty)
            {
                note_built_outside(run, warp_cache);
            }
            if (cpu_before && cpu_after)
            {
                const cpu_between used = cpu_used_between(*cpu_before, *cpu_after);
                run.load = machine_load{used.cpus, used.others_ms, used.children_ms};
            }
            if (!pc.options.results_file.empty())
            {
                run.own_results = read_own_results(pc.options.results_file, run.notes);
                std::error_code gone;
                fs::remove(pc.options.results_file, gone);
            }
            auto trace_flag = spec.env.find("XWARP_NVRTC_TRACE");
            if (which == pass_phase::cold && trace_flag != spec.env.end() && trace_flag->second == "1")
            {
                note_nvrtc_traces(run, warp_cache);
            }
            run.containment = outcome.containment == held_by::pid_namespace ? containment_kind::pid_namespace
                              : outcome.containment == held_by::cgroup      ? containment_kind::cgroup
                                                                            : containment_kind::process_tree;
            if (outcome.strays_killed > 0)
            {
                run.stray_processes_killed = outcome.strays_killed;
                run.notes.push_back("killed " + std::to_string(outcome.strays_killed)
                                    + " process(es) the command left running after this pass (outside its process "
                                      "group: a new session or a daemon)");
            }
            if (!outcome.strays_left.empty())
            {
                run.stray_processes_left = outcome.strays_left;
                std::string names;
                for (const auto& p : outcome.strays_left)
                {
                    names += (names.empty() ? "" : ", ") + p;
                }
                run.notes.push_back("could not kill " + std::to_string(outcome.strays_left.size())
                                    + " process(es) the command left running after this pass (not permitted: another "
                                      "user's, or setuid): " + names);
            }
            if (!pc.options.keep_records_dir.empty())
            {
                keep_records(recorded_sample_dir(pc.options.keep_records_dir, pc.variant, index) + "/" + phase, records,
                             spec.stdout_path, spec.stderr_path, warp_cache, run);
            }

            if (pc.observer)
            {
                pc.observer->pass_finished(index, samples, shown, run);
            }
            return run;
        }
    }

    host_facts_wait::~host_facts_wait()
    {
        finish_collecting_host_environment();
    }

    prepared_command prepare_command(const measure_options& options)
    {
        if (options.command.empty())
        {
            throw probe_error(probe_error::kind::usage, "no command to measure (give it after --)");
        }
        if (options.samples < 1)
        {
            throw probe_error(probe_error::kind::usage, "--samples must be at least 1");
        }
        if (options.timeout_s && !(*options.timeout_s > 0))
        {
            throw probe_error(probe_error::kind::usage, "--timeout must be positive");
        }
        prepared_command pc;
        pc.options = options;
        std::error_code ec;
        std::string cwd = options.cwd.empty() ? fs::current_path(ec).string() : options.cwd;
        if (!fs::is_directory(cwd, ec))
        {
            throw probe_error(probe_error::kind::cwd_missing, "working directory does not exist: " + cwd);
        }
        pc.cwd = fs::canonical(cwd, ec).string();
        if (options.shim_dir.empty() || !fs::exists(options.shim_dir + "/sitecustomize.py", ec))
        {
            throw probe_error(probe_error::kind::shim_missing,
                              "the probe shim is not installed (looked for sitecustomize.py in '"
                                  + options.shim_dir + "'; set XWARP_SHIM_DIR)");
        }

        pc.base_env = current_environment();
        for (const auto& [k, v] : options.extra_env)
        {
            pc.base_env[k] = v;
        }
        pc.base_env.erase("XWARP_NVRTC_TRACE");  // the option decides, not an inherited variable
        // The test the probe itself runs under (warp-probe called from a pytest test) is no test of
        // the measured command: the shim would count every load for it. A pytest inside the
        // command sets its own.
        pc.base_env.erase("PYTEST_CURRENT_TEST");
        if (options.nvrtc_trace)
        {
            pc.base_env["XWARP_NVRTC_TRACE"] = "1";
            pc.notes.push_back("--nvrtc-trace: Warp's compile_time_trace was on. It is a module option, so every "
                               "module hash differs from a run without it, and NVRTC spends time writing its trace: "
                               "compare such runs only with each other");
        }

        pc.argv = options.command;
        if (!options.python.empty() && is_python_name(pc.argv[0]))
        {
            pc.argv[0] = options.python;
        }
        if (pc.argv[0].find('/') != std::string::npos)
        {
            fs::path p = fs::path(pc.argv[0]).is_absolute() ? fs::path(pc.argv[0]) : fs::path(pc.cwd) / pc.argv[0];
            if (!fs::exists(p, ec))
            {
                throw probe_error(probe_error::kind::command_not_found, "command not found: " + pc.argv[0]);
            }
            if (fs::is_directory(p, ec) || ::access(p.c_str(), X_OK) != 0)
            {
                throw probe_error(probe_error::kind::not_executable, "not executable: " + pc.argv[0]);
            }
            pc.exe = p.string();
        }
        else
        {
            auto path = pc.base_env.count("PATH") ? pc.base_env.at("PATH") : std::string("/usr/bin:/bin");
            std::string found_but_not_executable;
            pc.exe = find_executable(pc.argv[0], path, &found_but_not_executable);
            if (pc.exe.empty() && !found_but_not_executable.empty())
            {
                throw probe_error(probe_error::kind::not_executable, "not executable: " + found_but_not_executable);
            }
            if (pc.exe.empty())
            {
                throw probe_error(probe_error::kind::command_not_found, "command not found: " + pc.argv[0]);
            }
        }
        const std::string interpreter = missing_interpreter(pc.exe);
        if (!interpreter.empty())
        {
            throw probe_error(probe_error::kind::command_not_found,
                              pc.argv[0] + ": bad interpreter: " + interpreter + ": no such file (from its #! line)");
        }

        // The host facts are gathered while the first pass runs, not before it. The environment
        // the passes start from was read above: until the facts are taken, CUDA_CACHE_PATH is
        // the query's private one (each pass sets its own anyway).
        (void)temp_base();
        start_collecting_host_environment();

        // What probes killed before they could clean up left behind: their processes and
        // temporary directories (never a live probe's).
        const cleanup_result cleaned = clean_after_dead_probes();
        if (cleaned.processes_killed > 0 || cleaned.dirs_removed > 0)
        {
            pc.notes.push_back("cleaned up after an earlier probe that was killed: " + std::to_string(cleaned.processes_killed)
                               + " process(es) killed, " + std::to_string(cleaned.dirs_removed)
                               + " temporary director(ies) removed");
        }

        if (!options.keep_records_dir.empty())
        {
            fs::create_directories(options.keep_records_dir, ec);
            if (ec)
            {
                throw probe_error(probe_error::kind::io, "cannot create " + options.keep_records_dir + ": " + ec.message());
            }
        }
        return pc;
    }

    namespace
    {
        // The shim's inputs xwarp sets for a pass (the options' and a lever's XWARP_ variables,
        // and the records folder each pass gets), held to the shim's inputs contract: a variable
        // the shim does not read, or a value it does not take, is this program's bug.
        void check_shim_inputs(const std::map<std::string, std::string>& options_env,
                               const std::map<std::string, std::string>& lever_env)
        {
            nlohmann::json inputs = {{"XWARP_RECORD_DIR", "(each pass's own)"}};
            for (const auto* env : {&options_env, &lever_env})
            {
                for (const auto& [k, v] : *env)
                {
                    if (k.rfind("XWARP_", 0) == 0)
                    {
                        inputs[k] = v;
                    }
                }
            }
            if (const std::string wrong = contract_violation(contract::shim_environment, inputs); !wrong.empty())
            {
                throw std::logic_error("internal: a pass's XWARP_ variables are outside the shim's inputs contract: " + wrong);
            }
        }
    }

    namespace
    {
        // A sample's environment: the command's, with the shim inputs this sample adds (checked
        // against their contract first).
        std::map<std::string, std::string> pass_environment(const prepared_command& command,
                                                            const std::map<std::string, std::string>& extra_env)
        {
            check_shim_inputs(command.options.extra_env, extra_env);
            std::map<std::string, std::string> env = command.base_env;
            for (const auto& [k, v] : extra_env)
            {
                env[k] = v;
            }
            return env;
        }
    }

    sample run_sample(const prepared_command& command,
                      int index,
                      const std::map<std::string, std::string>& extra_env,
                      const std::string& variant,
                      run_observer* observer,
                      const cancel_check& cancelled)
    {
        const std::map<std::string, std::string> env = pass_environment(command, extra_env);
        pass_context pc{command.options, command.exe, command.argv, env, command.cwd, observer, cancelled, variant};
        scoped_temp_dir tmp("xwarp-");
        sample s;
        s.index = index;
        s.cold = run_pass(pc, tmp, index, pass_phase::cold);
        if (!s.cold.interrupted && s.cold.ok())
        {
            s.warm = run_pass(pc, tmp, index, pass_phase::warm);
        }
        return s;
    }

    namespace
    {
        // Empties a pass's caches but the kept ones: Warp's kernel cache (its lto/ folders when the
        // LTO cache is kept), the LTO cache, the CUDA cache.
        void empty_caches_but(const scoped_temp_dir& tmp, const std::vector<cache_kind>& keeps)
        {
            const auto kept = [&](cache_kind k) { return std::find(keeps.begin(), keeps.end(), k) != keeps.end(); };
            static const fs::path warp_lto_folder = "lto";  // Warp's LTO cache, in its cache's version folder
            std::error_code ec;
            const fs::path warp_cache = tmp.sub("warp-cache");
            if (kept(cache_kind::warp_lto))
            {
                for (const auto& version : fs::directory_iterator(warp_cache, ec))
                {
                    for (const auto& entry : fs::directory_iterator(version.path(), ec))
                    {
                        if (entry.path().filename() != warp_lto_folder)
                        {
                            fs::remove_all(entry.path(), ec);
                        }
                    }
                }
            }
            else
            {
                fs::remove_all(warp_cache, ec);
            }
            if (!kept(cache_kind::cuda))
            {
                fs::remove_all(tmp.sub("cuda-cache"), ec);
            }
        }
    }

    sample run_sample_on_kept_caches(const prepared_command& command,
                                     int index,
                                     const std::vector<cache_kind>& keeps,
                                     const std::map<std::string, std::string>& extra_env,
                                     const std::string& variant,
                                     run_observer* observer,
                                     const cancel_check& cancelled)
    {
        const std::map<std::string, std::string> env = pass_environment(command, extra_env);
        pass_context pc{command.options, command.exe, command.argv, env, command.cwd, observer, cancelled, variant};
        scoped_temp_dir tmp("xwarp-");
        sample s;
        s.index = index;
        const run_result fill = run_pass(pc, tmp, index, pass_phase::fill);
        if (fill.interrupted)
        {
            s.cold = fill;
            return s;
        }
        empty_caches_but(tmp, keeps);
        s.cold = run_pass(pc, tmp, index, pass_phase::cold);
        if (!fill.ok())
        {
            s.cold.notes.push_back("the pass that was to fill the kept caches failed: this cold pass started on empty caches");
        }
        if (!s.cold.interrupted && s.cold.ok())
        {
            s.warm = run_pass(pc, tmp, index, pass_phase::warm);
        }
        return s;
    }

    primed_sample run_primed_sample(const prepared_command& command,
                                    const prepared_command& prime,
                                    int index,
                                    run_observer* observer,
                                    const cancel_check& cancelled)
    {
        scoped_temp_dir tmp("xwarp-");
        primed_sample out;
        out.program.index = index;
        pass_context prime_pc{prime.options, prime.exe, prime.argv, prime.base_env, prime.cwd, observer, cancelled, ""};
        out.prime = run_pass(prime_pc, tmp, index, pass_phase::warmup);
        if (out.prime.interrupted || !out.prime.ok())
        {
            return out;  // the program did not run
        }
        pass_context pc{command.options, command.exe, command.argv, command.base_env, command.cwd, observer, cancelled, "primed"};
        out.program.cold = run_pass(pc, tmp, index, pass_phase::cold);
        if (!out.program.cold.interrupted && out.program.cold.ok())
        {
            out.program.warm = run_pass(pc, tmp, index, pass_phase::warm);
        }
        return out;
    }

    report make_report(const prepared_command& command, std::vector<sample> samples)
    {
        const measure_options& options = command.options;
        report r;
        r.created_utc = utc_timestamp();
        r.label = options.label;
        r.command = options.command;
        r.cwd = command.cwd;
        r.run_settings.samples = static_cast<int>(samples.size());
        r.run_settings.timeout_s = options.timeout_s;
        r.run_settings.python = options.python;
        r.run_settings.nvrtc_trace = options.nvrtc_trace;
        r.samples = std::move(samples);
        r.warnings = command.notes;
        bool interrupted = false;
        for (const auto& s : r.samples)
        {
            interrupted = interrupted || s.cold.interrupted || (s.warm && s.warm->interrupted);
            if (!s.cold.spawn_error.empty())
            {
                r.errors.push_back("the command could not start: " + s.cold.spawn_error);
                break;
            }
        }

        r.env = cached_host_environment();
        r.env.project_commit = project_commit(command.cwd);
        if (!r.env.project_commit.empty())
        {
            r.env.sources["project_commit"] = "the git HEAD of " + command.cwd;
        }
        for (const auto& s : r.samples)
        {
            if (!s.cold.processes.empty())
            {
                merge_target_facts(r.env, s.cold);
                break;
            }
        }

        r.ownership = find_owners(r);  // here, where the files are
        settle_status(r, interrupted);
        return r;
    }

    void settle_status(report& r, bool interrupted)
    {
        const auto good = std::count_if(r.samples.begin(), r.samples.end(), [](const sample& s) { return s.ok(); });
        r.status = run_status::ok;
        if (interrupted)
        {
            r.status = run_status::interrupted;
            if (std::find(r.errors.begin(), r.errors.end(), "interrupted") == r.errors.end())
            {
                r.errors.push_back("interrupted");
            }
        }
        else if (good == 0)
        {
            r.status = run_status::failed;
        }
        else if (good < static_cast<long>(r.samples.size()))
        {
            r.status = run_status::partial;
        }
    }

    bool stop_sampling(const sample& s, const cancel_check& cancelled)
    {
        // Interrupted, or a command that cannot start (it will not start next time either).
        return s.cold.interrupted || (s.warm && s.warm->interrupted) || !s.cold.spawn_error.empty()
               || (cancelled && cancelled());
    }

    report measure(const measure_options& options, run_observer* observer, const cancel_check& cancelled)
    {
        command_sampler source(options);
        return measure(source, options.samples, observer, cancelled);
    }

    std::string recorded_sample_dir(const std::string& dir, const std::string& variant, int index)
    {
        std::string folder;
        for (const char c : variant)
        {
            const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'
                               || c == '.' || c == '_';
            folder += plain ? c : '_';  // "CS-9 #2" is CS-9__2: a name, never a path
        }
        const fs::path base = variant.empty() ? fs::path(dir) : fs::path(dir) / "variants" / folder;
        return (base / ("sample-" + std::to_string(index))).string();
    }

    run_result load_recorded_pass(const std::string& dir)
    {
        const fs::path pass_dir(dir);
        // a recorded folder is the user's to name: every file in it is read as the records are
        for (const char* name : {"stdout", "stderr"})
        {
            std::error_code ec;
            if (fs::exists(fs::symlink_status(pass_dir / name, ec)) && !is_plain_file((pass_dir / name).string()))
            {
                throw std::runtime_error("not a recorded pass: " + (pass_dir / name).string() + " is not a regular file");
            }
        }
        const bounded_read meta_file = read_regular_file((pass_dir / "pass.json").string(), 1u << 20);
        nlohmann::json meta = meta_file.ok ? nlohmann::json::parse(meta_file.text, nullptr, false) : nlohmann::json();
        if (meta.is_discarded() || !meta.is_object())
        {
            throw std::runtime_error("not a recorded pass: " + (pass_dir / "pass.json").string());
        }
        // the folder's contract (contracts/recorded_run.schema.json), whoever wrote it
        if (const std::string wrong = contract_violation(contract::recorded_pass, meta); !wrong.empty())
        {
            throw std::runtime_error("not a recorded pass: " + (pass_dir / "pass.json").string() + ": " + wrong);
        }
        process_outcome outcome;
        outcome.wall_ms = meta.value("wall_ms", 0.0);
        if (meta.contains("exit_code") && meta["exit_code"].is_number_integer())
        {
            outcome.exit_code = meta["exit_code"].get<int>();
        }
        if (meta.contains("term_signal") && meta["term_signal"].is_number_integer())
        {
            outcome.term_signal = meta["term_signal"].get<int>();
        }
        outcome.timed_out = meta.value("timed_out", false);
        outcome.interrupted = meta.value("interrupted", false);
        outcome.spawn_error = meta.value("spawn_error", std::string());
        cache_inventory cache;
        const auto c = meta.value("cache", nlohmann::json::object());
        cache.module_dirs = c.value("module_dirs", 0);
        cache.source_files = c.value("source_files", 0);
        cache.source_bytes = c.value("source_bytes", std::int64_t{0});
        cache.binary_files = c.value("binary_files", 0);
        cache.binary_bytes = c.value("binary_bytes", std::int64_t{0});
        cache.lto_files = c.value("lto_files", 0);
        cache.lto_bytes = c.value("lto_bytes", std::int64_t{0});
        run_result run = assemble_pass(outcome, pass_dir.string(), (pass_dir / "stdout").string(),
                                       (pass_dir / "stderr").string(), meta.value("warp_cache", std::string()), cache);
        // a recorded pass's conditions, where its recording kept them (a malformed one is left out)
        try
        {
            if (meta.contains("load") && meta["load"].is_object())
            {
                run.load = meta["load"].get<machine_load>();
            }
            if (meta.contains("caches") && meta["caches"].is_array())
            {
                run.caches = meta["caches"].get<std::vector<cache_state>>();
            }
            if (meta.contains("built_outside") && meta["built_outside"].is_array())
            {
                run.built_outside = meta["built_outside"].get<std::vector<std::string>>();
            }
        }
        catch (const std::exception& e)
        {
            run.load.reset();
            run.caches.clear();
            run.notes.push_back(std::string("the recorded pass's load and caches were not read: ") + e.what());
        }
        std::error_code ec;
        if (fs::exists(pass_dir / own_results_name, ec))
        {
            run.own_results = read_own_results((pass_dir / own_results_name).string(), run.notes);
        }
        return run;
    }

    namespace
    {
        // The one-pass form (the pytest plugin's): DIR is the pass, and its pass.json carries
        // the run's facts that a measured run keeps in run.json.
        report load_one_pass(const std::string& dir)
        {
            run_result pass = load_recorded_pass(dir);  // its pass.json checked against the contract
            const bounded_read meta_file = read_regular_file((fs::path(dir) / "pass.json").string(), 1u << 20);
            const nlohmann::json meta = nlohmann::json::parse(meta_file.text, nullptr, false);
            if (!meta.is_object() || !meta.value("one_pass", false) || !meta.contains("run"))
            {
                throw std::runtime_error("not a recorded run: " + dir + " has no run.json, and its pass.json is not a "
                                         "one-pass run's (one_pass and run)");
            }
            const nlohmann::json& run = meta["run"];
            const nlohmann::json facts = {
                {"schema_version", report_schema_version},
                {"tool", "warp-probe"},
                {"created_utc", utc_timestamp()},
                {"label", run["label"]},
                {"command", run["command"]},
                {"cwd", run["cwd"]},
                {"settings", {{"samples", 1}, {"sampling", run.value("sampling", std::string("one pass: the program's own run"))}}},
                {"environment", run["environment"]},
                {"samples", nlohmann::json::array()}};
            report r;
            try
            {
                r = report_from_json(facts);
            }
            catch (const std::exception& e)
            {
                throw std::runtime_error("not a recorded run: " + (fs::path(dir) / "pass.json").string() + ": its run: " + e.what());
            }
            sample s;
            s.index = 1;
            s.cold = std::move(pass);
            s.one_pass = true;
            r.samples.push_back(std::move(s));
            r.run_settings.samples = 1;
            r.ownership = find_owners(r);  // the plugin's pass is read where it ran
            return r;
        }
    }

    report load_recorded_run(const std::string& dir)
    {
        std::error_code gone;
        if (!fs::exists(fs::symlink_status(fs::path(dir) / "run.json", gone)) && fs::exists(fs::path(dir) / "pass.json", gone))
        {
            return load_one_pass(dir);
        }
        report r;
        try
        {
            r = load_report((fs::path(dir) / "run.json").string());
        }
        catch (const report_error& e)
        {
            throw std::runtime_error("not a recorded run: " + std::string(e.what()));
        }
        for (int i = 1;; ++i)
        {
            const fs::path sample_dir = fs::path(dir) / ("sample-" + std::to_string(i));
            std::error_code ec;
            if (!fs::is_directory(sample_dir / "cold", ec))
            {
                break;
            }
            sample s;
            s.index = i;
            s.cold = load_recorded_pass((sample_dir / "cold").string());
            if (fs::is_directory(sample_dir / "warm", ec))
            {
                s.warm = load_recorded_pass((sample_dir / "warm").string());
            }
            r.samples.push_back(std::move(s));
        }
        if (r.samples.empty())
        {
            throw std::runtime_error("not a recorded run: no sample-1/cold in " + dir);
        }
        r.run_settings.samples = static_cast<int>(r.samples.size());
        return r;
    }
}
