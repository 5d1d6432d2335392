// What a measurement recorded: each pass's module loads (with their content snapshots and
// phases), the events that dirtied a module, the config assignments and API calls, the
// launches, the cache left behind; a sample is a cold pass and a warm pass. The runner fills
// these from the shim's records (contracts/shim_records.schema.json) or Warp's log lines.
#ifndef XWARP_MODEL_RECORDS_HPP
#define XWARP_MODEL_RECORDS_HPP

#include <algorithm>
#include <optional>
#include <string_view>

#include "xwarp/model/values.hpp"
#include "xwarp/model/verdicts.hpp"

namespace xwarp
{
    // One LTO artifact a module build asked for (MathDx tiles on CUDA).
    struct lto_artifact
    {
        std::string symbol;  // sha256 of Warp's LTO symbol, 16 hex
        bool built = false;  // false: served from Warp's LTO cache
        double ms = 0.0;
    };

    struct kernel_entry
    {
        std::string key;
        short_text hash;  // kernel content hash, 16 hex: held inline
        shared_text sig;   // generic instance signature, empty for plain kernels (most: one empty text)
        bool generic = false;
        nlohmann::json types;  // a generic instance's argument types as data (for preregister-overloads)
        std::optional<bool> enable_backward;  // the kernel's own option (@wp.kernel(enable_backward=...)), when set
        // Where its Python function lives: its __qualname__ ("make.<locals>.k" for one a factory
        // made) and __module__; empty when the shim did not record them. The warm-up imports by them.
        shared_text qualname;
        shared_text defined_in;
        // For a kernel a factory made at run time: the factory's module, qualname, file:line and
        // its arguments as tagged plain values ({"lit"}, {"tuple"}, {"list"}, {"ref"}, {"float"},
        // or {"object"} for one that is not plain data); null when none was recorded.
        nlohmann::json factory;
    };

    // A module's resolved options, read-only and shared: the loads of a program carry a few
    // distinct option sets between them (they differ by block_dim, if at all), and a report of
    // 10,000 identities held one copy per load (each a map of ten-odd options in a real run). A
    // new value is compared with the last few distinct ones made on this thread and shares one
    // that is equal.
    class shared_options
    {
    public:
        shared_options();  // an empty object
        explicit shared_options(nlohmann::json value);
        const nlohmann::json& operator*() const { return *m_value; }
        const nlohmann::json* operator->() const { return m_value.get(); }

    private:
        std::shared_ptr<const nlohmann::json> m_value;
    };
    void to_json(nlohmann::json& j, const shared_options& o);
    void from_json(const nlohmann::json& j, shared_options& o);

    // A snapshot's user functions, key -> deep hash, kept sorted by key in one vector: a map took
    // 48 bytes in every load, with functions or (nearly always) without, and a node per entry.
    class function_hashes
    {
    public:
        using entry = std::pair<std::string, std::string>;
        using const_iterator = std::vector<entry>::const_iterator;
        function_hashes() = default;
        function_hashes(std::initializer_list<entry> entries);
        std::string& operator[](const std::string& key);  // the key's hash, added in order when new
        const_iterator find(const std::string& key) const;
        std::size_t count(const std::string& key) const { return find(key) == end() ? 0 : 1; }
        const_iterator begin() const { return m_entries.begin(); }
        const_iterator end() const { return m_entries.end(); }
        std::size_t size() const { return m_entries.size(); }
        bool empty() const { return m_entries.empty(); }
        void clear() { m_entries.clear(); }
        friend bool operator==(const function_hashes& a, const function_hashes& b) { return a.m_entries == b.m_entries; }

    private:
        std::vector<entry> m_entries;
    };
    void to_json(nlohmann::json& j, const function_hashes& f);
    void from_json(const nlohmann::json& j, function_hashes& f);

    // What a module identity was made of when it loaded (recorded by the shim's hooks).
    struct content_snapshot
    {
        std::vector<kernel_entry> kernels;
        function_hashes functions;  // user @wp.func key -> deep hash
        shared_options options;      // resolved module options
        shared_text options_source;  // "resolved" (Warp >= 1.13) or "module": one text for many loads

        // Whether the build generated adjoint (backward) code: Warp generates it for each kernel
        // whose own enable_backward, else the module's, is true. Unknown when the module's option
        // was not recorded.
        std::optional<bool> holds_backward_code() const;
    };

    // A part of a load's time: code generation, the native compile, a MathDx LTO artifact,
    // a precompiled header written (inside the compile); in ms since the process's shim started.
    struct phase_span
    {
        std::string name;  // codegen, compile, lto, header: phase_kind
        double start_ms = 0.0;
        double ms = 0.0;
    };

    // The span kind of a phase a load records: one of the four the shim-records and report
    // schemas allow (codegen, compile, header, lto); nothing for any other name.
    inline std::optional<span_kind> phase_kind(std::string_view name)
    {
        const auto kind = member_named<span_kind>(name);
        return kind && *kind != span_kind::load && *kind != span_kind::nvrtc ? kind : std::nullopt;
    }

    // One module load that did work (compiled, cached or failed). Its texts that repeat from
    // load to load (device, thread, ...) are shared_text: a load was 640 bytes before its strings,
    // and a report of 100,000 identities holds 100,000 loads through every step.
    struct module_load
    {
        // Shared with the identities, spans and groups the summary makes from this load (a name
        // and a hash past the small-string limit were copied into each), and a name with the
        // loads of the same module next to it.
        shared_text module;
        shared_text hash;  // full hex from hooks; 7 hex when parsed from Warp's log
        shared_text device;
        std::optional<int> block_dim;
        load_status status = load_status::unknown;
        std::optional<double> warp_ms;   // Warp's own module timer
        std::optional<double> total_ms;  // the shim's wrapper: includes hashing
        std::optional<double> native_ms;  // clang / NVRTC (+ nvJitLink) call
        shared_text native_kind;          // "cpu" / "cuda"
        std::optional<double> codegen_ms;
        std::optional<std::int64_t> source_bytes;
        shared_text output_suffix;  // ".o", ".ptx", ".cubin"
        int ltoir_inputs = 0;
        std::vector<lto_artifact> lto;
        shared_text thread;
        std::int64_t pid = 0;
        double t_start_ms = 0.0;  // since the process's shim started
        std::int64_t seq = 0;     // order inside its process record
        figure_source source = figure_source::hook;  // hook or log: where this record came from
        std::optional<shared_text> error;
        std::optional<content_snapshot> snapshot;
        // Warp config values that differ from what the module was built with (an object), as
        // text: "{}" on nearly every load, and an empty JSON object was an allocation per load.
        json_text config_mismatch;
        bool via_preload = false;     // loaded inside wp.force_load / wp.load_module
        bool first_in_thread = false; // first native build of its thread (pays the thread's PCH)
        std::optional<double> pch_ms; // of native_ms: writing a precompiled header the thread lacked
        // The loading thread's CPU time during the load (Warp builds on the loading thread: code
        // generation, clang, NVRTC): the machine's load moves it less than a wall (shared cores still slow it).
        // None from Warp's log.
        std::optional<double> cpu_ms;
        // How long the loading thread waited for a CPU during the load (the kernel's run-queue
        // delay, /proc/thread-self/schedstat): the part of the load's wall the machine's load took.
        std::optional<double> cpu_wait_ms;
        // User-space instructions the loading thread retired during the load (perf_event_open),
        // where the kernel counts them for this process; none elsewhere.
        std::optional<std::int64_t> instructions;
        std::vector<phase_span> phases;
        shared_text triggered_by;     // the kernel whose launch needed this load (it waited for it)
        shared_text test;             // the test that was running (pytest's or unittest's id), "" outside any

        // The figure used for "module work": Warp's own timer when it ran, else the wrapper's.
        double work_ms() const;
        // What the load cost on a clock: its thread's CPU time on a CPU clock (where recorded),
        // else its module work.
        double cost_ms(clock on) const;
        // Of that, the precompiled header it wrote (pch_ms, a wall span, in the load's own ratio of
        // CPU time to wall on a CPU clock); 0 without one.
        double header_cost_ms(clock on) const;
        std::string short_hash() const { return hash.str().substr(0, 7); }
    };

    // Something that dirtied an already-loaded module, with the user statement that did it.
    struct dirty_event
    {
        std::string module;
        std::string trigger;  // kernel, overload, function, struct, options, unload, other
        nlohmann::json detail = nlohmann::json::object();
        std::optional<std::string> file;
        std::optional<int> line;
        std::int64_t seq = 0;
        double t_ms = 0.0;
    };

    struct config_set_event
    {
        std::string key;
        nlohmann::json old_value;
        nlohmann::json new_value;
        std::optional<std::string> file;
        std::optional<int> line;
        std::int64_t seq = 0;
        double t_ms = 0.0;
    };

    // A rare Warp API call the analysis needs: clear_kernel_cache, clear_lto_cache,
    // force_load, load_module, set_module_options, Tape (first creation).
    struct api_call_event
    {
        std::string function;
        nlohmann::json args = nlohmann::json::object();
        std::optional<std::string> file;
        std::optional<int> line;
        std::int64_t seq = 0;
        double t_ms = 0.0;
    };

    struct module_created_event
    {
        std::string module;
        std::optional<std::string> file;
        std::optional<int> line;
        std::int64_t seq = 0;
        double t_ms = 0.0;
    };

    // One Python process of the measured command that imported Warp.
    struct process_record
    {
        std::int64_t pid = 0;
        std::int64_t ppid = 0;
        std::vector<std::string> argv;
        std::string executable;
        std::string python;
        double started_unix = 0.0;
        std::string warp_version;
        nlohmann::json hooks = nlohmann::json::object();  // hook name -> installed?
        bool log_fallback = false;
        bool exited_cleanly = false;  // its exit record arrived
        std::optional<double> exited_ms;  // the exit record's time, ms since the shim started (its wall)
        nlohmann::json runtime = nlohmann::json::object();  // devices, toolkit, cache dir
        std::vector<dirty_event> dirty_events;
        std::vector<config_set_event> config_sets;
        std::vector<module_created_event> modules_created;
        std::vector<api_call_event> calls;
        std::vector<std::string> shim_errors;
        nlohmann::json whatif;        // in a what-if replay: {lever, applied: {what: count}}
        nlohmann::json launch_times;  // kernel -> steady-state launch ms (when asked for)
    };

    // A run of consecutive identical launches. Its dims are compact JSON text and its texts
    // that repeat from run to run are shared: a large report holds a record per launched kernel
    // and pass, and a JSON array and a string per argument type were most of each.
    struct launch_record
    {
        std::string kernel;
        shared_text module;  // held once per module by the report reader
        json_text dim = json_text::of_compact_text("null");
        shared_text device;
        shared_text_list dtypes;  // held once among launches with the same types
        int block_dim = 0;
        bool adjoint = false;
        std::int64_t count = 1;
        std::int64_t pid = 0;
    };

    // The machine's load while one pass ran: the CPU time the machine's other processes took
    // (/proc/stat's busy time less the pass's own processes and the probe's waiting thread).
    struct machine_load
    {
        int cpus = 0;
        double others_cpu_ms = 0.0;  // every other process's CPU time during the pass
        double own_cpu_ms = 0.0;     // the command's processes (their rusage, reaped by the probe)

        // The most wall the others could have taken from the pass: their CPU time shared over
        // the machine's CPUs (a fair scheduler takes no more from a program than that).
        double explains_ms() const { return cpus > 0 ? others_cpu_ms / cpus : 0.0; }
        // How many CPUs the others kept busy on average over a wall of `wall_ms`.
        // at most the machine's CPUs: other processes cannot keep more busy (a record that says
        // otherwise was not measured here)
        double busy_cpus(double wall_ms) const
        {
            return wall_ms > 0 ? std::min(others_cpu_ms / wall_ms, static_cast<double>(cpus)) : 0.0;
        }
    };

    // What one cache held when a pass started and when it ended.
    struct cache_state
    {
        cache_kind kind = cache_kind::warp_kernels;
        std::int64_t files_before = 0;
        std::int64_t bytes_before = 0;
        std::int64_t files_after = 0;
        std::int64_t bytes_after = 0;
        bool empty_at_start() const { return files_before == 0; }
    };

    // What one pass left in its private Warp cache.
    struct cache_inventory
    {
        int module_dirs = 0;
        int source_files = 0;
        std::int64_t source_bytes = 0;
        int binary_files = 0;
        std::int64_t binary_bytes = 0;
        int lto_files = 0;
        std::int64_t lto_bytes = 0;
    };

    // measure --nvrtc-trace: a trace NVRTC wrote for one CUDA module build (Warp's
    // compile_time_trace), found in the cold pass's kernel cache after it ended.
    struct nvrtc_trace
    {
        std::string module_dir;   // wp_<module>_<hash7>: the build it belongs to
        std::string file;         // the trace's file name in that folder
        std::string hash_prefix;  // <hash7>, "" when the folder has no hash (strip_hash)
        // Its complete ("X") events, minus the "Total ..." summaries: name, ts and dur in
        // microseconds of NVRTC's own clock, args; at most nvrtc_trace_max_events, longest kept.
        nlohmann::json events = nlohmann::json::array();
        int events_dropped = 0;
    };
    inline constexpr int nvrtc_trace_max_events = 2000;

    // One execution of the command: the cold pass or the warm pass of a sample.
    struct run_result
    {
        double wall_ms = 0.0;
        std::optional<int> exit_code;
        std::optional<int> term_signal;
        bool timed_out = false;
        bool interrupted = false;
        std::string spawn_error;  // the command could not start
        std::vector<module_load> module_loads;
        std::vector<launch_record> launches;
        std::int64_t launch_total = 0;
        bool launches_truncated = false;
        std::vector<process_record> processes;
        figure_source load_source = figure_source::none;  // hook, log or none
        cache_inventory cache;
        std::string stdout_tail;
        std::string stderr_tail;
        std::string error_line;          // the last exception line of stderr ("ValueError: ..."), kept whole
        // Why some of the pass's records could not be read (a partial line, a record outside the
        // contract, a record the shim could not write, a file that is no regular file): such a
        // pass lost data, so it is not a good pass, and no budget or verdict is judged on it.
        std::string records_lost;
        // Kernel caches a process of the pass used outside the probe's private one (the program
        // set wp.config.kernel_cache_dir): what it built or found there is not this program's cold
        // start, so no budget or exercise limit is judged on the pass.
        std::vector<std::string> caches_outside;
        // A cold pass that started from an empty private kernel cache: the module folders it left
        // there that no recorded build of the pass made (copied in, or built by a process the
        // probe did not see), each "wp_<module>_<hash7>: why"; at most 20.
        std::vector<std::string> built_outside;
        // A test suite (its processes ran tests) that ended with exit code 1: tests failed. The pass
        // ran to its end and its records are whole, so it is good for what was built and by which
        // test (attribution, warm-up); a timing verdict needs a passing suite (compare refuses).
        bool tests_failed = false;
        std::vector<std::string> failed_tests;  // as the runner printed them (pytest's node ids, unittest's ids), at most 200
        int stray_processes_killed = 0;  // left running outside the process group, killed after the pass
        std::vector<std::string> stray_processes_left;  // "1234 (sleep)": left running, not permitted to kill
        // what held the pass's processes so that none outlived it (unrecorded in reports written
        // before it was)
        containment_kind containment = containment_kind::unrecorded;
        std::vector<nvrtc_trace> nvrtc_traces;  // measure --nvrtc-trace, cold passes
        // The machine's load while the pass ran; none when it could not be read (or in reports
        // written before it was recorded).
        std::optional<machine_load> load;
        // The caches the pass started from and what each held after it; empty in reports written
        // before they were recorded.
        std::vector<cache_state> caches;
        // What the command said of its own work (measure_options::results_file), null when it
        // wrote nothing readable; not part of the report's JSON.
        nlohmann::json own_results;
        std::vector<std::string> notes;

        bool ok() const;
    };

    struct sample
    {
        int index = 0;
        run_result cold;
        std::optional<run_result> warm;  // absent when the cold pass failed
        // One pass of a suite's own run, on whatever cache it had (the pytest plugin's report):
        // no warm pass by design. Its builds, tests and attribution are read like a cold pass's;
        // the figures that need a warm pass (compile elapsed, a cache not reused) are not made.
        bool one_pass = false;

        bool ok() const { return cold.ok() && (one_pass || (warm.has_value() && warm->ok())); }
    };

    // warmup --verify: a sample whose private caches a prime command (the warm-up file) filled
    // first, in a pass of its own ("warmup", with the shim: its builds are recorded); then the
    // program's cold pass, on the primed cache, and its warm pass. The program runs only when
    // the prime succeeded.
    struct primed_sample
    {
        run_result prime;
        sample program;
    };
}

#endif
