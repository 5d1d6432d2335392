// Reading one record of a report (a module load or a launch run) straight from the JSON
// parser's events into the model, without a JSON tree in between (private to the model).
//
// The reader streams a report's records (json_io.cpp). Building each record's tree,
// checking its types against the schema and converting it through nlohmann's macros was half
// the time of `warp-probe report` on a 10,000-identity report; a record this tool wrote needs
// none of it. This parser accepts only what the checked way would accept and convert the same:
// each field of the schema's type (integers as integer tokens, numbers as any number, the
// enums' values, a launch count of at least 1), unknown fields skipped as the check ignores
// them. Anything else makes it give up, and the caller reads the report again the checked way,
// which decides and names the field. A unit test holds the two to the same result on every
// record of a real run with each value retyped.
#ifndef XWARP_PROBE_MODEL_RECORD_EVENTS_HPP
#define XWARP_PROBE_MODEL_RECORD_EVENTS_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "xwarp/model/json_io.hpp"
#include "xwarp/model/report.hpp"

namespace xwarp::detail
{
    // Builds a JSON tree from the parser's events (the part of nlohmann's DOM parser the
    // reader needs): the report's skeleton, a record read the checked way, a field held as JSON.
    class json_tree_builder
    {
    public:
        nlohmann::json root;

        void value(nlohmann::json v);
        void open(nlohmann::json::value_t type);
        bool key(const std::string& k);  // false: the object already has that key
        void close();
        bool complete() const { return m_open.empty(); }  // after the outermost close
        void restart();  // for a new tree, keeping what the last one allocated for its nesting

    private:
        std::vector<nlohmann::json*> m_open;
        nlohmann::json* m_member = nullptr;
    };

    // The module names read from one report, each held once: a module's loads and launches, and
    // the warm pass's launches again, name it record after record, and a name past the
    // small-string limit was a copy in each.
    class name_pool
    {
    public:
        shared_text get(const std::string& name);

    private:
        // Open addressing, linear probing, at most half full. A report of 100,000 identities
        // names 50,000 modules: a node-based table's lookup chased a bucket, the node before,
        // the node and then the text, each a cache miss, and was a tenth of compare's time there
        // against a twentieth at 10,000. A slot holds the name's hash beside it, so a lookup
        // reads the slot and, on the hash's match, the one text it returns.
        struct slot
        {
            std::size_t hash = 0;
            shared_text text;  // empty: a free slot (the empty name is not pooled)
        };
        void grow();

        std::vector<slot> m_slots;
        std::size_t m_used = 0;
        std::size_t m_last = 0;  // the slot of the name returned last, when m_has_last
        bool m_has_last = false;
    };

    class record_events
    {
    public:
        struct scalar;  // one value event

        // names: where module names are shared from (none: each record holds its own)
        explicit record_events(record_kind kind, name_pool* names = nullptr);

        // For the next record, of the given kind: as newly made, but what this parser
        // allocated for its nesting is kept (made anew for every record, that was two or three
        // allocations a record, freed at once).
        void restart(record_kind kind);

        // The parser's events from the record's opening brace to its closing one. Each
        // returns false when the record is not one this parser converts (it gave up).
        bool null();
        bool boolean(bool v);
        bool integer(std::int64_t v);
        bool unsigned_integer(std::uint64_t v);
        bool floating(double v);
        bool string(std::string& v);
        bool start_object();
        bool start_array();
        bool end();  // of an object or an array
        bool key(std::string& k);

        module_load& load() { return m_load; }
        launch_record& launch() { return m_launch; }

    private:
        enum class frame_kind
        {
            load,
            launch,
            snapshot,
            kernel,
            lto,
            phase,
            functions,
            kernel_list,
            lto_list,
            phase_list,
            dtype_list,
            tree,  // a field held as JSON (options, config_mismatch, types, dim)
            skip,  // an unknown field's object or array
        };
        struct frame
        {
            frame(frame_kind k) : kind(k) {}  // NOLINT: {frame_kind::x} names a new frame
            frame_kind kind;
            int field = -1;  // objects: the member whose value comes next (-1: unknown)
            std::uint64_t seen = 0;             // objects: the known fields met so far, a bit each
            std::vector<std::string> skipped;  // objects: the unknown keys met so far (rare)
        };
        bool first_time(frame& f, int field, const std::string& k);
        bool value(const scalar& v);
        bool open(bool object);
        bool set_load(int field, const scalar& v);
        bool take_module(const scalar& v, shared_text& out);  // from the pool when there is one
        bool set_launch(int field, const scalar& v);
        bool set_snapshot(int field, const scalar& v);
        bool set_kernel(int field, const scalar& v);
        bool set_lto(int field, const scalar& v);
        bool set_phase(int field, const scalar& v);
        void start_tree(nlohmann::json* into, bool object);
        void start_text_tree(json_text* into, bool object);  // the tree kept as its compact text

        record_kind m_kind;
        name_pool* m_names;
        bool m_started = false;  // the record's object opened (a second one is refused)
        std::vector<frame> m_frames;
        module_load m_load;
        launch_record m_launch;

        // a field held as JSON, built as it arrives
        nlohmann::json* m_tree_target = nullptr;  // null: m_text_target's, or else the snapshot's options
        json_text* m_text_target = nullptr;       // a field held as compact JSON text (config_mismatch, dim)
        json_tree_builder m_tree;
        std::string m_function_key;  // snapshot.functions: the key whose hash comes next
        std::vector<shared_text> m_dtypes;  // a launch's types, until their list closes
        int m_skip_depth = 0;
    };
}

#endif
