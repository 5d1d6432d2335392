// What the parts of warp-probe fix share: whole files read and written, and short helper
// commands (git, the fixer) run with their output kept.
#ifndef XWARP_FIX_HELPER_TOOLS_HPP
#define XWARP_FIX_HELPER_TOOLS_HPP

#include <string>
#include <vector>

#include "xwarp/model/run_request.hpp"

namespace xwarp::fix_parts
{
    std::string read_file(const std::string& path);
    void write_file(const std::string& path, const std::string& text);  // throws fix_error

    struct tool_run
    {
        bool ok = false;
        std::string out;
        std::string err;
    };

    // A short helper command (git, the fixer), its output kept in a private folder.
    tool_run run_tool(const std::string& exe, const std::vector<std::string>& args, const std::string& cwd,
                      const cancel_check& cancelled, double timeout_s = 120.0);

    // Without its trailing newlines and spaces.
    std::string trimmed(std::string s);
}

#endif
