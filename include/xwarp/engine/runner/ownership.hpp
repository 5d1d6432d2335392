// Whose code each file a run names is, decided once per run on the machine it ran on: from the
// measured Python's own import path (the shim's entry record), the RECORD of every installed
// distribution found there, Warp's and the standard library's folders, and the project the
// command's entry belongs to.
#ifndef XWARP_RUNNER_OWNERSHIP_HPP
#define XWARP_RUNNER_OWNERSHIP_HPP

#include <optional>

#include "xwarp/model/report.hpp"

namespace xwarp
{
    // The owners of the files the report's first good sample (else its first sample that ran
    // Python) names: locations, the entry, the launch sites, the factories and the kernels'
    // modules. Reads the files where they are now; nullopt when no sample ran Python.
    //
    // In this order, the first that holds decides: a relative name or a cell is the project's;
    // a file in Warp's package folder is Warp's; one an installed distribution's RECORD (or an
    // egg's installed-files.txt) lists is that distribution's; one in the standard library's
    // folders (not its site-packages) is the standard library's; one in a folder of installed
    // packages that no RECORD lists is installed, distribution unknown; one under a project
    // root is the project's; anything else is elsewhere.
    //
    // The project's roots: the entry's tree (the nearest folder above the script, or above the
    // package -m ran, holding pyproject.toml, setup.cfg, setup.py or a version-control folder;
    // else the script's own folder) unless the entry is itself installed (pytest, a console
    // script), the current directory's tree, and every editable install's source folder
    // (direct_url.json, *.egg-link, the paths an __editable__ or easy-install .pth adds).
    std::optional<ownership> find_owners(const report& r);
}

#endif
