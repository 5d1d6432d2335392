// The run store (what the user calls the history: --history, `warp-probe history`,
// %warp_history): every run the fronts make (measure, what-if, magic, compare, import) kept in
// one SQLite file, so that trends, steps and machines can be seen together.
//
// On by default at $XDG_DATA_HOME/xwarp/history.sqlite3 (~/.local/share/...); --history PATH
// or $XWARP_HISTORY choose another file, "off" disables it. WAL and a busy timeout let two
// probes and a kernel write at once. A corrupt file, or one written by a newer xwarp, is moved
// aside (the note says where) and a fresh store is started: the store never stops a
// measurement, and a report's own JSON is written whatever happens here.
#ifndef XWARP_STORE_RUN_STORE_HPP
#define XWARP_STORE_RUN_STORE_HPP

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "xwarp/model/history.hpp"
#include "xwarp/model/report.hpp"

namespace SQLite
{
    class Database;
}

namespace xwarp
{
    // 2: a suite's tests per run; 3: what each test built; 4: the digests of the reports this
    // probe wrote (a report is the user's own only when its bytes have one)
    inline constexpr int store_schema_version = 4;

    class store_error : public std::runtime_error
    {
    public:
        // unusable: no store can be had there (an unwritable folder); missing: none there to read
        // (no file, or a directory in its place); unreadable: a store this xwarp cannot read (a
        // newer xwarp's, or damaged), left as it is by a reader.
        enum class kind
        {
            unusable,
            missing,
            unreadable,
        };
        explicit store_error(const std::string& message, kind k = kind::unusable)
            : std::runtime_error(message), m_kind(k)
        {
        }
        kind which() const noexcept { return m_kind; }

    private:
        kind m_kind;
    };

    // A writer may create, migrate and move aside a store it cannot use (a corrupt or a newer
    // xwarp's file: moved aside, a new one started). A reader (history list, @ID, trends) never
    // moves one: it says why it cannot read it, and leaves it to the xwarp that can.
    enum class store_access
    {
        write,
        read,
    };

    struct store_location
    {
        std::string path;    // empty when off
        bool off = false;
        std::string origin;  // "--history", "XWARP_HISTORY", "XDG_DATA_HOME", "HOME"
    };

    // `option` is the front's --history value ("" when not given).
    store_location locate_store(const std::string& option);

    class run_store
    {
    public:
        // Opens the store at `path`, creating it (and its folder) or migrating it to the
        // current schema. A writer moves a corrupt or newer-schema file aside first (what
        // happened is appended to `notes`); a reader throws store_error (unreadable) and
        // leaves it. Throws store_error when no store can be had at that path (an unwritable
        // folder; for a reader, no file there).
        run_store(const std::string& path, std::vector<std::string>* notes, store_access access = store_access::write);
        ~run_store();
        run_store(const run_store&) = delete;
        run_store& operator=(const run_store&) = delete;

        const std::string& path() const { return path_; }

        // Stores an analysed report; a report already stored (same content) keeps its id.
        std::int64_t add_report(const report& r, run_kind kind);
        std::int64_t add_comparison(std::int64_t before_run, std::int64_t after_run, const std::string& verdict,
                                    const std::string& comparison_json);

        std::vector<history_run> runs(const history_filter& f);
        std::optional<history_run> run(std::int64_t id);
        std::vector<history_identity> identities(std::int64_t run_id);
        // A suite run's tests (test, builds, build_ms, reused_by): none for a program that is no
        // suite, or a run stored before per-test rows.
        std::vector<test_cost> tests(std::int64_t run_id);
        // The run's what-if replays, each with its saving on the clock it was judged on.
        std::vector<history_replay> replays(std::int64_t run_id);
        // A report file this probe wrote, by the SHA-256 of its bytes (and the path it was written
        // to, for the user): trust is content, whatever a report says its command was.
        void note_written(const std::string& sha256, const std::string& path);
        bool wrote(const std::string& sha256);
        // The kind a stored run was stored as (measure, magic: measured here; import, compare: not).
        std::optional<run_kind> kind_of(std::int64_t run_id);
        std::string report_json(std::int64_t run_id);  // throws store_error when there is none
        std::optional<std::int64_t> find(const report& r);
        std::vector<history_comparison> comparisons(int limit);

        // The runs of one series (machine, command), oldest first.
        std::vector<history_run> series(const std::string& machine, const std::string& command);
        // The newest run of `command` on each machine that ran it.
        std::vector<history_run> latest_per_machine(const std::string& command);

    private:
        void open_for_reading();
        void open_or_move_aside(std::vector<std::string>* notes);
        template <typename F>
        auto guarded(F&& f) -> decltype(f());
        std::string path_;
        std::unique_ptr<SQLite::Database> db_;
        std::vector<std::string>* notes_ = nullptr;
        bool reader_ = false;
    };

    // The fronts' one call after a run: store it when the store is on, never throw. Returns
    // the run's id, or nothing (with a note) when it could not be stored.
    std::optional<std::int64_t> remember_run(const store_location& where, const report& r, run_kind kind,
                                             std::vector<std::string>& notes);

    // The history a rendered report shows: its series, and where it stands in it. Nothing when
    // the store is off, missing or has no other run of the series.
    std::optional<run_series> series_for(const store_location& where, const report& r,
                                            std::vector<std::string>& notes);

    // "@17" -> 17; nothing for anything else.
    std::optional<std::int64_t> parse_stored_run_ref(const std::string& text);
}

#endif
