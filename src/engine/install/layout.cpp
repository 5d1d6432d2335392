// The install layout: data files found beside the executable, by environment, or in the build.
#include "xwarp/engine/install/layout.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "xwarp/engine/os/bounded_read.hpp"

namespace fs = std::filesystem;

namespace xwarp
{
    namespace
    {
        std::string self_exe_dir()
        {
            std::error_code ec;
            auto p = fs::read_symlink("/proc/self/exe", ec);
            return ec ? std::string() : p.parent_path().string();
        }
    }

    namespace
    {
        // The shim folder: $XWARP_SHIM_DIR first when `from_environment`, then the install.
        std::string find_shim_dir(bool from_environment)
        {
            std::vector<std::string> candidates;
            if (const char* env = std::getenv("XWARP_SHIM_DIR"); from_environment && env && *env)
            {
                candidates.emplace_back(env);
            }
            auto exe_dir = self_exe_dir();
            if (!exe_dir.empty())
            {
                candidates.push_back(exe_dir + "/../share/xwarp/shim");  // installed: <prefix>/bin
                candidates.push_back(exe_dir + "/share/xwarp/shim");     // the build tree
                // a wheel auditwheel gave libraries to: bin/warp-probe is its launcher, and the binary
                // runs from <prefix>/lib/pythonX.Y/site-packages/xwarp.scripts/
                if (fs::path(exe_dir).filename() == "xwarp.scripts")
                {
                    candidates.push_back(exe_dir + "/../../../../share/xwarp/shim");
                }
            }
#ifdef XWARP_BUILD_SHIM_DIR
            candidates.emplace_back(XWARP_BUILD_SHIM_DIR);
#endif
            for (const auto& c : candidates)
            {
                std::error_code ec;
                if (fs::exists(c + "/sitecustomize.py", ec) && fs::exists(c + "/xwarp_shim/__init__.py", ec))
                {
                    return fs::weakly_canonical(c, ec).string();
                }
            }
            return {};
        }
    }

    std::string default_shim_dir()
    {
        return find_shim_dir(true);
    }

    namespace
    {
        // A data file of the install (share/xwarp/... beside the installed shim), a regular file
        // of at most 4 MiB: empty when it is not there or is something else (a FIFO would hang the
        // kernel's start, /dev/zero fill its memory; a file changed by hand is read once, bounded).
        // Never through $XWARP_SHIM_DIR: the exercises judge a student's answer, and a kernelspec
        // the student owns could point that variable at a copy with easier limits.
        std::string installed_text(const fs::path& relative)
        {
            std::string shim = find_shim_dir(false);
            if (shim.empty())
            {
                return {};
            }
            const bounded_read read = read_regular_file((fs::path(shim).parent_path() / relative).string(), 4u << 20);
            return read.ok ? read.text : std::string();
        }
    }

    std::string installed_guide_text()
    {
        return installed_text(fs::path("references") / "mechanisms.md");
    }

    std::string installed_exercises_text()
    {
        return installed_text("exercises.json");
    }

}
