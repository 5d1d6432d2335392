// Reading and writing the report model as JSON.
#ifndef XWARP_MODEL_JSON_IO_HPP
#define XWARP_MODEL_JSON_IO_HPP

#include <functional>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "xwarp/model/report.hpp"

namespace xwarp
{
    // A report that cannot be read: missing file, not JSON, another schema version, wrong
    // shape. what() is one line meant for the user.
    class report_error : public std::runtime_error
    {
    public:
        enum class kind
        {
            missing,
            not_json,
            schema_version,
            shape
        };

        report_error(kind k, const std::string& message) : std::runtime_error(message), m_kind(k) {}
        kind which() const noexcept { return m_kind; }

    private:
        kind m_kind;
    };

    // What a report may be at most: the size is checked before reading, the nesting while
    // reading (report_error either way). Reading holds about seven times the file's size
    // (compare holds two), so the bound keeps the worst read near 2 GiB of memory; the tool's
    // largest honest reports (1000 samples of a suite) are a few tens of MiB.
    inline constexpr std::size_t max_report_bytes = std::size_t{256} << 20;  // 256 MiB
    inline constexpr int max_json_depth = 128;

    // Checks every field a report holds against the type the schema gives it
    // (contracts/report.schema.json, through valijson): a retyped field is named by its
    // JSON path ("at /samples/0/cold/wall_ms: ..."). Fields may be missing (older reports);
    // what is there must have its type. Throws report_error.
    void check_report_types(const nlohmann::json& j);

    // The same check for one record the reader streams (a module load or a launch run), named
    // by its path in the report ("/samples/0/cold/module_loads/7").
    enum class record_kind
    {
        module_load,
        launch
    };
    void check_record_types(const nlohmann::json& record, record_kind kind, const std::string& at);

    // The two halves of check_record_types, apart for the test that the first never accepts
    // what the second refuses: a quick pass over the types (no allocation), then, for a record
    // it does not accept, valijson against the schema (which decides, and names the field).
    bool record_types_pass_quickly(const nlohmann::json& record, record_kind kind);
    void check_record_types_by_schema(const nlohmann::json& record, record_kind kind, const std::string& at);

    nlohmann::json report_to_json(const report& r);

    // A pass's conditions as the report (and a recorded pass's meta file) writes them.
    void to_json(nlohmann::json& j, const machine_load& l);
    void from_json(const nlohmann::json& j, machine_load& l);
    void to_json(nlohmann::json& j, const cache_state& c);
    void from_json(const nlohmann::json& j, cache_state& c);

    // A replay's measurement as a report's JSON writes it (a declined lever keeps it as its numbers).
    nlohmann::json measurement_json(const replay_measurement& m);

    // report_to_json(r).dump(indent) (compact by default; invalid UTF-8 replaced), without
    // building the whole tree: the large arrays (the samples' module loads and launches, the
    // summary's identities and timeline, the findings) are converted and written one element at
    // a time. A 10,000-identity report's tree takes ~190 MB; this keeps one record's.
    std::string report_json_text(const report& r, int indent = -1);

    // The same text written to `out` a block at a time, never held whole (report --format json).
    void write_report_json(std::ostream& out, const report& r, int indent = -1);

    // A copy of the summary without its per-identity and per-module tables (identities, rebuilt
    // groups, module totals, launches per kernel, timeline spans): every other field, as the
    // report's JSON has them.
    summary summary_without_tables(const summary& s);

    // Writes report_json_text(r, 2) and a newline atomically, as save_json writes a tree; the
    // text is streamed to the file, never held whole.
    void save_report_json(const std::string& path, const report& r);

    // Throws report_error (never a raw nlohmann exception).
    report report_from_json(const nlohmann::json& j);
    report report_from_text(const std::string& text);

    // How the reader converts a report's records (module loads and launch runs). direct:
    // straight from the parser's events, giving up on a record not as this tool writes it
    // (a retyped field, a value outside an enum); checked: each record's tree is checked
    // against the schema, which names a wrong field, then converted. report_from_text and
    // load_report read directly and read again checked when that gave up. This overload is for
    // the test that both ways agree: nullopt when `how` is direct and it gave up.
    enum class record_reading
    {
        direct,
        checked
    };
    std::optional<report> report_from_text(const std::string& text, record_reading how);
    report load_report(const std::string& path);

    // Writes atomically (temp file + rename) so an interrupted write never leaves half a report.
    void save_json(const std::string& path, const nlohmann::json& j);

    // Why `path` is no place to write an output, "" when it is: a name that is a symbolic link, a
    // device, a FIFO, a socket or a folder, a file of another user, or a folder that is not there.
    std::string output_path_refused(const std::string& path);

    // Writes what `write` writes to a new file beside `path` and renames it over `path`: a reader
    // never sees it half written. When the write fails or throws, the file beside is removed
    // and `path` is left as it was (the exception goes on). A path output_path_refused refuses
    // is not written (std::system_error naming why).
    void save_streamed(const std::string& path, const std::function<void(std::ostream&)>& write);
}

#endif
