// The report model: the one contract between the runner, analysis, renderers and fronts.
//
// The runner fills samples[] with what it measured; analysis fills summary, findings and
// (for compare) verdicts; renderers only read. The same structure round-trips through JSON
// (json_io.hpp) and is described by probe/schema/report.schema.json.
#ifndef XWARP_MODEL_REPORT_HPP
#define XWARP_MODEL_REPORT_HPP

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace xwarp
{
    // 2 added whatif[] (the what-if replays); reports of version 1 are read too.
    inline constexpr int report_schema_version = 2;
    inline constexpr int oldest_readable_schema_version = 1;

    enum class load_status
    {
        compiled,
        cached,
        error,
        unknown
    };

    std::string to_string(load_status s);

    // j[key] as T when j is an object holding a T there, else `fallback`. Never throws: the JSON
    // kept raw in the model (options, call arguments, hooks) comes from report files too.
    template <class T>
    T field_or(const nlohmann::json& j, const char* key, T fallback)
    {
        if (!j.is_object())
        {
            return fallback;
        }
        const auto it = j.find(key);
        if (it == j.end())
        {
            return fallback;
        }
        try
        {
            return it->template get<T>();
        }
        catch (const nlohmann::json::exception&)
        {
            return fallback;
        }
    }

    inline std::string field_or(const nlohmann::json& j, const char* key, const char* fallback)
    {
        return field_or<std::string>(j, key, std::string(fallback));
    }

    // An optional number as JSON: the number, or null.
    inline nlohmann::json nullable(const std::optional<double>& v)
    {
        return v ? nlohmann::json(*v) : nlohmann::json();
    }

    namespace detail
    {
        // An immutable text with its own count of holders: a shared_text is one pointer to it
        // (a std::shared_ptr is two), and a report of 100,000 identities holds a few million
        // of them (eight in a load, six in a span, three in an identity...).
        class counted_text
        {
        public:
            explicit counted_text(std::string text) : m_text(std::move(text)) {}
            const std::string& str() const noexcept { return m_text; }
            void hold() const noexcept
            {
                if (!m_forever)
                {
                    m_holders.fetch_add(1, std::memory_order_relaxed);
                }
            }
            // The last holder deletes it. The one empty text is not counted: every default and
            // moved-from shared_text holds it, and counting it cost two atomic operations a move.
            void let_go() const noexcept
            {
                if (!m_forever && m_holders.fetch_sub(1, std::memory_order_acq_rel) == 1)
                {
                    delete this;
                }
            }
            static const counted_text* empty();

        private:
            struct forever_tag
            {
            };
            counted_text(forever_tag) : m_forever(true) {}

            mutable std::atomic<std::uint32_t> m_holders{1};
            const bool m_forever = false;
            const std::string m_text;
        };
    }

    // Text that many findings or spans repeat word for word (a mechanism's title, a
    // recommendation, a thread's name), held once: 50,000 churn findings of a 100,000-identity report carried 50,000 copies of one
    // 416-character recommendation. A text equal to one of the last few made on this thread
    // shares that one's copy. Read-only: a new text is a new value; a moved-from one is "".
    class shared_text
    {
    public:
        shared_text() noexcept : m_text(detail::counted_text::empty()) { m_text->hold(); }
        shared_text(std::string text);  // implicit, as the std::string it replaces
        shared_text(const char* text) : shared_text(std::string(text)) {}
        shared_text(const shared_text& other) noexcept : m_text(other.m_text) { m_text->hold(); }
        shared_text(shared_text&& other) noexcept : m_text(other.m_text)
        {
            other.m_text = detail::counted_text::empty();
            other.m_text->hold();
        }
        shared_text& operator=(const shared_text& other) noexcept
        {
            other.m_text->hold();  // first: other may be this
            m_text->let_go();
            m_text = other.m_text;
            return *this;
        }
        shared_text& operator=(shared_text&& other) noexcept
        {
            if (this != &other)
            {
                m_text->let_go();
                m_text = other.m_text;
                other.m_text = detail::counted_text::empty();
                other.m_text->hold();
            }
            return *this;
        }
        ~shared_text() { m_text->let_go(); }

        const std::string& str() const { return m_text->str(); }
        operator const std::string&() const { return m_text->str(); }
        operator std::string_view() const noexcept { return m_text->str(); }  // for keys of views
        bool empty() const { return str().empty(); }
        std::size_t size() const { return str().size(); }
        std::string::const_iterator begin() const { return str().begin(); }
        std::string::const_iterator end() const { return str().end(); }
        std::size_t find(const std::string& what) const { return str().find(what); }
        std::string substr(std::size_t pos, std::size_t n = std::string::npos) const { return str().substr(pos, n); }

        // Friends found only through a shared_text argument: JSON converts to anything with a
        // from_json, and free operators would make its comparisons with strings ambiguous.
        friend bool operator==(const shared_text& a, const std::string& b) { return a.str() == b; }
        friend bool operator==(const shared_text& a, const char* b) { return a.str() == b; }
        friend bool operator!=(const shared_text& a, const std::string& b) { return a.str() != b; }
        friend bool operator!=(const shared_text& a, const char* b) { return a.str() != b; }
        friend std::string operator+(const std::string& a, const shared_text& b) { return a + b.str(); }
        friend std::ostream& operator<<(std::ostream& o, const shared_text& t);

    private:
        // Takes over a text made with one holder (the recent memory's maker).
        explicit shared_text(const detail::counted_text* made) noexcept : m_text(made) {}

        const detail::counted_text* m_text;  // held: never null
    };
    void to_json(nlohmann::json& j, const shared_text& t);
    void from_json(const nlohmann::json& j, shared_text& t);

    // A list of texts that record after record repeats whole (a launch's argument types), held
    // once like a shared_text: each launch record held a vector of its own, an allocation per
    // record for the same one or two types. Read-only: a new list is a new value.
    class shared_text_list
    {
    public:
        shared_text_list();  // empty
        shared_text_list(std::vector<shared_text> items);  // implicit, as the vector it replaces
        const std::vector<shared_text>& items() const { return *m_items; }
        std::vector<shared_text>::const_iterator begin() const { return m_items->begin(); }
        std::vector<shared_text>::const_iterator end() const { return m_items->end(); }
        std::size_t size() const { return m_items->size(); }
        bool empty() const { return m_items->empty(); }
        const shared_text& operator[](std::size_t i) const { return (*m_items)[i]; }
        friend bool operator==(const shared_text_list& a, const shared_text_list& b)
        {
            return a.m_items == b.m_items || *a.m_items == *b.m_items;
        }
        friend bool operator!=(const shared_text_list& a, const shared_text_list& b) { return !(a == b); }

    private:
        std::shared_ptr<const std::vector<shared_text>> m_items;
    };
    void to_json(nlohmann::json& j, const shared_text_list& l);
    void from_json(const nlohmann::json& j, shared_text_list& l);

    // A JSON value held as its compact text and parsed when read. A finding's cause is made
    // once and read rarely (the what-if planner, a few detectors), and as a tree each one took
    // about ten times its text: 5,000 churn findings of a 10,000-identity report held 12 MB of
    // trees against 1.2 MB of text. Text that is not valid UTF-8 is kept with U+FFFD in its
    // place, as the report writer would write it anyway.
    class json_text
    {
    public:
        json_text() = default;  // {}
        explicit json_text(const nlohmann::json& value);
        // Text already as the constructor would make it (compact, members sorted, valid UTF-8),
        // put together by the caller from dumped parts; not checked.
        static json_text of_compact_text(std::string text);
        nlohmann::json value() const;
        const std::string& text() const { return m_text; }
        bool is_empty_object() const { return m_text == "{}"; }

    private:
        std::string m_text = "{}";
    };
    void to_json(nlohmann::json& j, const json_text& t);
    void from_json(const nlohmann::json& j, json_text& t);

    // Appends a string as json_text writes it (quoted, escaped as dump() escapes), for causes put
    // together from parts: a cause listing 50,000 module names was a tree of 50,000 copies
    // dumped once.
    void append_json_string(std::string& out, std::string_view s);
    // ["a","b",...] from names, as above.
    std::string json_string_array(const std::vector<std::string_view>& names);

    // A text held inline up to 23 characters, on the heap past that. A kernel's content hash is
    // 16 hex characters, one past std::string's 15 inline: a report of 10,000 identities held
    // 15,000 of them, each a 32-byte allocation beside its 32-byte string.
    class short_text
    {
    public:
        short_text() = default;
        short_text(std::string_view text) { assign(text); }  // implicit, as the std::string it replaces
        short_text(const std::string& text) : short_text(std::string_view(text)) {}
        short_text(const char* text) : short_text(std::string_view(text)) {}
        short_text(const short_text& other) { assign(other); }
        short_text(short_text&& other) noexcept { take(other); }
        short_text& operator=(const short_text& other)
        {
            if (this != &other)
            {
                assign(other);
            }
            return *this;
        }
        short_text& operator=(short_text&& other) noexcept
        {
            if (this != &other)
            {
                take(other);
            }
            return *this;
        }
        operator std::string_view() const noexcept
        {
            return m_long ? std::string_view(*m_long) : std::string_view(m_inline.data(), m_size);
        }
        std::string str() const { return std::string(std::string_view(*this)); }
        bool empty() const noexcept { return std::string_view(*this).empty(); }
        friend bool operator==(const short_text& a, std::string_view b) { return std::string_view(a) == b; }
        friend bool operator!=(const short_text& a, std::string_view b) { return std::string_view(a) != b; }
        friend std::string operator+(const std::string& a, const short_text& b) { return a + b.str(); }

    private:
        void assign(std::string_view text)
        {
            if (text.size() <= m_inline.size())
            {
                std::array<char, 23> copied{};  // the text may be this one's own
                std::copy(text.begin(), text.end(), copied.begin());
                m_inline = copied;
                m_size = static_cast<std::uint8_t>(text.size());
                m_long.reset();
                return;
            }
            m_long = std::make_unique<std::string>(text);
            m_size = 0;
        }
        void take(short_text& other) noexcept
        {
            m_inline = other.m_inline;
            m_size = other.m_size;
            m_long = std::move(other.m_long);
            other.m_size = 0;
        }

        std::array<char, 23> m_inline{};
        std::uint8_t m_size = 0;
        std::unique_ptr<std::string> m_long;
    };
    void to_json(nlohmann::json& j, const short_text& t);
    void from_json(const nlohmann::json& j, short_text& t);

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
    };

    // A part of a load's time: code generation, the native compile, a MathDx LTO artifact,
    // a precompiled header written (inside the compile); in ms since the process's shim started.
    struct phase_span
    {
        std::string name;  // codegen, compile, lto, header
        double start_ms = 0.0;
        double ms = 0.0;
    };

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
        shared_text source;       // "hook" or "log": where this record came from
        std::optional<shared_text> error;
        std::optional<content_snapshot> snapshot;
        // Warp config values that differ from what the module was built with (an object), as
        // text: "{}" on nearly every load, and an empty JSON object was an allocation per load.
        json_text config_mismatch;
        bool via_preload = false;     // loaded inside wp.force_load / wp.load_module
        bool first_in_thread = false; // first native build of its thread (pays the thread's PCH)
        std::optional<double> pch_ms; // of native_ms: writing a precompiled header the thread lacked
        std::vector<phase_span> phases;
        shared_text triggered_by;     // the kernel whose launch needed this load (it waited for it)

        // The figure used for "module work": Warp's own timer when it ran, else the wrapper's.
        double work_ms() const;
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
        std::string load_source = "none";  // "hook", "log" or "none"
        cache_inventory cache;
        std::string stdout_tail;
        std::string stderr_tail;
        std::string error_line;          // the last exception line of stderr ("ValueError: ..."), kept whole
        int stray_processes_killed = 0;  // left running outside the process group, killed after the pass
        std::vector<nvrtc_trace> nvrtc_traces;  // measure --nvrtc-trace, cold passes
        std::vector<std::string> notes;

        bool ok() const;
    };

    struct sample
    {
        int index = 0;
        run_result cold;
        std::optional<run_result> warm;  // absent when the cold pass failed

        bool ok() const { return cold.ok() && warm.has_value() && warm->ok(); }
    };

    struct stat
    {
        std::optional<double> median;
        std::optional<double> mad;  // median absolute deviation, unscaled
        std::vector<double> values;  // one per good sample
    };

    // A distinct (module, hash, device, block_dim) seen in the cold passes.
    struct identity
    {
        shared_text module;  // its first load's (shared)
        shared_text hash;
        shared_text device;
        std::optional<int> block_dim;
        double ms = 0.0;       // median over the samples that built it
        int builds = 0;        // compiled loads in the first good sample
        int samples_seen = 0;  // good samples whose cold pass loaded it
        shared_text status;    // status of its first load
        int kernels = -1;      // unique kernels in its snapshot, -1 unknown
    };

    // A module (per device) that loaded under more than one identity in one cold pass.
    struct rebuild_group
    {
        shared_text module;
        shared_text device;
        shared_text kind;  // "hash-churn" or "block-dim-spread"
        std::vector<shared_text> hashes;  // in load order, its identities' (shared)
        std::vector<int> block_dims;
        int builds = 0;
        double ms = 0.0;
        bool kernel_sets_known = true;  // false when the loads came from log lines
        // hash-churn: why each hash gave way to the next, in words (hashes.size() - 1 entries,
        // "" where it cannot be told): "kernel second added", "option mode: 'release' -> 'debug'".
        std::vector<std::string> moves;
    };

    // Per (module, device): how many identities it loaded and what they cost, heaviest first
    // (reports summarise the modules beyond their first rows with these).
    struct module_total
    {
        shared_text module;
        shared_text device;
        int identities = 0;
        int builds = 0;
        double ms = 0.0;
    };

    // Launches per kernel in the first good sample's cold pass (for reading, not for compare).
    struct launch_kernel_count
    {
        std::string kernel;
        shared_text module;  // its launches' (shared)
        shared_text device;
        std::int64_t count = 0;
        std::vector<int> block_dims;
        bool adjoint = false;
    };

    // When each build ran in one pass, for the timeline and the Chrome trace: one span per
    // load and per phase inside it, in ms since the pass's first process started.
    //
    // The texts every span of a pass repeats (its thread, kind, device, status, the launch that
    // waited, NVRTC's phase names) are shared_text: a span is one per load and phase, 100,000
    // and more in a large report, and these six were 192 of its 288 bytes.
    struct timeline_span
    {
        std::int64_t pid = 0;
        shared_text thread;
        shared_text kind;  // load, codegen, compile, header, lto, nvrtc (a phase NVRTC traced inside compile)
        shared_text module;  // its load's (shared)
        shared_text hash;
        shared_text device;
        std::optional<int> block_dim;
        shared_text status;        // of the load
        shared_text triggered_by;  // the launch that waited for the load
        shared_text detail;        // nvrtc: NVRTC's name for the phase, and its detail
        double start_ms = 0.0;
        double ms = 0.0;
    };

    struct build_timeline
    {
        int sample = 0;            // the sample drawn: the one whose cold wall is the median
        std::string pass = "cold";
        double wall_ms = 0.0;
        std::vector<std::string> lanes;  // "pid N / thread", in order of first build
        std::vector<timeline_span> spans;
    };

    struct flag
    {
        std::string id;  // CACHE_NOT_REUSED, BUILDS_OVERLAPPED, NO_LAUNCHES, COMPILE_SMALL_SHARE, ...
        std::string message;
    };

    struct summary
    {
        bool valid = false;  // false when no sample succeeded: no statistic is meaningful
        int samples_total = 0;
        int samples_ok = 0;
        stat cold_wall_ms;
        stat warm_wall_ms;
        stat compile_elapsed_ms;  // cold wall - warm wall, per sample
        stat cold_module_ms;
        stat warm_module_ms;
        stat native_ms;
        stat overlap_factor;        // summed build time / time with a build running (build spans)
        std::string overlap_note;   // why the overlap factor is not available, when it is not
        stat identity_count;
        stat source_bytes;
        stat lto_artifacts;
        stat launch_count;
        stat compile_share;  // compile elapsed / cold wall
        std::vector<identity> identities;
        bool identities_consistent = true;
        std::vector<int> identities_per_sample;
        std::vector<rebuild_group> rebuilt;
        std::vector<module_total> modules;
        std::vector<launch_kernel_count> launch_kernels;
        std::vector<flag> flags;
        build_timeline timeline;
        std::string load_source;        // hook, log, mixed, none
        std::string module_ms_source;   // warp-timer, wrapper, log, mixed
        std::string native_ms_source;   // hook, log, none
        std::vector<std::string> warnings;
    };

    // A diagnosed mechanism (filled by analysis/diagnose).
    struct source_location
    {
        std::string file;
        int line = 0;
    };

    // One of the places that caused a finding, with what happened there.
    struct cause_location
    {
        std::string file;
        int line = 0;
        std::string what;
    };

    struct finding
    {
        shared_text mechanism;  // CS-1..CS-13, option-not-arrived, ...
        shared_text title;
        shared_text module;  // a churning module's is its loads' (shared); a list of modules for some
        shared_text device;
        std::string evidence;
        json_text cause;  // an object: what the detector saw, for readers of the JSON
        std::optional<source_location> location;  // the primary place (the first of locations)
        std::vector<cause_location> locations;     // every place that caused it
        shared_text recommendation;
        std::optional<double> savings_ms;
        shared_text kind = "diagnosis";  // "diagnosis" or "advisory"
        shared_text guide;               // references/mechanisms.md anchor
        shared_text lever;               // the run-time lever that would fix it ("" when none)
        nlohmann::json measured;         // its lever's what-if replay: {verdict, saving_ms, band_ms, samples, reason}
    };

    // Samples added until a verdict settled (compare --until-settled, what-if replays with
    // --until-settled / --samples auto), and why adding stopped.
    struct settling
    {
        int added_before = 0;
        int added_after = 0;
        int max_samples = 0;
        bool settled = false;          // false: it stopped at max_samples (or was interrupted)
        std::string stopped_because;
    };

    // One what-if replay: the unmodified command run with a lever applied by the shim, its
    // samples interleaved with baseline samples and judged as compare judges two reports.
    struct whatif_result
    {
        std::string lever;
        std::string mechanism;             // the finding it measures (the first, when several)
        std::vector<std::string> mechanisms;  // every finding that names this lever
        std::vector<std::string> modules;
        nlohmann::json params = nlohmann::json::object();   // what the shim was asked to do
        nlohmann::json applied = nlohmann::json::object();  // what it did, with counts
        std::string verdict;  // improved, regressed, inconclusive, invalid, not-applied, not-run
        std::optional<double> saving_cold_module_ms;  // baseline - replay medians (positive: it saved)
        std::optional<double> saving_compile_elapsed_ms;
        std::optional<double> saving_warm_module_ms;  // keep-cache is judged on the warm pass
        std::optional<double> band_ms;   // the noise band of the clock it was judged on
        std::string judged_on;           // that clock
        int samples = 0;                 // replay samples (as many baseline samples, interleaved)
        std::optional<double> estimate_ms;  // the findings' estimate, kept for calibration
        std::string reason;
        nlohmann::json steady_state = nlohmann::json::object();  // mathdx-off: kernel -> {baseline_ms, replay_ms}
        std::optional<settling> until_settled;  // added_before: baseline samples (shared by the levers)

        // The saving a replay is quoted with: the one on the clock it was judged on. Decided
        // here once, for the findings, the text and the HTML alike.
        struct quoted_saving
        {
            std::string clock;  // "cold module work", "compile elapsed" or "warm module work"
            std::optional<double> ms;
        };
        quoted_saving quoted() const
        {
            if (judged_on.rfind("compile elapsed", 0) == 0)
            {
                return {"compile elapsed", saving_compile_elapsed_ms};
            }
            if (judged_on.rfind("warm module work", 0) == 0)
            {
                return {"warm module work", saving_warm_module_ms};
            }
            return {"cold module work", saving_cold_module_ms};
        }
    };

    // A lever the analysis considered for what it saw and rejected, with the numbers that
    // decided it: shown so that a missing recommendation is never a silent one.
    struct declined_lever
    {
        std::string mechanism;
        std::string lever;
        std::string module;
        std::string device;
        std::string reason;
        nlohmann::json numbers = nlohmann::json::object();
        std::string recommendation;  // what it would have said: used if a what-if replay measures a gain
    };

    struct gpu_info
    {
        int ordinal = 0;
        std::string name;
        std::string compute_capability;
        std::int64_t memory_bytes = 0;
    };

    struct environment
    {
        std::string probe_version;
        std::string warp_version;
        std::string python_version;
        std::string python_executable;
        std::string os;
        std::string machine;         // the architecture (uname -m)
        std::string host;            // the host name (uname -n): the history's machine
        std::string project_commit;  // git commit of the measured project's folder, when it is one
        std::string cpu_model;
        int cpu_count = 0;
        std::string cuda_toolkit;  // "13.0"
        std::string nvrtc_version;
        std::string cuda_driver;   // "13.0", empty when none
        std::string cuda_status;   // a sentence: "no CUDA device", "driver 12.4 older than runtime 13.0", ...
        std::vector<gpu_info> gpus;
        nlohmann::json warp_devices = nlohmann::json::array();  // as the target's Warp saw them
        std::map<std::string, std::string> sources;  // fact -> where it came from
    };

    struct settings
    {
        int samples = 0;
        std::optional<double> timeout_s;
        std::string python;
        std::string sampling;          // "fixed", or "auto (2 to 10)" for --samples auto
        std::string stopped_because;   // --samples auto: why it stopped where it did
        bool nvrtc_trace = false;      // --nvrtc-trace: compile_time_trace on, NVRTC's traces kept
    };

    struct report
    {
        int schema_version = report_schema_version;
        std::string tool = "warp-probe";
        std::string created_utc;
        std::string label;
        std::vector<std::string> command;
        std::string cwd;
        settings run_settings;
        std::optional<std::string> setup_code;  // %%warp_setup code a notebook probe ran first
        std::optional<std::string> cell_code;   // the probed notebook cell
        environment env;
        std::vector<sample> samples;
        summary result;
        std::vector<finding> findings;
        std::vector<declined_lever> declined;
        std::vector<whatif_result> whatif;
        std::vector<std::string> warnings;
        std::vector<std::string> errors;
        std::string status = "ok";  // ok, partial (some samples failed), failed, interrupted
    };

}  // namespace xwarp

#endif
