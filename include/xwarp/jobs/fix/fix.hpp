// warp-probe fix: each finding's code form written as a patch against the program's own files
// (analysis/fixes.hpp plans it; runtime/fixer/xwarp_fix.py writes the diff), and with verify
// measured on a copy of the project, interleaved with the unpatched program, and judged as
// compare judges two reports. The user's files are touched only by apply, and then only with
// verified patches.
#ifndef XWARP_FIX_FIX_HPP
#define XWARP_FIX_FIX_HPP

#include <string>

#include "xwarp/model/report.hpp"
#include "xwarp/engine/runner/runner.hpp"
#include "xwarp/engine/runner/sampler.hpp"

namespace xwarp
{
    // What the use case adds to the user's fix_request (model/run_request.hpp): where the fixer
    // is, what it patches, and with which Python.
    struct fix_setup
    {
        std::string fixer;     // xwarp_fix.py (the installed one when empty)
        std::string root;      // the project to patch; "" finds it (the git work tree of the command's folder)
        // the Python that runs the fixer; "" takes the program's own (the report's --python, or its
        // command's python). A front sets python3 for a report from elsewhere: its paths are data.
        std::string fixer_python;
    };

    // Thrown before anything runs: a request that cannot be carried out (apply without
    // verify, a report without a command), or a fixer that cannot run.
    class fix_error : public std::runtime_error
    {
    public:
        using std::runtime_error::runtime_error;
    };

    // A patch that could not be written where --out asked (the filesystem's refusal, not a bad
    // request): exit 73, as every other output.
    class fix_write_error : public fix_error
    {
    public:
        using fix_error::fix_error;
    };

    // The saved report, analysed, with fixes[] filled. `rerun` re-runs its command as it was
    // measured (the use cases' rerun of it; the shim set). Interrupted: the report's status says so.
    // The samples come from make_sampler (the real commands, or --replay-streams' recordings).
    report fix_report(const report& saved, const measure_options& rerun, const fix_request& request, const fix_setup& setup,
                      run_observer* observer, const cancel_check& cancelled,
                      const sampler_factory& make_sampler = command_samplers());

    // The project a command belongs to: the git work tree holding its folder, else the folder.
    std::string project_root(const std::string& folder);
}

#endif
