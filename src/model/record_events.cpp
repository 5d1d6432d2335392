// One report record straight from the parser's events (see record_events.hpp). Each setter
// below takes exactly the JSON types the schema gives its field (contracts/report.schema.json)
// and converts them as nlohmann's get<> would; any other value returns false (give up).
#include <algorithm>
#include "record_events.hpp"

#include <array>
#include <string_view>
#include <utility>

namespace xwarp::detail
{
    using nlohmann::json;

    struct record_events::scalar
    {
        enum class type
        {
            null,
            boolean,
            integer,
            unsigned_integer,
            floating,
            string
        } t = type::null;
        bool b = false;
        std::int64_t i = 0;
        std::uint64_t u = 0;
        double d = 0.0;
        std::string* s = nullptr;
    };

    namespace
    {
        using scalar = record_events::scalar;
        using type = scalar::type;

        // Each record's fields as the JSON names them.
        constexpr std::array<std::string_view, 31> load_fields{
            "module",      "hash",      "device",     "block_dim",     "status",          "warp_ms", "total_ms",
            "native_ms",   "native_kind", "codegen_ms", "source_bytes", "output_suffix",  "ltoir_inputs",
            "lto",         "thread",    "pid",        "t_start_ms",    "seq",             "source",  "error",
            "snapshot",    "config_mismatch", "via_preload", "first_in_thread", "pch_ms", "phases", "triggered_by", "test",
            "cpu_ms",      "cpu_wait_ms", "instructions"};
        constexpr std::array<std::string_view, 9> launch_fields{"kernel", "module", "dim",   "device", "dtypes",
                                                                "block_dim", "adjoint", "count", "pid"};
        constexpr std::array<std::string_view, 4> snapshot_fields{"kernels", "functions", "options", "options_source"};
        constexpr std::array<std::string_view, 9> kernel_fields{"key", "hash", "sig", "generic", "types", "enable_backward", "qualname", "defined_in", "factory"};
        constexpr std::array<std::string_view, 3> lto_fields{"symbol", "built", "ms"};
        constexpr std::array<std::string_view, 3> phase_fields{"name", "start_ms", "ms"};

        // The same fields by name, in the order of the arrays above.
        enum class load_field
        {
            module, hash, device, block_dim, status, warp_ms, total_ms, native_ms, native_kind, codegen_ms,
            source_bytes, output_suffix, ltoir_inputs, lto, thread, pid, t_start_ms, seq, source, error,
            snapshot, config_mismatch, via_preload, first_in_thread, pch_ms, phases, triggered_by, test,
            cpu_ms, cpu_wait_ms, instructions, n_fields
        };
        enum class launch_field
        {
            kernel, module, dim, device, dtypes, block_dim, adjoint, count, pid, n_fields
        };
        enum class snapshot_field
        {
            kernels, functions, options, options_source, n_fields
        };
        enum class kernel_field
        {
            key, hash, sig, generic, types, enable_backward, qualname, defined_in, factory, n_fields
        };
        enum class lto_field
        {
            symbol, built, ms, n_fields
        };
        enum class phase_field
        {
            name, start_ms, ms, n_fields
        };
        static_assert(load_fields.size() == static_cast<std::size_t>(load_field::n_fields));
        static_assert(load_fields.size() <= 64, "a frame's seen fields are one 64-bit mask");
        static_assert(launch_fields.size() == static_cast<std::size_t>(launch_field::n_fields));
        static_assert(snapshot_fields.size() == static_cast<std::size_t>(snapshot_field::n_fields));
        static_assert(kernel_fields.size() == static_cast<std::size_t>(kernel_field::n_fields));
        static_assert(lto_fields.size() == static_cast<std::size_t>(lto_field::n_fields));
        static_assert(phase_fields.size() == static_cast<std::size_t>(phase_field::n_fields));

        template <class Field>
        bool is(int field, Field name)
        {
            return field == static_cast<int>(name);
        }

        template <std::size_t N>
        int field_index(const std::array<std::string_view, N>& names, const std::string& key)
        {
            for (std::size_t i = 0; i < N; ++i)
            {
                if (names[i] == key)
                {
                    return static_cast<int>(i);
                }
            }
            return -1;
        }

        bool take(const scalar& v, std::string& out)
        {
            if (v.t != type::string)
            {
                return false;
            }
            out = *v.s;  // a copy, not a move: the parser then keeps its token buffer for the next string
            return true;
        }

        bool take(const scalar& v, short_text& out)
        {
            if (v.t != type::string)
            {
                return false;
            }
            out = short_text(*v.s);
            return true;
        }

        bool take(const scalar& v, shared_text& out)
        {
            if (v.t != type::string)
            {
                return false;
            }
            out = shared_text(*v.s);  // equal to a recent one: shares its copy
            return true;
        }

        bool take(const scalar& v, bool& out)
        {
            if (v.t != type::boolean)
            {
                return false;
            }
            out = v.b;
            return true;
        }

        // "number": any number token, as get<double> converts it
        bool take(const scalar& v, double& out)
        {
            switch (v.t)
            {
                case type::integer: out = static_cast<double>(v.i); return true;
                case type::unsigned_integer: out = static_cast<double>(v.u); return true;
                case type::floating: out = v.d; return true;
                default: return false;
            }
        }

        // "integer": integer tokens only (2.0 is left to the schema), cast as get<> casts
        template <class Int>
        bool take_integer(const scalar& v, Int& out)
        {
            switch (v.t)
            {
                case type::integer: out = static_cast<Int>(v.i); return true;
                case type::unsigned_integer: out = static_cast<Int>(v.u); return true;
                default: return false;
            }
        }
        bool take(const scalar& v, int& out) { return take_integer(v, out); }
        bool take(const scalar& v, std::int64_t& out) { return take_integer(v, out); }

        // The ranges the report schema gives a block_dim and a load's times: a value outside them
        // is left to the checked way, which refuses it by its path (a block_dim of 2^63 never
        // becomes an int, nor a build of -1e308 ms a figure).
        constexpr double most_block_dim = 1048576.0;
        constexpr double most_ms = 1e12;

        bool in_range(const scalar& v, double most)
        {
            const double x = v.t == type::integer            ? static_cast<double>(v.i)
                             : v.t == type::unsigned_integer ? static_cast<double>(v.u)
                             : v.t == type::floating         ? v.d
                                                             : 0.0;
            return v.t == type::null || (x >= 0.0 && x <= most);
        }

        // a nullable field: null, or the value's own type
        template <class T>
        bool take(const scalar& v, std::optional<T>& out)
        {
            if (v.t == type::null)
            {
                out.reset();
                return true;
            }
            T value{};
            if (!take(v, value))
            {
                return false;
            }
            out = std::move(value);
            return true;
        }

        json as_json(const scalar& v)
        {
            switch (v.t)
            {
                case type::boolean: return json(v.b);
                case type::integer: return json(static_cast<json::number_integer_t>(v.i));
                case type::unsigned_integer: return json(static_cast<json::number_unsigned_t>(v.u));
                case type::floating: return json(static_cast<json::number_float_t>(v.d));
                case type::string: return json(*v.s);
                default: return json(nullptr);
            }
        }
    }

    shared_text name_pool::get(const std::string& name)
    {
        // a module's loads and launches often come one after another: the last name first
        if (m_has_last && m_slots[m_last].text.str() == name)
        {
            return m_slots[m_last].text;
        }
        if (name.empty())
        {
            return shared_text();
        }
        if (2 * (m_used + 1) > m_slots.size())
        {
            grow();
        }
        const std::size_t hash = std::hash<std::string_view>{}(name);
        const std::size_t mask = m_slots.size() - 1;
        std::size_t i = hash & mask;
        while (!m_slots[i].text.empty())
        {
            if (m_slots[i].hash == hash && m_slots[i].text.str() == name)
            {
                m_last = i;
                m_has_last = true;
                return m_slots[i].text;
            }
            i = (i + 1) & mask;
        }
        m_slots[i] = {hash, shared_text(name)};
        ++m_used;
        m_last = i;
        m_has_last = true;
        return m_slots[i].text;
    }

    void name_pool::grow()
    {
        std::vector<slot> old;
        old.swap(m_slots);
        m_slots.resize(old.empty() ? 64 : 2 * old.size());
        const std::size_t mask = m_slots.size() - 1;
        for (auto& s : old)
        {
            if (!s.text.empty())
            {
                std::size_t i = s.hash & mask;
                while (!m_slots[i].text.empty())
                {
                    i = (i + 1) & mask;
                }
                m_slots[i] = std::move(s);
            }
        }
        m_has_last = false;  // its slot moved
    }

    record_events::record_events(record_kind kind, name_pool* names) : m_kind(kind), m_names(names) {}

    void record_events::restart(record_kind kind)
    {
        m_kind = kind;
        m_started = false;
        m_frames.clear();
        m_load = module_load();
        m_launch = launch_record();
        m_tree_target = nullptr;
        m_text_target = nullptr;
        m_tree.restart();
        m_function_key.clear();
        m_dtypes.clear();
        m_skip_depth = 0;
    }

    bool record_events::null()
    {
        scalar v;
        return value(v);
    }

    bool record_events::boolean(bool b)
    {
        scalar v;
        v.t = type::boolean;
        v.b = b;
        return value(v);
    }

    bool record_events::integer(std::int64_t i)
    {
        scalar v;
        v.t = type::integer;
        v.i = i;
        return value(v);
    }

    bool record_events::unsigned_integer(std::uint64_t u)
    {
        scalar v;
        v.t = type::unsigned_integer;
        v.u = u;
        return value(v);
    }

    bool record_events::floating(double d)
    {
        scalar v;
        v.t = type::floating;
        v.d = d;
        return value(v);
    }

    bool record_events::string(std::string& s)
    {
        scalar v;
        v.t = type::string;
        v.s = &s;
        return value(v);
    }

    bool record_events::key(std::string& k)
    {
        frame& f = m_frames.back();
        switch (f.kind)
        {
            case frame_kind::tree: return m_tree.key(k);
            case frame_kind::skip: return true;
            case frame_kind::load: return first_time(f, field_index(load_fields, k), k);
            case frame_kind::launch: return first_time(f, field_index(launch_fields, k), k);
            case frame_kind::snapshot: return first_time(f, field_index(snapshot_fields, k), k);
            case frame_kind::kernel: return first_time(f, field_index(kernel_fields, k), k);
            case frame_kind::lto: return first_time(f, field_index(lto_fields, k), k);
            case frame_kind::phase: return first_time(f, field_index(phase_fields, k), k);
            case frame_kind::functions:
                m_function_key = k;  // copied, as take() copies
                return !m_load.snapshot->functions.count(k);
            default: return false;
        }
    }

    // A key met for the first time in its object: a known field by its bit, one this parser skips
    // (a later version's) by its name. A repeat gives up: the checked way reads the record and
    // refuses it with where it is. This tool never writes one.
    bool record_events::first_time(frame& f, int field, const std::string& k)
    {
        f.field = field;
        if (field < 0)
        {
            if (std::find(f.skipped.begin(), f.skipped.end(), k) != f.skipped.end())
            {
                return false;
            }
            f.skipped.push_back(k);
            return true;
        }
        if ((f.seen >> field) & 1u)
        {
            return false;
        }
        f.seen |= std::uint64_t{1} << field;
        return true;
    }

    bool record_events::value(const scalar& v)
    {
        if (m_frames.empty())
        {
            return false;  // a record is an object
        }
        frame& f = m_frames.back();
        switch (f.kind)
        {
            case frame_kind::tree: m_tree.value(as_json(v)); return true;
            case frame_kind::skip: return true;
            case frame_kind::load: return f.field < 0 || set_load(f.field, v);
            case frame_kind::launch: return f.field < 0 || set_launch(f.field, v);
            case frame_kind::snapshot: return f.field < 0 || set_snapshot(f.field, v);
            case frame_kind::kernel: return f.field < 0 || set_kernel(f.field, v);
            case frame_kind::lto: return f.field < 0 || set_lto(f.field, v);
            case frame_kind::phase: return f.field < 0 || set_phase(f.field, v);
            case frame_kind::functions:
            {
                std::string hash;
                if (!take(v, hash))
                {
                    return false;
                }
                m_load.snapshot->functions[m_function_key] = std::move(hash);
                return true;
            }
            case frame_kind::dtype_list:
            {
                std::string dtype;
                if (!take(v, dtype))
                {
                    return false;
                }
                m_dtypes.push_back(std::move(dtype));
                return true;
            }
            default: return false;  // a scalar where the schema has an object
        }
    }

    bool record_events::take_module(const scalar& v, shared_text& out)
    {
        if (!m_names || v.t != type::string)
        {
            return take(v, out);
        }
        out = m_names->get(*v.s);
        return true;
    }

    bool record_events::set_load(int field, const scalar& v)
    {
        module_load& l = m_load;
        switch (static_cast<load_field>(field))
        {
            case load_field::module: return take_module(v, l.module);
            case load_field::hash: return take(v, l.hash);
            case load_field::device: return take(v, l.device);
            case load_field::block_dim: return in_range(v, most_block_dim) && take(v, l.block_dim);
            case load_field::status:
            {
                if (v.t != type::string)
                {
                    return false;
                }
                for (const load_status s : {load_status::compiled, load_status::cached, load_status::error, load_status::unknown})
                {
                    if (*v.s == to_string(s))
                    {
                        l.status = s;
                        return true;
                    }
                }
                return false;  // the schema's enum
            }
            case load_field::warp_ms: return in_range(v, most_ms) && take(v, l.warp_ms);
            case load_field::total_ms: return in_range(v, most_ms) && take(v, l.total_ms);
            case load_field::native_ms: return in_range(v, most_ms) && take(v, l.native_ms);
            case load_field::native_kind: return take(v, l.native_kind);
            case load_field::codegen_ms: return in_range(v, most_ms) && take(v, l.codegen_ms);
            case load_field::source_bytes: return take(v, l.source_bytes);
            case load_field::output_suffix: return take(v, l.output_suffix);
            case load_field::ltoir_inputs: return take(v, l.ltoir_inputs);
            case load_field::thread: return take(v, l.thread);
            case load_field::pid: return take(v, l.pid);
            case load_field::t_start_ms: return take(v, l.t_start_ms);
            case load_field::seq: return take(v, l.seq);
            case load_field::source:
                if (const auto s = v.t == type::string ? member_named<figure_source>(*v.s) : std::nullopt;
                    s == figure_source::hook || s == figure_source::log)
                {
                    l.source = *s;
                    return true;
                }
                return false;  // the schema's enum
            case load_field::error: return take(v, l.error);
            case load_field::snapshot:
                if (v.t != type::null)
                {
                    return false;
                }
                l.snapshot.reset();
                return true;
            case load_field::via_preload: return take(v, l.via_preload);
            case load_field::first_in_thread: return take(v, l.first_in_thread);
            case load_field::pch_ms: return in_range(v, most_ms) && take(v, l.pch_ms);
            case load_field::cpu_ms: return in_range(v, most_ms) && take(v, l.cpu_ms);
            case load_field::cpu_wait_ms: return in_range(v, most_ms) && take(v, l.cpu_wait_ms);
            case load_field::instructions: return take(v, l.instructions);
            case load_field::triggered_by: return take(v, l.triggered_by);
            case load_field::test: return take(v, l.test);
            default: return false;  // lto, config_mismatch, phases: not scalars
        }
    }

    bool record_events::set_launch(int field, const scalar& v)
    {
        launch_record& l = m_launch;
        switch (static_cast<launch_field>(field))
        {
            case launch_field::kernel: return take(v, l.kernel);
            case launch_field::module: return take_module(v, l.module);
            case launch_field::dim:
                if (v.t != type::null && v.t != type::integer && v.t != type::unsigned_integer)
                {
                    return false;
                }
                l.dim = json_text(as_json(v));
                return true;
            case launch_field::device: return take(v, l.device);
            case launch_field::block_dim: return in_range(v, most_block_dim) && take(v, l.block_dim);
            case launch_field::adjoint: return take(v, l.adjoint);
            case launch_field::count:
                // minimum 1
                if ((v.t == type::integer && v.i < 1) || (v.t == type::unsigned_integer && v.u < 1))
                {
                    return false;
                }
                return take(v, l.count);
            case launch_field::pid: return take(v, l.pid);
            default: return false;  // dtypes: not a scalar
        }
    }

    bool record_events::set_snapshot(int field, const scalar& v)
    {
        return static_cast<snapshot_field>(field) == snapshot_field::options_source && take(v, m_load.snapshot->options_source);
    }

    bool record_events::set_kernel(int field, const scalar& v)
    {
        kernel_entry& k = m_load.snapshot->kernels.back();
        switch (static_cast<kernel_field>(field))
        {
            case kernel_field::key: return take(v, k.key);
            case kernel_field::hash: return take(v, k.hash);
            case kernel_field::sig: return take(v, k.sig);
            case kernel_field::generic: return take(v, k.generic);
            case kernel_field::types: k.types = as_json(v); return true;  // any JSON
            case kernel_field::enable_backward: return take(v, k.enable_backward);
            case kernel_field::qualname: return take(v, k.qualname);
            case kernel_field::defined_in: return take(v, k.defined_in);
            case kernel_field::factory: k.factory = as_json(v); return true;  // null, or the object below
            default: return false;
        }
    }

    bool record_events::set_lto(int field, const scalar& v)
    {
        lto_artifact& a = m_load.lto.back();
        switch (static_cast<lto_field>(field))
        {
            case lto_field::symbol: return take(v, a.symbol);
            case lto_field::built: return take(v, a.built);
            case lto_field::ms: return take(v, a.ms);
            default: return false;
        }
    }

    bool record_events::set_phase(int field, const scalar& v)
    {
        phase_span& p = m_load.phases.back();
        switch (static_cast<phase_field>(field))
        {
            case phase_field::name: return take(v, p.name) && phase_kind(p.name).has_value();  // the schema's enum
            case phase_field::start_ms: return take(v, p.start_ms);
            case phase_field::ms: return take(v, p.ms);
            default: return false;
        }
    }

    bool record_events::start_object() { return open(true); }
    bool record_events::start_array() { return open(false); }

    // Where an object or array may open: the record itself, an element of a list of objects,
    // or a field whose schema type is an object or an array.
    bool record_events::open(bool object)
    {
        if (m_frames.empty())
        {
            if (m_started || !object)
            {
                return false;
            }
            m_started = true;
            m_frames.push_back({m_kind == record_kind::module_load ? frame_kind::load : frame_kind::launch});
            return true;
        }
        frame& f = m_frames.back();
        switch (f.kind)
        {
            case frame_kind::tree: m_tree.open(object ? json::value_t::object : json::value_t::array); return true;
            case frame_kind::skip: ++m_skip_depth; return true;
            case frame_kind::kernel_list:
                if (!object)
                {
                    return false;
                }
                m_load.snapshot->kernels.emplace_back();
                m_frames.push_back({frame_kind::kernel});
                return true;
            case frame_kind::lto_list:
                if (!object)
                {
                    return false;
                }
                m_load.lto.emplace_back();
                m_frames.push_back({frame_kind::lto});
                return true;
            case frame_kind::phase_list:
                if (!object)
                {
                    return false;
                }
                m_load.phases.emplace_back();
                m_frames.push_back({frame_kind::phase});
                return true;
            default: break;
        }
        const bool object_frame = f.kind == frame_kind::load || f.kind == frame_kind::launch || f.kind == frame_kind::snapshot
                                  || f.kind == frame_kind::kernel || f.kind == frame_kind::lto || f.kind == frame_kind::phase;
        if (!object_frame)
        {
            return false;  // a dtype or a function hash that is not a string
        }
        if (f.field < 0)
        {
            m_frames.push_back({frame_kind::skip});  // an unknown field: the check ignores it too
            m_skip_depth = 1;
            return true;
        }
        const int field = f.field;
        // A field seen twice keeps its last value, as in the tree: each list or object starts empty.
        switch (f.kind)
        {
            case frame_kind::load:
                if (is(field, load_field::lto) && !object)
                {
                    m_load.lto.clear();
                    m_frames.push_back({frame_kind::lto_list});
                    return true;
                }
                if (is(field, load_field::phases) && !object)
                {
                    m_load.phases.clear();
                    m_frames.push_back({frame_kind::phase_list});
                    return true;
                }
                if (is(field, load_field::snapshot) && object)
                {
                    m_load.snapshot.emplace();
                    m_frames.push_back({frame_kind::snapshot});
                    return true;
                }
                if (is(field, load_field::config_mismatch) && object)
                {
                    start_text_tree(&m_load.config_mismatch, true);
                    return true;
                }
                return false;
            case frame_kind::launch:
                if (is(field, launch_field::dim) && !object)
                {
                    start_text_tree(&m_launch.dim, false);
                    return true;
                }
                if (is(field, launch_field::dtypes) && !object)
                {
                    m_dtypes.clear();
                    m_launch.dtypes = {};
                    m_frames.push_back({frame_kind::dtype_list});
                    return true;
                }
                return false;
            case frame_kind::snapshot:
                if (is(field, snapshot_field::kernels) && !object)
                {
                    m_load.snapshot->kernels.clear();
                    m_frames.push_back({frame_kind::kernel_list});
                    return true;
                }
                if (is(field, snapshot_field::functions) && object)
                {
                    m_load.snapshot->functions.clear();
                    m_frames.push_back({frame_kind::functions});
                    return true;
                }
                if (is(field, snapshot_field::options) && object)
                {
                    start_tree(nullptr, true);  // the options: shared when equal (shared_options)
                    return true;
                }
                return false;
            case frame_kind::kernel:
                if (is(field, kernel_field::types))
                {
                    start_tree(&m_load.snapshot->kernels.back().types, object);
                    return true;
                }
                if (is(field, kernel_field::factory) && object)
                {
                    start_tree(&m_load.snapshot->kernels.back().factory, object);
                    return true;
                }
                return false;
            default: return false;
        }
    }

    bool record_events::end()
    {
        if (m_frames.empty())
        {
            return false;
        }
        switch (m_frames.back().kind)
        {
            case frame_kind::tree:
                m_tree.close();
                if (m_tree.complete())
                {
                    if (m_tree_target)
                    {
                        *m_tree_target = std::move(m_tree.root);
                    }
                    else if (m_text_target)
                    {
                        *m_text_target = json_text(m_tree.root);
                    }
                    else
                    {
                        m_load.snapshot->options = shared_options(std::move(m_tree.root));
                    }
                    m_frames.pop_back();
                }
                return true;
            case frame_kind::skip:
                if (--m_skip_depth == 0)
                {
                    m_frames.pop_back();
                }
                return true;
            case frame_kind::dtype_list:
                m_launch.dtypes = shared_text_list(std::move(m_dtypes));
                m_dtypes.clear();
                m_frames.pop_back();
                return true;
            default: m_frames.pop_back(); return true;
        }
    }

    void record_events::start_text_tree(json_text* into, bool object)
    {
        start_tree(nullptr, object);
        m_text_target = into;
    }

    void record_events::start_tree(json* into, bool object)
    {
        m_tree_target = into;
        m_text_target = nullptr;
        m_tree.restart();
        m_tree.open(object ? json::value_t::object : json::value_t::array);
        m_frames.push_back({frame_kind::tree});
    }

    void json_tree_builder::restart()
    {
        root = json();
        m_open.clear();
        m_member = nullptr;
    }

    void json_tree_builder::value(json v)
    {
        if (m_open.empty())
        {
            root = std::move(v);
        }
        else if (m_open.back()->is_array())
        {
            m_open.back()->push_back(std::move(v));
        }
        else
        {
            *m_member = std::move(v);
        }
    }

    void json_tree_builder::open(json::value_t type)
    {
        json* added = nullptr;
        if (m_open.empty())
        {
            root = json(type);
            added = &root;
        }
        else if (m_open.back()->is_array())
        {
            m_open.back()->push_back(json(type));
            added = &m_open.back()->back();
        }
        else
        {
            *m_member = json(type);
            added = m_member;
        }
        m_open.push_back(added);
    }

    bool json_tree_builder::key(const std::string& k)
    {
        if (m_open.back()->contains(k))
        {
            return false;  // a repeated key: which value counts is not JSON's to say
        }
        m_member = &(*m_open.back())[k];
        return true;
    }

    void json_tree_builder::close()
    {
        m_open.pop_back();
    }
}
