// The use cases every front offers, each owned here end to end: a run named any way a user names
// one (resolve), then one job per use case (probe, replay, fix, warm_up, compare_until_settled)
// that builds the command to re-run (a notebook cell's script included), checks that the user
// may run it, takes its samples (the real command, or --replay-streams' recordings), analyses,
// stores the run in the history and returns the outcome. The fronts (the CLI, the magics) keep
// parsing, consent, progress and display, and see no runner type: this header names the model's
// and its own only (the layers' include roots enforce it).
#ifndef XWARP_FRONTS_USE_CASES_HPP
#define XWARP_FRONTS_USE_CASES_HPP

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "xwarp/model/history.hpp"
#include "xwarp/model/comparison.hpp"
#include "xwarp/model/report.hpp"
#include "xwarp/model/run_request.hpp"
#include "xwarp/model/warmup.hpp"

namespace xwarp::fronts
{
    // Why a job could not be done, before or instead of running: the kind decides the CLI's exit
    // code (fronts/exit_codes.hpp) and the magics' error.
    class job_error : public std::runtime_error
    {
    public:
        enum class kind
        {
            usage,              // a request that cannot be carried out as asked
            no_input,           // a report, run or folder that is not there
            bad_input,          // a report that cannot be read
            cannot_write,       // an output that could not be written
            not_permitted,      // a report's command that is not the user's to run, without consent
            command_not_found,
            not_executable,
            software,           // a bug
        };
        job_error(kind k, const std::string& message) : std::runtime_error(message), m_kind(k) {}
        kind which() const noexcept { return m_kind; }

    private:
        kind m_kind;
    };

    // The runs a front holds by name (a notebook's session); the CLI has none.
    class run_source
    {
    public:
        virtual ~run_source() = default;
        virtual const report* find(const std::string& name) const = 0;
        // Measured by this user here (not a report shown from elsewhere).
        virtual bool measured_here(const std::string& name) const = 0;
    };

    // A run as the user named it, read, with whether the user may re-run its command unasked.
    struct resolved_run
    {
        report saved;
        std::string ref;           // as the user wrote it
        bool from_session = false;  // a run of the front's session
        bool ran_here = false;      // this user measured it on this machine (the session, or the history's trust)
        std::string why_not_here;   // when not
    };

    // A run by what the user calls it, looked for in this order: a run of the session by name,
    // a stored run ("@17"), a folder recorded with measure --keep-records, a report file, the
    // newest stored run with that label. Throws
    // job_error (no_input naming the places looked, bad_input for a report that cannot be read).
    resolved_run resolve(const std::string& ref, const std::string& history_option, const run_source* session = nullptr);

    // What every job runs with.
    struct job_context
    {
        std::string history_option;   // --history ("" finds it as documented; "off")
        std::string shim_dir;         // "" the installed shim
        std::string replay_streams;   // --replay-streams DIR: recorded passes served instead of runs
        bool consented = false;       // the user said to run a report's command that is not theirs (--run, a yes)
        run_observer* observer = nullptr;
        cancel_check cancelled;
        // A notebook cell re-run from a notebook: its kernel's Python and the notebook's folder;
        // "" takes the report's own.
        std::string notebook_python;
        std::string notebook_folder;
    };

    struct job_outcome
    {
        report result;
        bool interrupted = false;
        std::optional<std::int64_t> stored_id;  // in the history
        std::string stored_in;                  // the history's path
        std::vector<std::string> notes;         // the history's notes, for the front to show
        std::optional<run_series> history;    // the run's series, when the job was asked for it
    };

    // measure, %%warp_probe, %warp_probe: a command, or a notebook cell (cell_code set; the
    // command then runs it with context.notebook_python), measured as the request says (fixed
    // samples, until settled, with what-if replays), analysed, stored as `store_as` (none: not stored).
    struct probe_job
    {
        probe_request request;  // everything the front asked
        std::optional<run_kind> store_as;  // none: not stored
        bool with_history = false;  // the outcome carries the run's series (a report page's sparklines)
    };
    job_outcome probe(const probe_job& job, const job_context& context);

    // whatif, %warp_whatif: levers replayed on a run's command (a cell's included).
    job_outcome replay(const resolved_run& run, const replay_request& request, const job_context& context,
                       std::optional<run_kind> store_as);

    // fix, %warp_fix: each finding's code form as a patch; with verify, measured on copies.
    job_outcome fix(const resolved_run& run, const fix_request& request, const job_context& context,
                    std::optional<run_kind> store_as);

    // warmup, %warp_warmup: the warm-up file of a run, written where options.out says; with
    // verify, proved on fresh caches.
    struct warmup_outcome
    {
        warmup_plan plan;
        bool interrupted = false;
    };
    warmup_outcome warm_up(const resolved_run& run, const warmup_request& request, const job_context& context);

    // compare --until-settled, %warp_compare --until-settled: samples added to both sides,
    // before then after, until the verdict is settled or each side has max_samples; both sides,
    // grown, stored as `store_as` unless interrupted.
    struct compare_outcome
    {
        comparison result;
        report before;
        report after;
        std::optional<std::int64_t> before_id;
        std::optional<std::int64_t> after_id;
        bool interrupted = false;
        std::vector<std::string> notes;
    };
    compare_outcome compare_until_settled(const resolved_run& before, const resolved_run& after, int max_samples,
                                          const job_context& context, std::optional<run_kind> store_as);

    // report, %warp_report, check: a run's report as this xwarp reads it (analysed again: the
    // findings are this version's), with its series in the history when asked (the HTML page's
    // sparklines and step).
    struct shown_report
    {
        report analysed;
        std::optional<run_series> history;
        std::vector<std::string> notes;
    };
    shown_report show(resolved_run run, const std::string& history_option, bool with_history);

    // mechanisms, %warp_mechanisms: both registries, {mechanisms: [...], levers: [...]}, each
    // entry as `warp-probe mechanisms --json` prints it.
    nlohmann::json registries();

    // The history's file as --history (or its default) names it; "" when it is off.
    std::string history_path(const std::string& history_option);

    // A report analysed and stored as `kind` (compare's sides, a report shown): its id, or none.
    std::optional<std::int64_t> store(const report& r, run_kind kind, const std::string& history_option,
                                      std::vector<std::string>& notes);

    // history list, %warp_history: the stored runs that pass the filter, newest first, and the
    // store's path. nullopt when there is no store to read (off, or not made yet: `why` says).
    struct stored_runs
    {
        std::string path;
        std::vector<history_run> runs;
    };
    std::optional<stored_runs> history_runs(const std::string& history_option, const history_filter& filter,
                                            std::string& why, std::vector<std::string>& notes);
}

#endif
