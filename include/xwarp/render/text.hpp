// Plain-text rendering of a report (the CLI's output and the notebook's text/plain twin).
// Renderers only format what analysis put in the model; they compute no figure.
#ifndef XWARP_RENDER_TEXT_HPP
#define XWARP_RENDER_TEXT_HPP

#include <iosfwd>
#include <string>

#include "xwarp/model/comparison.hpp"
#include "xwarp/model/format.hpp"
#include "xwarp/model/report.hpp"

namespace xwarp
{
    std::string render_text(const report& r);
    // The same, written to `out` a few lines at a time (warp-probe report --format text).
    void render_text(std::ostream& out, const report& r);
    std::string render_compare_text(const comparison& c);

    // warp-probe whatif: the replays and the declined ledger.
    std::string render_whatif_text(const report& r);

    // warp-probe fix: each patch (the diff, then its verdict), and the table of fixes.
    std::string render_fix_text(const report& r);

    // "-1.23 s cold module work, improved (n=3, band 25 ms)": a finding's measured lever.
    std::string measured_words(const replay_measurement& measured);

    // A finding's headline: "saves ~1.2 s" (the estimate), "measured -1.0 s ..., improved (n=2,
    // band 20 ms); estimate ~1.2 s", or "measured +290 ms ..., regressed (n=2); no saving
    // credited (the estimate was ~291 ms)"; "" without either (finding::headline decides).
    std::string finding_headline_words(const finding& f);
    // What the cold module CPU clock is and how far the machine's load moved it in this run.
    std::string cpu_moved_words(const summary::clock_under_load& c);
    std::string cpu_clock_words(const summary& s);

    // What replaying a report would run, to ask before running it (a report is data): its
    // command, folder, Python and notebook code, one per line, escaped.
    std::string what_a_replay_runs(const report& saved);

    // Formatting shared with the HTML renderer.
    std::string format_stat_ms(const stat& s);   // "3.52 s ± 0.05 s" or "n/a"
    std::string command_line(const std::vector<std::string>& argv);
}

#endif
