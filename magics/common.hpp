// What the warp magics share: showing text, parsing a magic's line, finding a run by what the
// user calls it, the probed cell as a script, live progress, and running a probe and showing
// its report. Each magic is one file beside this one, listed once in registry.cpp.
#ifndef XWARP_MAGICS_COMMON_HPP
#define XWARP_MAGICS_COMMON_HPP

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "xwarp/fronts/probe_options.hpp"
#include "xwarp/magics/magics.hpp"
#include "xwarp/os/tempdir.hpp"
#include "xwarp/runner/runner.hpp"

namespace xwarp::magic_parts
{
    // Plain text, shown as text and as an escaped <pre>.
    nlohmann::json text_bundle(const std::string& text);

    // Parses a magic's line; --help shows the usage as the magic's output and returns false.
    bool parse_line(CLI::App& app, const std::string& line, magic_host& host);

    // A run by what the user calls it: a run of this session by name, a stored run (@17), the
    // newest stored run with that label (names outlive a kernel restart that way), or a JSON
    // report path. `who` prefixes the error.
    report resolve_run(const probe_session& session, const std::string& what, const std::string& who);

    // The probed cell as a script: the %%warp_setup code, then the cell. Returns the script's
    // path and how many lines the setup code took (to point findings back at the cell).
    std::pair<std::string, int> write_cell_script(const scoped_temp_dir& tmp, const std::string& setup,
                                                  const std::string& cell);

    // Findings point into the temporary script: point them at the notebook instead.
    void relabel_cell_locations(report& r, const std::string& script, int setup_lines);
    // The other way: a stored cell run's places pointed back into a script of the cell.
    void unrelabel_cell_locations(report& r, const std::string& script, int setup_lines);

    // The command that runs a cell script with the kernel's Python; a notebook imports from its
    // own folder, and so does the probed cell.
    measure_options cell_command(const std::string& script, magic_host& host);

    // What re-runs a stored run: its cell (setup and cell code, written to a temporary script
    // again) or its command, in its folder, with its timeout.
    struct rerun
    {
        std::unique_ptr<scoped_temp_dir> tmp;
        measure_options options;
        std::string script;  // the cell's script, when it was a cell
        int setup_lines = 0;

        // Findings of the new samples point into the new script: point them at the notebook.
        void relabel(report& r) const;
    };
    rerun rerun_of(const report& found, const std::string& name, const probe_session& session, magic_host& host);

    // A run this notebook measured, by name, for a magic that runs its command again or hands
    // its files to the fixer; a magic_error for an unknown name or for a report %warp_report
    // showed (data from elsewhere, never a command this user ran here).
    const report& own_run(const probe_session& session, const std::string& name, const std::string& magic);

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

    // The options of the probe magics: the shared probe options and the notebook's own.
    struct probe_magic_options
    {
        probe_request request;
        std::string name;
        std::string compare_with;
        std::string json_path;
        std::string variable;
        bool quiet = false;
        std::vector<std::string> command;  // %warp_probe only
        std::string expect;                // a budget (the CI gate's grammar) the run should meet
        bool strict = false;               // an expectation not met is an error reply
        bool allow_fail = false;           // a program that failed in every sample still replies ok
    };
    void add_probe_magic_options(CLI::App& app, probe_magic_options& o);

    // Runs a probe (fronts::probe), stores it, and shows the report, the expectation and a
    // comparison when asked. finish_report adjusts the report before it is analysed and kept
    // (a cell's locations, its code).
    void run_and_show(measure_options mo, const probe_magic_options& o, probe_session& session, magic_host& host,
                      const std::function<void(report&)>& finish_report);

    // "interrupted" shown, then the interrupted reply.
    [[noreturn]] void interrupted(progress_display& progress);

    // A run's name: the one asked for, or probe-N.
    std::string run_name(probe_session& s, const std::string& requested);
}

#endif
