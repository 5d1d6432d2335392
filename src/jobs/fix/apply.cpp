#include "apply.hpp"

#include <algorithm>
#include <filesystem>

#include "helper_tools.hpp"
#include "xwarp/analysis/fix_verdicts.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/engine/os/tempdir.hpp"

namespace xwarp::fix_parts
{
    namespace fs = std::filesystem;

    const fix_plan* plan_of(const std::vector<fix_plan>& plans, const fix_result& f)
    {
        for (const auto& p : plans)
        {
            if (p.finding_name() == f.finding)
            {
                return &p;
            }
        }
        return nullptr;
    }

    std::map<std::string, std::string> patched_files(const std::vector<fix_result>& results, const std::string& root)
    {
        std::map<std::string, std::string> files;
        for (const auto& f : results)
        {
            for (const auto& rel : f.files)
            {
                const std::string path = (fs::path(root) / rel).string();
                files.emplace(path, read_file(path));
            }
        }
        return files;
    }

    std::string changed_since(const std::map<std::string, std::string>& files)
    {
        for (const auto& [path, text] : files)
        {
            std::error_code ec;
            if (!fs::is_regular_file(path, ec) || read_file(path) != text)
            {
                return path;
            }
        }
        return {};
    }

    void apply_verified(std::vector<fix_result>& results, const std::vector<fix_plan>& plans,
                        const std::function<std::string(const std::vector<const fix_plan*>&, std::string& why)>& combine,
                        const std::string& root, const cancel_check& cancelled, std::vector<std::string>& notes)
    {
        std::vector<const fix_plan*> chosen;
        for (const auto& f : results)
        {
            const fix_plan* p = plan_of(plans, f);
            if (p && applies(f))
            {
                chosen.push_back(p);
            }
        }
        if (chosen.empty())
        {
            notes.push_back("--apply: no verified patch, so nothing was applied");
            return;
        }
        std::string why;
        const std::string patch = combine(chosen, why);
        scoped_temp_dir tmp("xwarp-apply-");
        write_file(tmp.path() + "/verified.patch", patch);
        if (patch.empty() || !run_tool("git", {"apply", "--check", tmp.path() + "/verified.patch"}, root, cancelled).ok
            || !run_tool("git", {"apply", tmp.path() + "/verified.patch"}, root, cancelled).ok)
        {
            notes.push_back("--apply: the verified patches did not apply to " + root + " as they are now"
                            + (why.empty() ? std::string() : " (" + why + ")") + ": nothing was changed");
            return;
        }
        for (auto& f : results)
        {
            const fix_plan* p = plan_of(plans, f);
            f.applied = p && std::find(chosen.begin(), chosen.end(), p) != chosen.end();
        }
        notes.push_back("--apply: " + std::to_string(chosen.size()) + " verified patch(es) applied to " + root);
    }

    void write_patches(std::vector<fix_result>& results, const std::vector<fix_plan>& plans, const std::string& dir)
    {
        if (dir.empty())
        {
            return;
        }
        std::error_code ec;
        fs::create_directories(dir, ec);
        if (ec && !fs::is_directory(dir))
        {
            throw fix_write_error("cannot write the patches into " + dir + ": " + ec.message());
        }
        for (auto& f : results)
        {
            const fix_plan* p = plan_of(plans, f);
            if (f.patch.empty() || !p)
            {
                continue;
            }
            f.patch_file = (fs::path(dir) / (p->id + ".patch")).string();
            try
            {
                // beside the target, renamed over it: a symlink planted at the name is replaced
                save_streamed(f.patch_file, [&](std::ostream& out) { out << f.patch; });
            }
            catch (const std::exception& e)
            {
                throw fix_write_error(e.what());
            }
        }
    }
}
