// The history's use cases for the fronts: the store opened as a session, and each of the
// history subcommands' jobs (list, show, export, diff, trend, table, import) returning a model
// view the renderers print. The store and the trend analysis stay behind this header: a front
// that includes it sees the model's types only.
#ifndef XWARP_FRONTS_HISTORY_JOBS_HPP
#define XWARP_FRONTS_HISTORY_JOBS_HPP

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xwarp/model/history.hpp"
#include "xwarp/model/results.hpp"

namespace xwarp
{
    class run_store;
}

namespace xwarp::fronts
{
    // "@17" or "17" -> 17; nullopt for anything else.
    std::optional<std::int64_t> run_id_of(const std::string& text);

    // A trend of one series: the newest run that passes the filter names the series (its
    // machine and command); module and test narrow the rows shown ("" all).
    struct trend_request
    {
        std::string command;
        std::string machine;
        std::string label;
        std::string module;
        std::string test;
    };

    struct stored_run_view
    {
        history_run run;
        std::vector<history_identity> identities;
    };

    // One file given to import: its id, whether it was stored already, or why it was not read
    // (`error_exit` the exit code that failure calls for).
    struct imported_file
    {
        std::string file;
        std::optional<std::int64_t> id;
        bool already_stored = false;
        std::string error;
        int error_exit = 0;
    };

    // The store, opened for a front's history command. Every job throws job_error: usage (the
    // history is off, a malformed id), no_input (no store yet, no such run), bad_input (a store
    // or a stored report that cannot be read), cannot_write (no store can be had there).
    class history_session
    {
    public:
        // `create` for a writer (import): a store is made when there is none. What the store
        // said while opening (a damaged store moved aside) goes to `notes`.
        history_session(const std::string& history_option, bool create, std::vector<std::string>& notes);
        ~history_session();
        history_session(const history_session&) = delete;
        history_session& operator=(const history_session&) = delete;

        const std::string& path() const;
        std::vector<history_run> list(const history_filter& filter);
        stored_run_view show(const std::string& run_ref);
        // The stored run's report, as measure --json wrote it: valid JSON or job_error.
        std::string export_json(const std::string& run_ref);
        history_diff diff(const std::string& a_ref, const std::string& b_ref);
        history_trend trend(const trend_request& request);
        machine_table table(const trend_request& request);
        // Each file analysed and stored as "import"; one that cannot be read fails alone.
        std::vector<imported_file> import(const std::vector<std::string>& files);

    private:
        history_run newest_matching(const trend_request& request);
        history_run stored(const std::string& run_ref, std::int64_t& id);
        std::unique_ptr<run_store> m_store;
        std::vector<std::string>& m_notes;
    };
}

#endif
