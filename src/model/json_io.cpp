// JSON mapping of the report model. Key names are the schema's (contracts/report.schema.json).
#include "xwarp/model/json_io.hpp"

#include <cstdint>
#include <cstdio>
#include <iomanip>
#include <cstdlib>
#include <memory>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <fstream>
#include <sstream>
#include <system_error>

#include <unistd.h>

#include "xwarp/model/comparison.hpp"
#include "xwarp/model/digest.hpp"
#include "xwarp/model/format.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/model/warmup.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "record_events.hpp"

namespace nlohmann
{
    // Optional fields are written as null and read back from null or absence.
    template <class T>
    struct adl_serializer<std::optional<T>>
    {
        static void to_json(json& j, const std::optional<T>& v)
        {
            if (v)
            {
                j = *v;
            }
            else
            {
                j = nullptr;
            }
        }

        static void from_json(const json& j, std::optional<T>& v)
        {
            if (j.is_null())
            {
                v.reset();
            }
            else
            {
                v = j.get<T>();
            }
        }
    };
}

namespace xwarp
{
    using nlohmann::json;

    std::string to_string(load_status s)
    {
        switch (s)
        {
            case load_status::compiled:
                return "compiled";
            case load_status::cached:
                return "cached";
            case load_status::error:
                return "error";
            default:
                return "unknown";
        }
    }

    double module_load::work_ms() const
    {
        if (warp_ms)
        {
            return *warp_ms;
        }
        return total_ms.value_or(0.0);
    }

    double module_load::cost_ms(clock on) const
    {
        const bool cpu_clock = on == clock::cold_module_cpu || on == clock::warm_module_cpu;
        return cpu_clock && cpu_ms ? *cpu_ms : work_ms();
    }

    double module_load::header_cost_ms(clock on) const
    {
        if (!pch_ms)
        {
            return 0.0;
        }
        const double wall = work_ms();
        const bool cpu_clock = on == clock::cold_module_cpu || on == clock::warm_module_cpu;
        return cpu_clock && cpu_ms && wall > 0 ? *pch_ms * std::min(1.0, *cpu_ms / wall) : *pch_ms;
    }

    std::optional<bool> content_snapshot::holds_backward_code() const
    {
        const auto opt = options->find("enable_backward");
        if (opt == options->end() || !opt->is_boolean())
        {
            return std::nullopt;
        }
        const bool module_default = opt->get<bool>();
        if (kernels.empty())
        {
            return module_default;
        }
        for (const auto& k : kernels)
        {
            if (k.enable_backward.value_or(module_default))
            {
                return true;
            }
        }
        return false;
    }

    bool run_result::ok() const
    {
        return spawn_error.empty() && !timed_out && !interrupted && exit_code && (*exit_code == 0 || tests_failed)
               && records_lost.empty();
    }

    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(lto_artifact, symbol, built, ms)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(phase_span, name, start_ms, ms)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(kernel_entry, key, hash, sig, generic, types, enable_backward, qualname, defined_in,
                                                    factory)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(content_snapshot, kernels, functions, options, options_source)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(module_load,
                                                    module,
                                                    hash,
                                                    device,
                                                    block_dim,
                                                    status,
                                                    warp_ms,
                                                    total_ms,
                                                    native_ms,
                                                    native_kind,
                                                    codegen_ms,
                                                    source_bytes,
                                                    output_suffix,
                                                    ltoir_inputs,
                                                    lto,
                                                    thread,
                                                    pid,
                                                    t_start_ms,
                                                    seq,
                                                    source,
                                                    error,
                                                    snapshot,
                                                    config_mismatch,
                                                    via_preload,
                                                    first_in_thread,
                                                    pch_ms,
                                                    cpu_ms,
                                                    cpu_wait_ms,
                                                    instructions,
                                                    phases,
                                                    triggered_by,
                                                    test)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(dirty_event, module, trigger, detail, file, line, seq, t_ms)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(config_set_event, key, old_value, new_value, file, line, seq, t_ms)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(module_created_event, module, file, line, seq, t_ms)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(api_call_event, function, args, file, line, seq, t_ms)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(process_record,
                                                    pid,
                                                    ppid,
                                                    argv,
                                                    executable,
                                                    python,
                                                    started_unix,
                                                    warp_version,
                                                    hooks,
                                                    log_fallback,
                                                    exited_cleanly,
                                                    exited_ms,
                                                    runtime,
                                                    dirty_events,
                                                    config_sets,
                                                    modules_created,
                                                    calls,
                                                    shim_errors,
                                                    whatif,
                                                    launch_times)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
        launch_record, kernel, module, dim, device, dtypes, block_dim, adjoint, count, pid)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
        cache_inventory, module_dirs, source_files, source_bytes, binary_files, binary_bytes, lto_files, lto_bytes)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(nvrtc_trace, module_dir, file, hash_prefix, events, events_dropped)
    // a pass's conditions: declared in json_io.hpp, for a recorded pass's meta file
    void to_json(json& j, const machine_load& l)
    {
        j = {{"cpus", l.cpus}, {"others_cpu_ms", l.others_cpu_ms}, {"own_cpu_ms", l.own_cpu_ms}};
    }
    void from_json(const json& j, machine_load& l)
    {
        l.cpus = j.value("cpus", 0);
        l.others_cpu_ms = j.value("others_cpu_ms", 0.0);
        l.own_cpu_ms = j.value("own_cpu_ms", 0.0);
    }
    void to_json(json& j, const cache_state& c)
    {
        j = {{"kind", c.kind},
             {"files_before", c.files_before},
             {"bytes_before", c.bytes_before},
             {"files_after", c.files_after},
             {"bytes_after", c.bytes_after}};
    }
    void from_json(const json& j, cache_state& c)
    {
        c.kind = j.at("kind").get<cache_kind>();
        c.files_before = j.value("files_before", std::int64_t{0});
        c.bytes_before = j.value("bytes_before", std::int64_t{0});
        c.files_after = j.value("files_after", std::int64_t{0});
        c.bytes_after = j.value("bytes_after", std::int64_t{0});
    }
    // A pass's and a sample's fields but their large arrays (the module loads and launches, the
    // two passes): report_json_text writes those one element at a time, and to_json/from_json
    // below add them back, so the field lists stay in one place each.
    namespace fields_but_records
    {
        NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(run_result,
                                                        wall_ms,
                                                        exit_code,
                                                        term_signal,
                                                        timed_out,
                                                        interrupted,
                                                        spawn_error,
                                                        launch_total,
                                                        launches_truncated,
                                                        processes,
                                                        load_source,
                                                        cache,
                                                        stdout_tail,
                                                        stderr_tail,
                                                        error_line,
                                                        records_lost,
                                                        caches_outside,
                                                        built_outside,
                                                        tests_failed,
                                                        failed_tests,
                                                        stray_processes_killed,
                                                        stray_processes_left,
                                                        containment,
                                                        nvrtc_traces,
                                                        load,
                                                        caches,
                                                        notes)
        NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(sample, index, one_pass)
    }

    void to_json(json& j, const run_result& p)
    {
        fields_but_records::to_json(j, p);
        j["module_loads"] = p.module_loads;
        j["launches"] = p.launches;
    }

    void from_json(const json& j, run_result& p)
    {
        fields_but_records::from_json(j, p);
        p.module_loads = j.value("module_loads", std::vector<module_load>{});
        p.launches = j.value("launches", std::vector<launch_record>{});
    }

    void to_json(json& j, const sample& s)
    {
        fields_but_records::to_json(j, s);
        j["cold"] = s.cold;
        j["warm"] = s.warm;
    }

    void from_json(const json& j, sample& s)
    {
        fields_but_records::from_json(j, s);
        s.cold = j.value("cold", run_result{});
        s.warm = j.value("warm", std::optional<run_result>{});
    }
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(stat, median, mad, values)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(warmup_overload, kernel, module, key, signature, types)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(warmup_target, module, hash, device, block_dim, build_ms, stage, follows, covered,
                                                    why_not, import_from, kernel, overloads, options, factories, tests)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(warmup_check::worker_trial, workers, wall_ms)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(warmup_check, samples, warmup_wall_ms, warmup_build_ms, warmup_builds,
                                                    primed_wall_ms, warm_wall_ms, wall_gap_ms, band_ms, serial_cold_build_ms,
                                                    covered_built, uncovered_built, new_built, verdict, reasons,
                                                    results_read, file_built, file_other, file_failed, program_ran,
                                                    covered_measured, cold_wall_beside_ms, warmup_and_primed_ms, of_cold,
                                                    of_cold_band, cost, cost_indicative, cost_why, worker_trials,
                                                    workers_picked)
    void to_json(json& j, const warmup_plan& p)
    {
        j = json{{"source", p.source}, {"command", p.command}, {"warp_version", p.warp_version},
                 {"project", p.project}, {"import_root", p.import_root}, {"import_paths", p.import_paths},
                 {"packages", p.packages}, {"root_packages", p.root_packages}, {"header_ms", p.header_ms},
                 {"left_estimate_ms", p.left_estimate_ms}, {"entry_script", p.entry_script}, {"cell", p.cell ? sha256_hex(p.cell_code) : std::string()}, {"workers", p.workers}, {"device", p.device}, {"arch", p.arch},
                 {"config", p.config}, {"targets", p.targets}, {"covered", p.covered}, {"uncovered", p.uncovered},
                 {"covered_ms", p.covered_ms}, {"total_ms", p.total_ms}, {"notes", p.notes}, {"plan_text", p.plan_text},
                 {"script_path", p.script_path}, {"plan_path", p.plan_path}, {"check", p.check ? json(*p.check) : json()}};
    }
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
        identity, module, hash, device, block_dim, ms, builds, samples_seen, status, kernels, failure)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
        rebuild_group, module, device, kind, hashes, block_dims, builds, ms, kernel_sets_known, moves)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
        launch_kernel_count, kernel, module, device, count, block_dims, adjoint)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(flag, id, message)
    std::string built_identity::words() const
    {
        return module.str() + " " + hash.substr(0, 7) + " on " + device.str()
               + (block_dim ? " block_dim " + std::to_string(*block_dim) : std::string()) + " (" + format_ms(ms) + ")";
    }

    void to_json(json& j, const built_identity& b)
    {
        j = json{{"module", b.module}, {"hash", b.hash}, {"device", b.device},
                 {"block_dim", b.block_dim ? json(*b.block_dim) : json()}, {"ms", b.ms}, {"reused_by", b.reused_by}};
    }

    void from_json(const json& j, built_identity& b)
    {
        if (j.is_string())  // reports written before identities were data: the words alone
        {
            b.module = j.get<std::string>();
            return;
        }
        b.module = j.value("module", std::string());
        b.hash = j.value("hash", std::string());
        b.device = j.value("device", std::string());
        b.block_dim = j.contains("block_dim") && j["block_dim"].is_number_integer() ? std::optional<int>(j["block_dim"].get<int>())
                                                                                    : std::nullopt;
        b.ms = j.value("ms", 0.0);
        b.reused_by = j.value("reused_by", 0);
    }
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(test_cost, test, builds, build_ms, identities, failed, pids, reused_by, reusers)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(worker_share, pid, wall_ms, build_ms, builds, tests)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(module_total, module, device, identities, builds, ms)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
        timeline_span, pid, thread, kind, module, hash, device, block_dim, status, triggered_by, detail, start_ms, ms)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(summary::clock_under_load, moved_pct, busy_least, busy_most, samples)
    // The summary's and its timeline's fields but their arrays that grow with the report
    // (identities, rebuild groups, modules, launches per kernel, timeline spans), for the same
    // reason as the passes' records above.
    namespace fields_but_records
    {
        NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(build_timeline, sample, pass, wall_ms, lanes)
        NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(summary,
                                                        valid,
                                                        samples_total,
                                                        samples_ok,
                                                        cold_wall_ms,
                                                        warm_wall_ms,
                                                        compile_elapsed_ms,
                                                        cold_module_ms,
                                                        warm_module_ms,
                                                        cold_module_cpu_ms,
                                                        warm_module_cpu_ms,
                                                        module_clock,
                                                        busy_cpus,
                                                        cpu_under_load,
                                                        native_ms,
                                                        overlap_factor,
                                                        overlap_note,
                                                        identity_count,
                                                        source_bytes,
                                                        lto_artifacts,
                                                        cache_binaries,
                                                        cache_bytes,
                                                        launch_count,
                                                        compile_share,
                                                        identities_consistent,
                                                        identities_per_sample,
                                                        flags,
                                                        load_source,
                                                        module_ms_source,
                                                        native_ms_source,
                                                        warnings)
    }
    void to_json(json& j, const build_timeline& t)
    {
        fields_but_records::to_json(j, t);
        j["spans"] = t.spans;
    }
    void from_json(const json& j, build_timeline& t)
    {
        fields_but_records::from_json(j, t);
        t.spans = j.value("spans", std::vector<timeline_span>{});
    }
    summary summary_without_tables(const summary& s)
    {
        summary out;
        json head;
        fields_but_records::to_json(head, s);
        fields_but_records::from_json(head, out);
        json timeline_head;
        fields_but_records::to_json(timeline_head, s.timeline);
        fields_but_records::from_json(timeline_head, out.timeline);
        return out;
    }

    void to_json(json& j, const summary& s)
    {
        fields_but_records::to_json(j, s);
        j["identities"] = s.identities;
        j["rebuilt"] = s.rebuilt;
        j["modules"] = s.modules;
        j["launch_kernels"] = s.launch_kernels;
        j["tests"] = s.tests;
        j["workers"] = s.workers;
        j["timeline"] = s.timeline;
    }
    void from_json(const json& j, summary& s)
    {
        fields_but_records::from_json(j, s);
        s.identities = j.value("identities", std::vector<identity>{});
        s.rebuilt = j.value("rebuilt", std::vector<rebuild_group>{});
        s.modules = j.value("modules", std::vector<module_total>{});
        s.launch_kernels = j.value("launch_kernels", std::vector<launch_kernel_count>{});
        s.tests = j.value("tests", std::vector<test_cost>{});
        s.workers = j.value("workers", std::vector<worker_share>{});
        s.timeline = j.value("timeline", build_timeline{});
    }
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(source_location, file, line)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(cause_location, file, line, what)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(file_owner, kind, distribution, version, evidence)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(project_root, path, why)

    // The files' owners as a list of {file, kind, ...}: a path is data, never a key a reader
    // must trust.
    void to_json(json& j, const ownership& o)
    {
        j = {{"project", o.project}, {"import_path", o.import_path}, {"modules", o.modules}, {"files", json::array()}};
        for (const auto& [file, owner] : o.files)
        {
            json one = owner;
            one["file"] = file;
            j["files"].push_back(std::move(one));
        }
    }

    void from_json(const json& j, ownership& o)
    {
        o.project = j.value("project", std::vector<project_root>{});
        o.import_path = j.value("import_path", std::vector<std::string>{});
        o.modules = j.value("modules", std::map<std::string, std::string>{});
        for (const auto& one : j.value("files", json::array()))
        {
            o.files[one.at("file").get<std::string>()] = one.get<file_owner>();
        }
    }
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(declined_lever, mechanism, lever, module, device, reason, numbers, recommendation)
    void to_json(json& j, const replay_measurement& m);
    void from_json(const json& j, replay_measurement& m);

    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(settling, added_before, added_after, max_samples, settled, interrupted,
                                                    stopped_because)
    namespace
    {
        // A clock named by its word (cold_module_cpu_ms), or in a report written before the
        // clocks were words of their own, by its name at the start of a sentence ("compile
        // elapsed"); none for "" or null.
        std::optional<xwarp::clock> clock_from(const json& j)
        {
            if (!j.is_string() || j.get_ref<const std::string&>().empty())
            {
                return std::nullopt;
            }
            const std::string& word = j.get_ref<const std::string&>();
            if (const auto c = member_named<xwarp::clock>(word))
            {
                return c;
            }
            if (const auto c = clock_named_in(word))
            {
                return c;
            }
            throw std::invalid_argument("\"" + word + "\" names no clock");
        }

        json clock_json(const std::optional<xwarp::clock>& c)
        {
            return c ? json(word_of(*c)) : json(nullptr);
        }

        // A judged_on as the JSON holds it: the sentence, and the clock's word beside it.
        xwarp::judged_on judged_on_from(const json& sentence, const json& word)
        {
            xwarp::judged_on on;
            const std::string text = sentence.is_string() ? sentence.get<std::string>() : std::string();
            const auto by = word.is_string() ? clock_from(word) : clock_from(sentence);
            on.by = by.value_or(xwarp::clock::cold_module_work);
            const std::string name = clock_name(on.by);
            on.why = text.rfind(name, 0) == 0 ? text.substr(std::min(text.size(), name.size() + (text.size() > name.size() ? 2 : 0)))
                                               : text;
            return on;
        }
    }

    namespace fields_but_clock
    {
        NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(fix_result, finding, mechanism, lever, module, files, patch, patch_file,
                                                        verdict, saving_ms, band_ms, samples, reason, notes, together, together_step,
                                                        applied, cold_builds_before, cold_builds_after, warm_builds_before,
                                                        warm_builds_after, finding_gone, verified_by)
    }

    void to_json(json& j, const fix_result& f)
    {
        fields_but_clock::to_json(j, f);
        j["clock"] = clock_json(f.clock);
    }

    void from_json(const json& j, fix_result& f)
    {
        fields_but_clock::from_json(j, f);
        f.clock = clock_from(j.value("clock", json()));
    }

    void to_json(json& j, const replay_measurement& m)
    {
        j = {{"lever", m.lever},
             {"verdict", m.verdict},
             {"saving_ms", m.saving_ms},
             {"clock", clock_json(m.clock)},
             {"wall_saving_ms", m.wall_saving_ms},
             {"wall_clock", clock_json(m.wall_clock)},
             {"band_ms", m.band_ms},
             {"samples", m.samples},
             {"judged_on", m.judged_on},
             {"reason", m.reason},
             {"needs", m.needs},
             {"together", m.together},
             {"shows_number", m.shows_number}};
    }

    void from_json(const json& j, replay_measurement& m)
    {
        m.lever = j.value("lever", std::string());
        m.verdict = j.value("verdict", verdict::not_run);
        m.saving_ms = j.value("saving_ms", std::optional<double>{});
        m.clock = clock_from(j.value("clock", json()));
        m.wall_saving_ms = j.value("wall_saving_ms", std::optional<double>{});
        m.wall_clock = clock_from(j.value("wall_clock", json()));
        m.band_ms = j.value("band_ms", std::optional<double>{});
        m.samples = j.value("samples", 0);
        m.judged_on = j.value("judged_on", std::string());
        m.reason = j.value("reason", std::string());
        m.needs = j.value("needs", std::string());
        m.together = j.value("together", std::vector<int>{});
        m.shows_number = j.value("shows_number", true);
    }

    json measurement_json(const replay_measurement& m)
    {
        return m;
    }

    namespace
    {
        // A replay's saving on each clock, keyed by the clock's name in the report's JSON (in the
        // order of the clock's members); the first three are always written (null when not judged).
        constexpr std::array<std::string_view, 6> saving_keys{"cold_module_work", "compile_elapsed", "warm_module_work",
                                                              "cold_wall",        "cold_module_cpu", "warm_module_cpu"};

        json savings_json(const whatif_result& w)
        {
            json out = json::object();
            for (std::size_t k = 0; k < saving_keys.size(); ++k)
            {
                const auto saving = w.saving_on(static_cast<xwarp::clock>(k));
                if (saving || k < 3)
                {
                    out[std::string(saving_keys[k])] = saving ? json(*saving) : json(nullptr);
                }
            }
            return out;
        }
    }

    void to_json(json& j, const whatif_result& w)
    {
        j = {{"lever", w.lever},
             {"mechanism", w.mechanism},
             {"mechanisms", w.mechanisms},
             {"modules", w.modules},
             {"params", w.params},
             {"applied", w.applied},
             {"verdict", w.verdict},
             {"saving_ms", savings_json(w)},
             {"band_ms", w.band_ms},
             {"judged_on", w.judged_on.sentence()},
             {"judged_by", word_of(w.judged_on.by)},
             {"samples", w.samples},
             {"estimate_ms", w.estimate_ms},
             {"builds",
              {{"cold_baseline", w.cold_builds_baseline},
               {"cold_replay", w.cold_builds_replay},
               {"warm_baseline", w.warm_builds_baseline},
               {"warm_replay", w.warm_builds_replay}}},
             {"conditions",
              {{"busy_cpus_baseline", w.busy_cpus_baseline},
               {"busy_cpus_replay", w.busy_cpus_replay},
               {"caches_not_empty_at_start", w.caches_not_empty_at_start}}},
             {"reason", w.reason},
             {"steady_state", w.steady_state},
             {"needs", w.needs}};
        if (w.until_settled)
        {
            j["until_settled"] = *w.until_settled;
        }
    }

    void from_json(const json& j, whatif_result& w)
    {
        w.lever = j.value("lever", std::string());
        w.mechanism = j.value("mechanism", std::string());
        w.mechanisms = j.value("mechanisms", std::vector<std::string>{});
        w.modules = j.value("modules", std::vector<std::string>{});
        w.params = j.value("params", json::object());
        w.applied = j.value("applied", json::object());
        w.verdict = j.value("verdict", verdict::not_run);
        const json saving = j.value("saving_ms", json::object());
        for (std::size_t k = 0; k < saving_keys.size(); ++k)
        {
            const auto it = saving.find(saving_keys[k]);
            if (it != saving.end() && it->is_number())
            {
                w.savings[static_cast<xwarp::clock>(k)] = it->get<double>();
            }
        }
        w.band_ms = j.value("band_ms", std::optional<double>{});
        w.judged_on = judged_on_from(j.value("judged_on", json()), j.value("judged_by", json()));
        w.samples = j.value("samples", 0);
        w.estimate_ms = j.value("estimate_ms", std::optional<double>{});
        const json builds = j.value("builds", json::object());
        w.cold_builds_baseline = builds.value("cold_baseline", std::optional<int>{});
        w.cold_builds_replay = builds.value("cold_replay", std::optional<int>{});
        w.warm_builds_baseline = builds.value("warm_baseline", std::optional<int>{});
        w.warm_builds_replay = builds.value("warm_replay", std::optional<int>{});
        const json conditions = j.value("conditions", json::object());
        w.busy_cpus_baseline = conditions.value("busy_cpus_baseline", std::optional<double>{});
        w.busy_cpus_replay = conditions.value("busy_cpus_replay", std::optional<double>{});
        w.caches_not_empty_at_start = conditions.value("caches_not_empty_at_start", std::vector<std::string>{});
        w.reason = j.value("reason", std::string());
        w.steady_state = j.value("steady_state", json::object());
        w.needs = j.value("needs", std::string());
        if (j.contains("until_settled") && j["until_settled"].is_object())
        {
            w.until_settled = j["until_settled"].get<settling>();
        }
    }
    namespace fields_but_records
    {
        // every field but the cause, which the JSON writer writes from its text
        NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(finding,
                                                    mechanism,
                                                    title,
                                                    module,
                                                    device,
                                                    evidence,
                                                    location,
                                                    locations,
                                                    recommendation,
                                                    savings_ms,
                                                    savings_clock,
                                                    kind,
                                                    guide,
                                                    lever,
                                                    measured,
                                                    owner,
                                                    library,
                                                    tests)
    }

    namespace
    {
        // What a finding's savings_ms is, for a reader of the JSON: a measured saving, an estimate
        // (and why it stands unmeasured), or no figure. Written, never read back: derived.
        void add_savings_basis(json& j, const finding& f)
        {
            const auto source = f.headline();
            j["savings_basis"] = source == finding::headline_source::measured_gain      ? "measured"
                                 : source == finding::headline_source::measured_no_gain ? "measured-no-gain"
                                 : source == finding::headline_source::estimate         ? "estimate"
                                                                                         : "none";
            j["savings_why"] = f.estimate_why();
        }
    }

    void to_json(json& j, const finding& f)
    {
        fields_but_records::to_json(j, f);
        add_savings_basis(j, f);
        j["cause"] = f.cause;
    }

    void from_json(const json& j, finding& f)
    {
        fields_but_records::from_json(j, f);
        f.cause = j.value("cause", json_text());
    }
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(gpu_info, ordinal, name, compute_capability, memory_bytes)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(environment,
                                                    probe_version,
                                                    warp_version,
                                                    python_version,
                                                    python_executable,
                                                    os,
                                                    machine,
                                                    host,
                                                    project_commit,
                                                    cpu_model,
                                                    cpu_count,
                                                    cuda_toolkit,
                                                    nvrtc_version,
                                                    nvrtc_cache,
                                                    nvrtc_cache_first_ms,
                                                    nvrtc_cache_second_ms,
                                                    cuda_cache_maxsize,
                                                    cuda_driver,
                                                    cuda_status,
                                                    gpus,
                                                    warp_devices,
                                                    sources)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(settings, samples, timeout_s, python, sampling, stopped_because, nvrtc_trace)

    // comparison
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
        compare_side, path, label, command, warp_version, devices, samples_ok, samples_total, status)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(launch_divergence, index, before, after)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(kernel_rename, before, after)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(count_change, kernel, before, after)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
        workload_check, status, reason, before_launches, after_launches, renames, first_divergence, moved_counts)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(clock_judgement,
                                                    clock,
                                                    before_median,
                                                    after_median,
                                                    before_mad,
                                                    delta_ms,
                                                    delta_pct,
                                                    band_ms,
                                                    p_value,
                                                    test,
                                                    n_before,
                                                    n_after,
                                                    outcome,
                                                    samples_needed,
                                                    load_delta_ms,
                                                    note)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(hash_receipt, module, device, before, after, changed)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(structure_delta, name, before, after, in_bytes)
    NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
        option_check, option, module, intended, module_value, set_at, message)
    namespace fields_but_clock
    {
        NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(comparison,
                                                    schema_version,
                                                    tool,
                                                    created_utc,
                                                    before,
                                                    after,
                                                    verdict,
                                                    exit_code,
                                                    reasons,
                                                    notes,
                                                    workload,
                                                    clocks,
                                                    indicative,
                                                    same_structure,
                                                    receipts,
                                                    structure,
                                                    option_checks,
                                                    until_settled)
    }

    // judged_on as the sentence (which clock, and why) and decided_by as the clock's word
    void to_json(json& j, const comparison& c)
    {
        fields_but_clock::to_json(j, c);
        j["judged_on"] = c.judged_on.sentence();
        j["decided_by"] = word_of(c.judged_on.by);
    }

    void from_json(const json& j, comparison& c)
    {
        fields_but_clock::from_json(j, c);
        c.judged_on = judged_on_from(j.value("judged_on", json()), j.value("decided_by", json()));
    }

    json comparison_to_json(const comparison& c)
    {
        return c;
    }

    comparison comparison_from_json(const json& j)
    {
        try
        {
            return j.get<comparison>();
        }
        catch (const json::exception& e)
        {
            throw report_error(report_error::kind::shape, std::string("malformed comparison: ") + e.what());
        }
    }

    namespace
    {
        // Everything report_to_json writes but the parts that grow with the program: the
        // samples, the summary and the findings.
        json report_fixed_fields(const report& r)
        {
            json j;
            j["schema_version"] = r.schema_version;
            j["tool"] = r.tool;
            j["created_utc"] = r.created_utc;
            j["status"] = r.status;
            j["label"] = r.label;
            j["command"] = r.command;
            j["cwd"] = r.cwd;
            if (r.ownership)
            {
                j["ownership"] = *r.ownership;
            }
            j["settings"] = r.run_settings;
            j["setup_code"] = r.setup_code;
            j["cell_code"] = r.cell_code;
            j["environment"] = r.env;
            j["declined"] = r.declined;
            j["whatif"] = r.whatif;
            j["fixes"] = r.fixes;
            j["warnings"] = r.warnings;
            j["errors"] = r.errors;
            return j;
        }

        // Writes JSON text as dump(indent) writes it (indent -1: compact), a member or element
        // at a time, so that a report's large arrays never exist as one tree. With a stream, the
        // text goes to it a block at a time and never exists whole either (38 MB pretty-printed
        // for 10,000 identities, held three times over while its string grew).
        class text_writer
        {
        public:
            text_writer(std::string& out, int indent, std::ostream* stream = nullptr)
                : m_out(out), m_indent(indent), m_stream(stream)
            {
            }

            // What is left in the buffer, to the stream.
            void flush()
            {
                if (m_stream && !m_out.empty())
                {
                    m_stream->write(m_out.data(), static_cast<std::streamsize>(m_out.size()));
                    m_out.clear();
                }
            }

            void value(const json& j)
            {
                const std::string text = j.dump(m_indent, ' ', false, json::error_handler_t::replace);
                if (m_stream && text.size() >= stream_block)
                {
                    // a large value (a finding whose cause lists 50,000 modules: megabytes) goes
                    // straight to the stream: copied into the buffer, the buffer kept its size
                    flush();
                    write_shifted(text, [this](const char* data, std::size_t n)
                                  { m_stream->write(data, static_cast<std::streamsize>(n)); });
                    return;
                }
                write_shifted(text, [this](const char* data, std::size_t n) { m_out.append(data, n); });
            }

            // Compact JSON text as dump(indent) would write the value it holds (a finding's
            // cause): re-indented as it is copied, where a tree parsed from it to be dumped was
            // 0.8 MB of a 10,000-identity report's writing peak. The text must be what dump(-1)
            // writes (json_text's is).
            void compact_text(const std::string& text)
            {
                if (m_indent < 0)
                {
                    m_out += text;
                    return;
                }
                int depth = m_level;
                for (std::size_t i = 0; i < text.size(); ++i)
                {
                    const char c = text[i];
                    switch (c)
                    {
                    case '"':
                    {
                        // a string as it is, to its closing quote (a quote inside is escaped)
                        std::size_t end = i + 1;
                        while (end < text.size() && text[end] != '"')
                        {
                            end += text[end] == '\\' ? 2 : 1;
                        }
                        m_out.append(text, i, end + 1 - i);
                        i = end;
                        break;
                    }
                    case '{':
                    case '[':
                        m_out += c;
                        if (i + 1 < text.size() && (text[i + 1] == '}' || text[i + 1] == ']'))
                        {
                            m_out += text[++i];  // {} and [] stay on one line
                            break;
                        }
                        ++depth;
                        indented_newline(depth);
                        break;
                    case '}':
                    case ']':
                        --depth;
                        indented_newline(depth);
                        m_out += c;
                        break;
                    case ',':
                        m_out += ',';
                        indented_newline(depth);
                        break;
                    case ':':
                        m_out += ": ";
                        break;
                    default:
                        m_out += c;
                    }
                    if (m_stream && m_out.size() >= stream_block)
                    {
                        flush();
                    }
                }
            }

            // An array, each element written by `write`.
            template <typename T, typename Write>
            void array(const std::vector<T>& items, Write write)
            {
                if (items.empty())
                {
                    m_out += "[]";
                    return;
                }
                m_out += '[';
                ++m_level;
                for (std::size_t i = 0; i < items.size(); ++i)
                {
                    if (i > 0)
                    {
                        m_out += ',';
                    }
                    newline();
                    write(items[i]);
                    if (m_stream && m_out.size() >= stream_block)
                    {
                        flush();
                    }
                }
                --m_level;
                newline();
                m_out += ']';
            }

            template <typename T>
            void each(const std::vector<T>& items)
            {
                array(items, [&](const T& item) { value(json(item)); });
            }

            // An object (keys in order), with the members in `later` written by their
            // functions in their place among the others.
            void object(const json& head, const std::map<std::string, std::function<void()>>& later)
            {
                if (head.empty() && later.empty())
                {
                    m_out += "{}";
                    return;
                }
                m_out += '{';
                ++m_level;
                bool first = true;
                auto key = [&](const std::string& k)
                {
                    if (!first)
                    {
                        m_out += ',';
                    }
                    first = false;
                    newline();
                    m_out += json(k).dump(-1, ' ', false, json::error_handler_t::replace);
                    m_out += m_indent < 0 ? ":" : ": ";
                };
                auto next = later.begin();
                for (const auto& [k, v] : head.items())
                {
                    for (; next != later.end() && next->first < k; ++next)
                    {
                        key(next->first);
                        next->second();
                    }
                    key(k);
                    value(v);
                }
                for (; next != later.end(); ++next)
                {
                    key(next->first);
                    next->second();
                }
                --m_level;
                newline();
                m_out += '}';
            }

        private:
            // dump() indents from column 0: its lines shifted to this depth (a JSON string never
            // holds a raw newline, so every newline is dump's own), a line at a time.
            template <typename Put>
            void write_shifted(const std::string& text, Put put)
            {
                if (m_indent < 0 || m_level == 0)
                {
                    put(text.data(), text.size());
                    return;
                }
                const std::string shift(static_cast<std::size_t>(m_level * m_indent), ' ');
                std::size_t from = 0;
                for (auto nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', from))
                {
                    put(text.data() + from, nl + 1 - from);
                    put(shift.data(), shift.size());
                    from = nl + 1;
                }
                put(text.data() + from, text.size() - from);
            }

            void newline()
            {
                if (m_indent >= 0)
                {
                    indented_newline(m_level);
                }
            }

            void indented_newline(int depth)
            {
                m_out += '\n';
                m_out.append(static_cast<std::size_t>(depth * m_indent), ' ');
            }

            static constexpr std::size_t stream_block = 1 << 16;

            std::string& m_out;
            int m_indent;
            std::ostream* m_stream;
            int m_level = 0;
        };

        void write_pass(text_writer& w, const run_result& p)
        {
            json head;
            fields_but_records::to_json(head, p);
            w.object(head,
                     {{"launches", [&] { w.each(p.launches); }},
                      {"module_loads", [&] { w.each(p.module_loads); }}});
        }

        void write_summary(text_writer& w, const summary& s)
        {
            json head;
            fields_but_records::to_json(head, s);
            w.object(head,
                     {{"identities", [&] { w.each(s.identities); }},
                      {"launch_kernels", [&] { w.each(s.launch_kernels); }},
                      {"modules", [&] { w.each(s.modules); }},
                      {"rebuilt", [&] { w.each(s.rebuilt); }},
                      {"tests", [&] { w.each(s.tests); }},
                      {"workers", [&] { w.each(s.workers); }},
                      {"timeline", [&] {
                           json timeline_head;
                           fields_but_records::to_json(timeline_head, s.timeline);
                           w.object(timeline_head, {{"spans", [&] { w.each(s.timeline.spans); }}});
                       }}});
        }

        void write_sample(text_writer& w, const sample& s)
        {
            json head;
            fields_but_records::to_json(head, s);
            w.object(head,
                     {{"cold", [&] { write_pass(w, s.cold); }},
                      {"warm", [&] { s.warm ? write_pass(w, *s.warm) : w.value(json()); }}});
        }
    }

    json report_to_json(const report& r)
    {
        json j = report_fixed_fields(r);
        j["summary"] = r.result;
        j["findings"] = r.findings;
        j["samples"] = r.samples;
        return j;
    }

    namespace
    {
        void write_report(text_writer& w, const report& r)
        {
            w.object(report_fixed_fields(r),
                     {{"findings", [&] {
                           w.array(r.findings, [&](const finding& f) {
                               json head;
                               fields_but_records::to_json(head, f);
                               add_savings_basis(head, f);
                               w.object(head, {{"cause", [&] { w.compact_text(f.cause.text()); }}});
                           });
                       }},
                      {"summary", [&] { write_summary(w, r.result); }},
                      {"samples", [&] { w.array(r.samples, [&](const sample& s) { write_sample(w, s); }); }}});
        }
    }

    std::string report_json_text(const report& r, int indent)
    {
        std::string out;
        text_writer w(out, indent);
        write_report(w, r);
        return out;
    }

    void write_report_json(std::ostream& out, const report& r, int indent)
    {
        std::string buffer;
        text_writer w(buffer, indent, &out);
        write_report(w, r);
        w.flush();
    }

    namespace
    {
        // nlohmann's message with its id prefix ("[json.exception.type_error.302] ") cut off.
        std::string json_message(const json::exception& e)
        {
            std::string what = e.what();
            auto close = what.find("] ");
            if (what.rfind("[json.exception.", 0) == 0 && close != std::string::npos)
            {
                what = what.substr(close + 2);
            }
            return what;
        }
    }

    report report_from_json(const json& j)
    {
        if (!j.is_object())
        {
            throw report_error(report_error::kind::shape, "not a warp-probe report: at /: expected an object, got " + std::string(j.type_name()));
        }
        auto version = j.find("schema_version");
        if (version == j.end())
        {
            throw report_error(report_error::kind::shape, "not a warp-probe report: at /schema_version: required, expected a "
                                                          "whole number");
        }
        if (!version->is_number_integer())
        {
            throw report_error(report_error::kind::schema_version,
                               "malformed report: at /schema_version: expected a whole number from "
                                   + std::to_string(oldest_readable_schema_version) + " to "
                                   + std::to_string(report_schema_version) + ", got " + version->dump().substr(0, 40));
        }
        // Compared as written: 4294967297 must not wrap to 1, nor 2^64-1 to -1.
        const bool in_range = version->is_number_unsigned()
                                  ? version->get<std::uint64_t>() >= static_cast<std::uint64_t>(oldest_readable_schema_version)
                                        && version->get<std::uint64_t>() <= static_cast<std::uint64_t>(report_schema_version)
                                  : version->get<std::int64_t>() >= oldest_readable_schema_version
                                        && version->get<std::int64_t>() <= report_schema_version;
        if (!in_range)
        {
            throw report_error(report_error::kind::schema_version,
                               "report schema_version " + version->dump() + " at /schema_version: expected "
                                   + std::to_string(oldest_readable_schema_version) + " to "
                                   + std::to_string(report_schema_version)
                                   + " (what this warp-probe reads; a newer xwarp wrote it?)");
        }
        if (j.contains("verdict") && j.contains("before") && j.contains("after"))
        {
            throw report_error(report_error::kind::shape,
                               "this is a comparison (written by warp-probe compare --json), not a measurement report");
        }
        // Look at the type before the value: j.value() throws on a number where a string belongs.
        if (const auto tool = j.find("tool"); tool != j.end() && tool->is_string() && tool->get<std::string>() != "warp-probe")
        {
            throw report_error(report_error::kind::shape, "not a warp-probe report: at /tool: expected \"warp-probe\", got "
                                                              + json(j["tool"].get<std::string>()).dump(-1, ' ', true,
                                                                                                        json::error_handler_t::replace));
        }
        if (!j.contains("samples"))
        {
            throw report_error(report_error::kind::shape, "not a warp-probe report: at /samples: required, expected a list of samples");
        }
        check_report_types(j);
        try
        {
            report r;  // read as the current version: fields version 1 lacked take their defaults
            r.tool = j.value("tool", std::string("warp-probe"));
            r.created_utc = j.value("created_utc", std::string());
            r.status = j.value("status", run_status::ok);
            r.label = j.value("label", std::string());
            r.command = j.value("command", std::vector<std::string>{});
            r.cwd = j.value("cwd", std::string());
            if (j.contains("ownership") && j["ownership"].is_object())
            {
                r.ownership = j["ownership"].get<ownership>();
            }
            if (j.contains("settings"))
            {
                r.run_settings = j.at("settings").get<settings>();
            }
            r.setup_code = j.value("setup_code", std::optional<std::string>{});
            r.cell_code = j.value("cell_code", std::optional<std::string>{});
            if (j.contains("environment"))
            {
                r.env = j.at("environment").get<environment>();
            }
            r.samples = j.value("samples", std::vector<sample>{});
            if (j.contains("summary"))
            {
                r.result = j.at("summary").get<summary>();
            }
            r.findings = j.value("findings", std::vector<finding>{});
            r.declined = j.value("declined", std::vector<declined_lever>{});
            r.whatif = j.value("whatif", std::vector<whatif_result>{});
            r.fixes = j.value("fixes", std::vector<fix_result>{});
            r.warnings = j.value("warnings", std::vector<std::string>{});
            r.errors = j.value("errors", std::vector<std::string>{});
            return r;
        }
        catch (const json::exception& e)
        {
            throw report_error(report_error::kind::shape, "malformed report: " + json_message(e));
        }
    }

    namespace
    {
        // Reads a report without holding its whole tree: the records that make up nearly all of
        // a large report (samples[i].cold|warm.module_loads[] and .launches[]) are converted one
        // by one as they arrive, and only the rest is kept as a tree for report_from_json.
        // Nesting deeper than max_json_depth is refused as it arrives.
        //
        // Records are read one of two ways. Directly: straight from the parser's events into
        // the model (record_events), which gives up on a record not as this tool writes it.
        // Checked: each record's tree is checked against the schema (which names a wrong
        // field) and converted through the JSON macros. read_streaming tries the first and
        // reads the report again the second way when it gave up.
        class streaming_reader
        {
        public:
            struct records
            {
                std::vector<module_load> loads;
                std::vector<launch_record> launches;
            };
            detail::json_tree_builder skeleton;
            std::map<std::pair<std::size_t, std::string>, records> streamed;  // (sample, pass) -> records
            std::optional<report_error> first_error;  // a record that failed, raised after the skeleton's checks
            bool gave_up = false;                     // read directly: a record needs the checked way

            explicit streaming_reader(record_reading how) : m_how(how) {}

            bool null() { return m_direct_depth ? direct(m_direct->null()) : value(json(nullptr)); }
            bool boolean(bool v) { return m_direct_depth ? direct(m_direct->boolean(v)) : value(json(v)); }
            bool number_integer(json::number_integer_t v)
            {
                return m_direct_depth ? direct(m_direct->integer(v)) : value(json(v));
            }
            bool number_unsigned(json::number_unsigned_t v)
            {
                return m_direct_depth ? direct(m_direct->unsigned_integer(v)) : value(json(v));
            }
            bool number_float(json::number_float_t v, const std::string&)
            {
                return m_direct_depth ? direct(m_direct->floating(v)) : value(json(v));
            }
            bool string(std::string& v) { return m_direct_depth ? direct(m_direct->string(v)) : value(json(std::move(v))); }
            bool binary(json::binary_t& v) { return m_direct_depth ? direct(false) : value(json(json::binary_t(std::move(v)))); }
            bool start_object(std::size_t) { return open(json::value_t::object); }
            bool start_array(std::size_t) { return open(json::value_t::array); }
            bool end_object() { return close(); }
            bool end_array() { return close(); }
            bool key(std::string& k)
            {
                if (m_direct_depth)
                {
                    return direct(m_direct->key(k));  // keys inside a record name nothing the reader needs
                }
                m_frames.back().key = k;
                if (!(m_record ? m_record->key(k) : skeleton.key(k)))
                {
                    throw report_error(report_error::kind::shape, "malformed report: the key \"" + k
                                                                      + "\" twice in one object at " + where());
                }
                return true;
            }
            // nlohmann's message names the line and column (a NaN literal reads "invalid literal")
            bool parse_error(std::size_t, const std::string& last, const nlohmann::detail::exception& e)
            {
                syntax_error = json_message(e);
                if (!last.empty() && (last.back() == 'N' || last.back() == 'I'))
                {
                    syntax_error += " (NaN and Infinity, which Python's json writes, are not JSON)";
                }
                return false;
            }
            std::string syntax_error;  // why the text is not JSON, and where

        private:
            struct frame
            {
                bool array = false;
                std::string key;        // objects: the member being read
                std::size_t count = 0;  // arrays: elements read so far
            };
            record_reading m_how;
            std::vector<frame> m_frames;
            std::optional<detail::json_tree_builder> m_record;  // read checked: the record's tree
            std::optional<detail::record_events> m_direct;      // read directly (restarted for each record)
            detail::name_pool m_names;                           // the module names of the records read directly
            std::size_t m_direct_depth = 0;  // inside a record read directly: its nesting (no frames kept)
            std::size_t m_record_depth = 0;
            record_kind m_kind = record_kind::module_load;

            bool direct(bool ok)
            {
                if (!ok)
                {
                    gave_up = true;
                    return false;  // stops the parser: the caller reads the report the checked way
                }
                return true;
            }

            bool value(json v)
            {
                if (m_record)
                {
                    m_record->value(std::move(v));
                }
                else
                {
                    skeleton.value(std::move(v));
                }
                counted();
                return true;
            }

            void counted()
            {
                if (!m_frames.empty() && m_frames.back().array)
                {
                    ++m_frames.back().count;
                }
            }

            // The JSON pointer of the value being read, as far as the frames know it (within a
            // record read directly, the record's own path).
            std::string where() const
            {
                std::string path;
                for (const auto& f : m_frames)
                {
                    path += "/" + (f.array ? std::to_string(f.count) : f.key);
                    if (path.size() > 400)
                    {
                        return path + "/...";
                    }
                }
                return path.empty() ? "/" : path;
            }

            // samples / i / cold|warm / module_loads|launches / [here]
            bool at_record_start() const
            {
                return m_frames.size() == 5 && !m_frames[0].array && m_frames[0].key == "samples" && m_frames[1].array
                       && !m_frames[2].array && (m_frames[2].key == "cold" || m_frames[2].key == "warm")
                       && !m_frames[3].array && (m_frames[3].key == "module_loads" || m_frames[3].key == "launches")
                       && m_frames[4].array;
            }

            bool open(json::value_t type)
            {
                if (m_frames.size() + m_direct_depth >= static_cast<std::size_t>(max_json_depth))
                {
                    throw report_error(report_error::kind::shape,
                                       "nested deeper than " + std::to_string(max_json_depth) + " levels at " + where()
                                           + ": not a report this tool wrote");
                }
                if (m_direct_depth)
                {
                    ++m_direct_depth;
                    return direct(type == json::value_t::object ? m_direct->start_object() : m_direct->start_array());
                }
                if (!m_record && type == json::value_t::object && at_record_start())
                {
                    m_record_depth = m_frames.size() + 1;
                    m_kind = m_frames[3].key == "module_loads" ? record_kind::module_load : record_kind::launch;
                    if (m_how == record_reading::direct)
                    {
                        if (m_direct)
                        {
                            m_direct->restart(m_kind);
                        }
                        else
                        {
                            m_direct.emplace(m_kind, &m_names);
                        }
                        m_direct_depth = 1;
                        return direct(m_direct->start_object());
                    }
                    m_record.emplace();
                }
                m_frames.push_back({type == json::value_t::array, "", 0});
                if (m_record)
                {
                    m_record->open(type);
                }
                else
                {
                    skeleton.open(type);
                }
                return true;
            }

            bool close()
            {
                if (m_direct_depth)
                {
                    if (!m_direct->end())
                    {
                        return direct(false);
                    }
                    if (--m_direct_depth == 0)
                    {
                        finish_direct_record();
                        counted();  // the record, in its array
                    }
                    return true;
                }
                m_frames.pop_back();
                if (m_record)
                {
                    m_record->close();
                    if (m_frames.size() + 1 == m_record_depth)
                    {
                        finish_record();
                    }
                }
                else
                {
                    skeleton.close();
                }
                counted();
                return true;
            }

            void finish_direct_record()
            {
                auto& into = streamed[{m_frames[1].count, m_frames[2].key}];
                if (m_kind == record_kind::module_load)
                {
                    into.loads.push_back(std::move(m_direct->load()));
                }
                else
                {
                    into.launches.push_back(std::move(m_direct->launch()));
                }
            }

            void finish_record()
            {
                json record = std::move(m_record->root);
                m_record.reset();
                if (first_error)
                {
                    return;  // the report is refused anyway: nothing more to convert
                }
                const std::size_t sample = m_frames[1].count;
                const std::string at = "/samples/" + std::to_string(sample) + "/" + m_frames[2].key + "/"
                                       + m_frames[3].key + "/" + std::to_string(m_frames[4].count);
                auto& into = streamed[{sample, m_frames[2].key}];
                try
                {
                    check_record_types(record, m_kind, at);
                    if (m_kind == record_kind::module_load)
                    {
                        into.loads.push_back(record.get<module_load>());
                    }
                    else
                    {
                        into.launches.push_back(record.get<launch_record>());
                    }
                }
                catch (const report_error& e)
                {
                    first_error = e;
                }
                catch (const json::exception& e)
                {
                    first_error = report_error(report_error::kind::shape, "malformed report: at " + at + ": " + json_message(e));
                }
            }
        };

        // One reading of a report; nullopt when read directly and a record needs the checked way.
        template <typename Input>
        std::optional<report> read_streaming(Input&& input, record_reading how)
        {
            streaming_reader reader(how);
            if (!json::sax_parse(std::forward<Input>(input), &reader))
            {
                if (reader.gave_up)
                {
                    return std::nullopt;
                }
                throw report_error(report_error::kind::not_json,
                                   reader.syntax_error.empty() ? "not JSON" : "not JSON: " + reader.syntax_error);
            }
            report r = report_from_json(reader.skeleton.root);  // the version and the shape first
            if (reader.first_error)
            {
                throw *reader.first_error;
            }
            for (auto& [where, recs] : reader.streamed)
            {
                if (where.first >= r.samples.size())
                {
                    continue;
                }
                sample& s = r.samples[where.first];
                run_result* run = where.second == "cold" ? &s.cold : (s.warm ? &*s.warm : nullptr);
                if (!run)
                {
                    continue;
                }
                // Taken whole: the skeleton holds no records, and each (sample, pass) is read once.
                // Moved element by element, the records were held twice at the end of reading, the
                // reader's peak.
                run->module_loads = std::move(recs.loads);
                run->launches = std::move(recs.launches);
            }
            return r;
        }
    }

    namespace
    {
        // Reads directly, and again the checked way when that gave up; read(how) is one reading.
        template <typename Read>
        report read_either_way(Read read)
        {
            if (auto r = read(record_reading::direct))
            {
                return std::move(*r);
            }
            return read(record_reading::checked).value();
        }
    }

    namespace
    {
        // Why a file this large is not read: its size (whole MiB at least, so 265 is not "256"),
        // the bound, and that the tool's own reports stay far below it.
        std::string too_large(std::uintmax_t bytes)
        {
            std::ostringstream out;
            out << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / (1 << 20)
                << " MiB, above the " << (max_report_bytes >> 20)
                << " MiB a report may be (reading it would hold about seven times that in memory; the "
                   "reports warp-probe writes are far smaller): not read";
            return out.str();
        }
    }

    report report_from_text(const std::string& text)
    {
        return read_either_way([&text](record_reading how) { return report_from_text(text, how); });
    }

    std::optional<report> report_from_text(const std::string& text, record_reading how)
    {
        if (text.size() > max_report_bytes)
        {
            throw report_error(report_error::kind::shape, too_large(text.size()));
        }
        return read_streaming(text, how);
    }

    namespace
    {
        // How long a FIFO may wait for its writer before a reader says there is none.
        constexpr int fifo_writer_wait_ms = 3000;

        // What can be read once only (standard input, a FIFO, a pipe), spooled to a private
        // temporary file (the reader may need a second pass; a report of a gigabyte is not held
        // in memory twice), bounded by max_report_bytes, and refused at its first byte when that
        // cannot begin a JSON object.
        class spooled_input
        {
        public:
            spooled_input(int fd, const std::string& path)
            {
                std::string dir = std::filesystem::temp_directory_path().string();
                std::string name = dir + "/xwarp-report-XXXXXX";
                const int out = ::mkstemp(name.data());
                if (out < 0)
                {
                    throw report_error(report_error::kind::missing, path + ": no temporary file to read it into ("
                                                                        + std::strerror(errno) + ")");
                }
                m_path = name;
                try
                {
                    spool(fd, out, path);
                }
                catch (...)
                {
                    // a refused input leaves no spool file behind (the destructor of an object whose
                    // constructor throws does not run)
                    std::error_code ec;
                    std::filesystem::remove(m_path, ec);
                    throw;
                }
            }

            void spool(int fd, int out, const std::string& path)
            {
                char buf[1 << 16];
                std::size_t total = 0;
                bool looked = false;
                while (true)
                {
                    const ssize_t n = ::read(fd, buf, sizeof buf);
                    if (n < 0 && errno == EINTR)
                    {
                        continue;
                    }
                    if (n <= 0)
                    {
                        break;
                    }
                    if (!looked)
                    {
                        for (ssize_t i = 0; i < n && !looked; ++i)
                        {
                            const char c = buf[i];
                            if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
                            {
                                continue;
                            }
                            looked = true;
                            if (c != '{')
                            {
                                ::close(out);
                                throw report_error(report_error::kind::shape, path + ": not a report (it does not begin with a "
                                                                                  "JSON object)");
                            }
                        }
                    }
                    total += static_cast<std::size_t>(n);
                    if (total > max_report_bytes)
                    {
                        ::close(out);
                        throw report_error(report_error::kind::shape, path + ": " + too_large(total));
                    }
                    for (ssize_t done = 0; done < n;)
                    {
                        const ssize_t w = ::write(out, buf + done, static_cast<std::size_t>(n - done));
                        if (w < 0 && errno == EINTR)
                        {
                            continue;
                        }
                        if (w <= 0)
                        {
                            ::close(out);
                            throw report_error(report_error::kind::missing, path + ": could not spool it ("
                                                                                + std::strerror(errno) + ")");
                        }
                        done += w;
                    }
                }
                ::close(out);
            }
            ~spooled_input()
            {
                std::error_code ec;
                std::filesystem::remove(m_path, ec);
            }
            spooled_input(const spooled_input&) = delete;
            spooled_input& operator=(const spooled_input&) = delete;
            const std::string& path() const { return m_path; }

        private:
            std::string m_path;
        };

        // A FIFO is opened without blocking: with no writer, a reader would wait forever. Its
        // writer has a few seconds to begin; then it is read whole (it cannot be read twice).
        std::unique_ptr<spooled_input> read_fifo(const std::string& path)
        {
            const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
            if (fd < 0)
            {
                throw report_error(report_error::kind::missing, path + ": cannot open (" + std::strerror(errno) + ")");
            }
            pollfd waiter{fd, POLLIN, 0};
            int ready = 0;
            do
            {
                ready = ::poll(&waiter, 1, fifo_writer_wait_ms);
            } while (ready < 0 && errno == EINTR);
            if (ready <= 0 || !(waiter.revents & (POLLIN | POLLHUP)))
            {
                ::close(fd);
                throw report_error(report_error::kind::missing,
                                   path + ": a FIFO with no writer after " + std::to_string(fifo_writer_wait_ms / 1000)
                                       + " s: nothing to read (start its writer first, or give the report on standard "
                                         "input as -)");
            }
            ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
            try
            {
                auto text = std::make_unique<spooled_input>(fd, path);
                ::close(fd);
                return text;
            }
            catch (...)
            {
                ::close(fd);
                throw;
            }
        }
    }

    report load_report(const std::string& path)
    {
        std::error_code ec;
        if (path == "-" || std::filesystem::is_fifo(path, ec))
        {
            // read once, into a file of its own, then parsed from there (the reader may need a second pass)
            const std::unique_ptr<spooled_input> spooled =
                path == "-" ? std::make_unique<spooled_input>(STDIN_FILENO, "standard input") : read_fifo(path);
            const std::string name = path == "-" ? "standard input" : path;
            const auto read = [&spooled](record_reading how) {
                std::ifstream in(spooled->path(), std::ios::binary);
                return read_streaming(in, how);
            };
            try
            {
                return read_either_way(read);
            }
            catch (const report_error& e)
            {
                throw report_error(e.which(), name + ": " + e.what());
            }
        }
        if (std::filesystem::is_directory(path, ec))
        {
            throw report_error(report_error::kind::missing, path + ": is a directory, not a report");
        }
        const auto size = std::filesystem::file_size(path, ec);
        if (!ec && size > max_report_bytes)
        {
            throw report_error(report_error::kind::shape, path + ": " + too_large(size));
        }
        // straight from the file: no copy of its text
        const auto read = [&path](record_reading how) {
            std::ifstream in(path, std::ios::binary);
            if (!in)
            {
                throw report_error(report_error::kind::missing, path + ": cannot open (no such file?)");
            }
            return read_streaming(in, how);
        };
        try
        {
            return read_either_way(read);
        }
        catch (const report_error& e)
        {
            throw report_error(e.which(), path + ": " + e.what());
        }
    }

    std::string output_path_refused(const std::string& path)
    {
        struct ::stat st
        {
        };
        if (path.empty())
        {
            return "an empty path";
        }
        if (::lstat(path.c_str(), &st) != 0)
        {
            if (errno != ENOENT)
            {
                return std::strerror(errno);
            }
            const std::filesystem::path parent = std::filesystem::path(path).parent_path();
            struct ::stat folder
            {
            };
            if (!parent.empty() && (::stat(parent.c_str(), &folder) != 0 || !S_ISDIR(folder.st_mode)))
            {
                return "its folder " + parent.string() + " does not exist";
            }
            return {};
        }
        if (S_ISLNK(st.st_mode))
        {
            return "a symbolic link: the output is written as a file at the name, never through a link (remove the link, "
                   "or name the file it points at)";
        }
        if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
        {
            return "a device, not a file";
        }
        if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
        {
            return "a FIFO or a socket, not a file";
        }
        if (S_ISDIR(st.st_mode))
        {
            return "a folder, not a file";
        }
        if (!S_ISREG(st.st_mode))
        {
            return "not a regular file";
        }
        if (st.st_uid != ::geteuid())
        {
            return "a file of another user (uid " + std::to_string(st.st_uid) + "): written only over a file of yours";
        }
        return {};
    }

    void save_streamed(const std::string& path, const std::function<void(std::ostream&)>& write)
    {
        // Written as a file, never through what the name points at: a link, a device, a FIFO or
        // a folder at the name is refused (as root, renaming over /dev/stdout replaced it), and
        // so is another user's file. The text goes into a new file beside the target (created
        // exclusively, links not followed) and is renamed over it: a reader never sees it half
        // written, and a link planted at the name meanwhile is replaced, not followed.
        if (const std::string why = output_path_refused(path); !why.empty())
        {
            throw std::runtime_error("cannot write " + path + ": " + why);
        }
        const auto error = [&](int err) { return std::system_error(err, std::generic_category(), "cannot write " + path); };
        std::string written;
        int fd = -1;
        for (int attempt = 0; attempt < 100 && fd < 0; ++attempt)
        {
            written = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(attempt);
            fd = ::open(written.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
            if (fd < 0 && errno != EEXIST)
            {
                throw error(errno);
            }
        }
        if (fd < 0)
        {
            throw error(EEXIST);
        }
        ::close(fd);  // the name is ours (O_EXCL): the stream opens that same new file
        const auto discard = [&] { std::remove(written.c_str()); };  // the old file stays as it was
        {
            std::ofstream out(written, std::ios::binary | std::ios::trunc);
            if (!out)
            {
                const int err = errno;
                discard();
                throw error(err);
            }
            try
            {
                write(out);
            }
            catch (...)
            {
                out.close();
                discard();
                throw;
            }
            if (!out.flush())
            {
                const int err = errno;
                out.close();
                discard();
                throw error(err);
            }
        }
        if (std::rename(written.c_str(), path.c_str()) != 0)
        {
            const int err = errno;
            discard();
            throw error(err);
        }
    }

    void save_json(const std::string& path, const json& j)
    {
        save_streamed(path, [&](std::ostream& out) { out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n'; });
    }

    void save_report_json(const std::string& path, const report& r)
    {
        save_streamed(path, [&](std::ostream& out)
                      {
                          write_report_json(out, r, 2);
                          out << '\n';
                      });
    }
}
