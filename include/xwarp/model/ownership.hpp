// Whose code each file a report names is, decided once per run where the run happened (the
// engine reads the measured Python's import path, the installed distributions' RECORD files and
// the project's markers) and kept in the report, so that every part that asks (a finding's
// owner and recommendation, fix's targets, the warm-up's plan) asks the same table, also when
// the report is read again elsewhere.
#ifndef XWARP_MODEL_OWNERSHIP_HPP
#define XWARP_MODEL_OWNERSHIP_HPP

#include <map>
#include <string>
#include <vector>

#include "xwarp/model/verdicts.hpp"

namespace xwarp
{
    struct file_owner
    {
        owner_kind kind = owner_kind::elsewhere;
        std::string distribution;  // installed, warp: the distribution's name ("" when no RECORD named it)
        std::string version;
        // What decided: the RECORD that lists the file, the project root and why it is one, the
        // folder of the standard library or of Warp, or where it was looked for.
        std::string evidence;

        // Not the user's to edit: an installed distribution, the Python installation or Warp.
        bool library() const
        {
            return kind == owner_kind::installed || kind == owner_kind::stdlib || kind == owner_kind::warp;
        }
        bool operator==(const file_owner& o) const
        {
            return kind == o.kind && distribution == o.distribution && version == o.version && evidence == o.evidence;
        }
    };

    // A folder whose files are the user's, and why it is one.
    struct project_root
    {
        std::string path;
        std::string why;  // "pyproject.toml above the command's entry", ".git (version control) above the current directory", ...
    };

    struct ownership
    {
        // The user's project: the command's entry's tree first, then the current directory's and
        // the editable installs' trees.
        std::vector<project_root> project;
        // The folders of the measured Python's import path the distributions were looked for in.
        std::vector<std::string> import_path;
        // Every file the report names (locations, the entry, the kernels' modules) -> its owner.
        std::map<std::string, file_owner> files;
        // The Python modules that defined loaded kernels -> their files (owners are in files).
        std::map<std::string, std::string> modules;

        const file_owner* of(const std::string& file) const
        {
            const auto at = files.find(file);
            return at == files.end() ? nullptr : &at->second;
        }
        const file_owner* of_module(const std::string& module) const
        {
            const auto at = modules.find(module);
            return at == modules.end() ? nullptr : of(at->second);
        }
    };

    // Warp's own Python modules: the package warp and everything in it, its tests and examples
    // too (never the program's code, whatever folder holds them).
    bool warps_own_module(const std::string& module);

    // The owner in a few words, for a sentence: "your project (/home/me/proj: pyproject.toml)",
    // "the installed package warp-lang 1.19.0", "Python's standard library", "Warp itself",
    // "not in an installed package and not in this project".
    std::string owner_phrase(const file_owner& owner);
}

#endif
