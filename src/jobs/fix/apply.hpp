// fix --out and --apply: the patches written as files, and the verified ones applied to the
// program's own files, whole or not at all, and only to the bytes they were made from.
#ifndef XWARP_FIX_APPLY_HPP
#define XWARP_FIX_APPLY_HPP

#include <map>
#include <string>
#include <vector>

#include "xwarp/analysis/fixes.hpp"
#include "xwarp/jobs/fix/fix.hpp"

namespace xwarp::fix_parts
{
    // DIR/<id>.patch for each patch (renamed over the name: a symlink there is replaced).
    // Throws fix_write_error.
    void write_patches(std::vector<fix_result>& results, const std::vector<fix_plan>& plans, const std::string& dir);

    // The files the patches edit, as they are now (before verification), path -> bytes.
    std::map<std::string, std::string> patched_files(const std::vector<fix_result>& results, const std::string& root);

    // The first of those files whose bytes are no longer the ones the patches were made from.
    std::string changed_since(const std::map<std::string, std::string>& files);

    // The fixer's combined patch of the patches analysis::applies() takes, checked, then applied
    // into `root`; marks them applied. Says what it did in `notes`.
    void apply_verified(std::vector<fix_result>& results, const std::vector<fix_plan>& plans,
                        const std::function<std::string(const std::vector<const fix_plan*>&, std::string& why)>& combine,
                        const std::string& root, const cancel_check& cancelled, std::vector<std::string>& notes);

    // The plan a result was made from, or nullptr.
    const fix_plan* plan_of(const std::vector<fix_plan>& plans, const fix_result& f);
}

#endif
