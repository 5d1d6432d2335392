// Text for the history commands (warp-probe history ..., %warp_history). Every string that
// came from a report (module names, commands, labels) is printed through one_line().
#ifndef XWARP_RENDER_HISTORY_TEXT_HPP
#define XWARP_RENDER_HISTORY_TEXT_HPP

#include <string>
#include <vector>

#include <utility>

#include "xwarp/model/history.hpp"
#include "xwarp/model/report.hpp"

namespace xwarp
{
    std::string render_history_list(const std::vector<history_run>& runs, const std::string& store);
    // The same list as an HTML table (for %warp_history).
    std::string render_history_list_html(const std::vector<history_run>& runs, const std::string& store);
    std::string render_history_run(const history_run& run, const std::vector<history_identity>& rows);
    // At most `modules` modules (heaviest latest first); 0 shows all.
    std::string render_trend(const history_trend& t, std::size_t modules = 20);
    std::string render_history_diff(const history_diff& d);
    std::string render_machine_table(const machine_table& t);
    // %warp_history --session: a kernel's runs by name, oldest first, with their top finding.
    std::string render_session_runs(const std::vector<std::pair<std::string, report>>& runs);
    std::string render_session_runs_html(const std::vector<std::pair<std::string, report>>& runs);
    // One line per step: "step at run @17 (3rd of 5): identities 1 -> 2; commit 1a2b -> 3c4d".
    std::string step_line(const trend_step& s);
}

#endif
