// A notebook cell as a program: the %%warp_setup code and the cell written as a script, the
// command that runs it, and the report's places moved between the script and the notebook
// (<cell>, <%%warp_setup>). Used by every job that probes or re-runs a cell, whichever front
// asked.
#ifndef XWARP_FRONTS_CELL_SCRIPT_HPP
#define XWARP_FRONTS_CELL_SCRIPT_HPP

#include <string>
#include <utility>

#include "xwarp/model/report.hpp"
#include "xwarp/model/run_request.hpp"

namespace xwarp::fronts
{
    // The setup code, then the cell, as FOLDER/cell.py. Returns the script's path and how many
    // lines the setup code took (to point findings back at the cell). Throws job_error.
    std::pair<std::string, int> write_cell_script(const std::string& folder, const std::string& setup,
                                                  const std::string& cell);

    // The command that runs a cell script with `python`; a notebook imports from its own folder,
    // and so does the probed cell. The shim records the arrays the cell leaves (results=same).
    measure_options cell_command(const std::string& script, const std::string& python, const std::string& folder);

    // Findings point into the temporary script: point them at the notebook instead.
    void relabel_cell_locations(report& r, const std::string& script, int setup_lines);
    // The other way: a stored cell run's places pointed back into a script of the cell.
    void unrelabel_cell_locations(report& r, const std::string& script, int setup_lines);
}

#endif
