// What the warp magics share: showing text, parsing a magic's line, finding a run by what the
// user calls it, the probed cell as a script, live progress, and running a probe and showing
// its report. Each magic is one file beside this one, listed once in magics.cpp.
#ifndef XWARP_MAGICS_COMMON_HPP
#define XWARP_MAGICS_COMMON_HPP

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "xwarp/fronts/options/front_options.hpp"
#include "xwarp/jobs/usecases/use_cases.hpp"
#include "xwarp/fronts/magics/magics.hpp"
#include "xwarp/model/run_request.hpp"
#include "xwarp/render/view.hpp"

namespace xwarp::magic_parts
{
    // Plain text, shown as text and as an escaped <pre> (view_bundle of a text_view).
    nlohmann::json text_bundle(const std::string& text);

    // Parses a magic's line; --help shows the usage as the magic's output and returns false.
    bool parse_line(CLI::App& app, const std::string& line, magic_host& host);

    // A run by what the user calls it: a run of this session by name, a stored run (@17), the
    // newest stored run with that label (names outlive a kernel restart that way), or a JSON
    // report path. `who` prefixes the error.
    fronts::resolved_run resolve_run(const probe_session& session, const std::string& what, const std::string& who);

    // A run whose command a magic is about to run: the user's own (measured here), or --run
    // given; a magic_error showing what it would run otherwise (a report is data).
    void require_run(const fronts::resolved_run& run, bool run_flag, const std::string& who);
    // Adds --run to a magic that runs a run's command again.
    void add_run_flag(CLI::App& app, bool& target);

    // What a job needs from the notebook: its history, shim, Python and folder, progress and
    // the interrupt.
    fronts::job_context job_context_of(const probe_session& session, magic_host& host, run_observer* observer,
                                       bool consented);

    // Live progress, updated in place under one display id; after each sample but the last,
    // the findings so far, marked provisional, in one display the final report replaces.
    class progress_display : public run_observer
    {
    public:
        progress_display(magic_host& host, bool quiet);
        void pass_started(int sample, int samples, const std::string& phase) override;
        void pass_running(int sample, int samples, const std::string& phase, double elapsed_ms) override;
        void pass_finished(int sample, int samples, const std::string& phase, const run_result& pass) override;
        void sample_finished(int sample, int samples, const report& so_far) override;
        void finish(const std::string& text);
        // Where the final report goes: over the provisional one when there was one.
        std::pair<std::string, bool> report_display() const;

    private:
        void publish(const std::string& text);

        magic_host& m_host;
        bool m_quiet;
        bool m_shown = false;
        std::string m_id;
        std::string m_provisional_id;
        bool m_provisional_shown = false;
        std::chrono::steady_clock::time_point m_last{};
    };

    // A report job's end in a notebook (%warp_fix, %warp_whatif): the progress line finished with
    // what was done (`done`), where it was stored and the job's notes, and the report shown as
    // HTML, as `text` and as the report's JSON.
    void show_report_outcome(std::string done, const fronts::job_outcome& outcome, report_words text,
                             const std::string& guide_text, magic_host& host, progress_display& progress);

    // The options of the probe magics: the shared probe options and the notebook's own.
    struct probe_magic_options
    {
        probe_request request;
        std::string name;
        std::string compare_with;
        std::string json_path;
        std::string variable;
        bool quiet = false;
        std::string expect;                // a budget (the CI gate's grammar) the run should meet
        bool strict = false;               // an expectation not met is an error reply
        bool allow_fail = false;           // a program that failed in every sample still replies ok
        // A lesson's exercise, judged as shipped (share/xwarp/exercises.json): its limits, and its
        // broken form as the run compared with (the student's exercise_broken only when it is that
        // code), whatever --expect or an edited broken cell say.
        std::string exercise;
    };
    void add_probe_magic_options(CLI::App& app, probe_magic_options& o);

    // Runs a probe (fronts::probe: o.request's command, or its cell), keeps it in the session,
    // and shows the report, the expectation and a comparison when asked.
    void run_and_show(const probe_magic_options& o, probe_session& session, magic_host& host);

    // "interrupted" shown, then the interrupted reply.
    [[noreturn]] void interrupted(progress_display& progress);

    // A job a magic runs (fix, replay, warm-up): its refusal as the magic's error, an interrupt
    // as the interrupted reply, else its outcome.
    template <typename Job>
    auto run_job(const std::string& who, progress_display& progress, Job&& job) -> decltype(job())
    {
        try
        {
            auto outcome = job();
            if (outcome.interrupted)
            {
                interrupted(progress);
            }
            return outcome;
        }
        catch (const fronts::job_error& e)
        {
            throw magic_error(who + ": " + e.what());
        }
    }

    // A run's name: the one asked for, or probe-N.
    std::string run_name(probe_session& s, const std::string& requested);
}

#endif
