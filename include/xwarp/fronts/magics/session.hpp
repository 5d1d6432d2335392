// What the magics of one notebook share: its setup cell, its runs by name, and the settings the
// kernel started them with. One per notebook; the magics hold it, the kernel makes it.
#ifndef XWARP_MAGICS_SESSION_HPP
#define XWARP_MAGICS_SESSION_HPP

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "xwarp/model/report.hpp"

namespace xwarp
{
    struct probe_session
    {
        std::string setup_code;
        std::vector<std::pair<std::string, report>> named_runs;  // name -> report, in run order
        int probes_started = 0;  // names an unnamed run: probe-N
        std::string shim_dir;    // empty: found like the CLI finds it
        std::string guide_text;  // references/mechanisms.md, for the HTML guide sections
        std::string exercises_text;  // share/xwarp/exercises.json: the lessons' exercises as shipped (--exercise)
        // The history store, as --history takes it: "" finds it as the CLI does
        // ($XWARP_HISTORY, then $XDG_DATA_HOME), "off" keeps runs in this session only.
        std::string history_option;

        // Names of runs %warp_report showed from a file or the history: kept for %warp_compare,
        // never taken for a run made here (a report is data, not a command this user ran).
        std::set<std::string> shown;

        const report* find(const std::string& name) const;
        void store(const std::string& name, const report& r);  // a run measured here
        bool measured_here(const std::string& name) const { return find(name) && !shown.count(name); }
    };

}

#endif
