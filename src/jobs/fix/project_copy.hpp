// The copies warp-probe fix --verify patches and measures: the project copied without touching
// the user's repository, and the measured command pointed into the copy.
#ifndef XWARP_FIX_PROJECT_COPY_HPP
#define XWARP_FIX_PROJECT_COPY_HPP

#include <string>

#include "xwarp/model/run_request.hpp"

namespace xwarp::fix_parts
{
    // A copy of the project at `dest`. A git work tree: a clone that shares the repository's
    // objects (nothing is written into the user's repository), at its HEAD, with the work tree's
    // changes and its untracked files; otherwise the folder copied without caches and
    // environments. Throws fix_error.
    void copy_project(const std::string& root, const std::string& dest, const cancel_check& cancelled);

    // The measured command, run in the copy: every word that is a path into the project (the
    // script, the folder, PYTHONPATH's entries) as the same path in the copy.
    measure_options in_copy(measure_options options, const std::string& root, const std::string& copy);
}

#endif
