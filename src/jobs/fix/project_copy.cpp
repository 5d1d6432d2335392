#include "project_copy.hpp"

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "helper_tools.hpp"
#include "xwarp/jobs/fix/fix.hpp"

namespace xwarp
{
    namespace fs = std::filesystem;

    std::string project_root(const std::string& folder)
    {
        const std::string dir = folder.empty() ? fs::current_path().string() : folder;
        const fix_parts::tool_run git = fix_parts::run_tool("git", {"-C", dir, "rev-parse", "--show-toplevel"}, dir, {}, 30.0);
        const std::string top = fix_parts::trimmed(git.out);
        std::error_code ec;
        return git.ok && !top.empty() ? fs::weakly_canonical(top, ec).string() : fs::weakly_canonical(dir, ec).string();
    }

}

namespace xwarp::fix_parts
{
    namespace fs = std::filesystem;

    namespace
    {
        bool skipped_in_copy(const fs::path& p)
        {
            const std::string name = p.filename().string();
            std::error_code ec;
            return name == "__pycache__" || name == ".pytest_cache" || name == ".mypy_cache" || name == ".git" || name == ".tox"
                   || name == ".nox" || (fs::is_directory(p, ec) && fs::exists(p / "pyvenv.cfg", ec));
        }

        void copy_tree(const fs::path& from, const fs::path& to)
        {
            fs::create_directories(to);
            for (const auto& e : fs::directory_iterator(from))
            {
                if (skipped_in_copy(e.path()) || e.is_symlink())
                {
                    continue;
                }
                if (e.is_directory())
                {
                    copy_tree(e.path(), to / e.path().filename());
                }
                else if (e.is_regular_file())
                {
                    fs::copy_file(e.path(), to / e.path().filename(), fs::copy_options::overwrite_existing);
                }
            }
        }

        // A path into the project, as the same path in the copy when the copy has it (a
        // virtual environment inside the project is not copied: it stays where it is).
        std::string mapped(const std::string& word, const std::string& cwd, const std::string& root, const std::string& copy)
        {
            if (word.empty() || word[0] == '-')
            {
                return word;
            }
            std::error_code ec;
            const fs::path p = fs::path(word).is_absolute() ? fs::path(word) : fs::path(cwd) / word;
            if (!fs::exists(p, ec))
            {
                return word;
            }
            const fs::path abs = fs::weakly_canonical(p, ec);
            const fs::path rel = abs.lexically_relative(root);
            if (rel.empty() || *rel.begin() == "..")
            {
                return word;
            }
            const fs::path there = fs::path(copy) / rel;
            return fs::exists(there, ec) ? there.string() : abs.string();
        }

    }

    void copy_project(const std::string& root, const std::string& dest, const cancel_check& cancelled)
    {
        const tool_run head = run_tool("git", {"-C", root, "rev-parse", "--verify", "HEAD"}, root, cancelled, 30.0);
        const tool_run clone = head.ok ? run_tool("git", {"clone", "--quiet", "--shared", "--no-checkout", root, dest}, root, cancelled)
                                       : tool_run{};
        if (!head.ok || !clone.ok)
        {
            fs::remove_all(dest);
            copy_tree(root, dest);
            return;
        }
        if (!run_tool("git", {"-C", dest, "checkout", "--quiet", "--detach", trimmed(head.out)}, dest, cancelled).ok)
        {
            throw fix_error("could not check out " + trimmed(head.out) + " in the copy of " + root);
        }
        const tool_run changes = run_tool("git", {"-C", root, "diff", "--binary", "HEAD"}, root, cancelled);
        if (changes.ok && !changes.out.empty())
        {
            write_file(dest + "/.xwarp-worktree.diff", changes.out);
            const bool applied = run_tool("git", {"-C", dest, "apply", "--binary", ".xwarp-worktree.diff"}, dest, cancelled).ok;
            fs::remove(dest + "/.xwarp-worktree.diff");
            if (!applied)
            {
                throw fix_error("the work tree's changes to " + root + " did not apply to its copy");
            }
        }
        const tool_run untracked = run_tool("git", {"-C", root, "ls-files", "--others", "--exclude-standard", "-z"}, root, cancelled);
        std::istringstream names(untracked.out);
        std::string name;
        while (std::getline(names, name, '\0'))
        {
            if (!name.empty() && !skipped_in_copy(fs::path(root) / name))
            {
                fs::create_directories((fs::path(dest) / name).parent_path());
                fs::copy_file(fs::path(root) / name, fs::path(dest) / name, fs::copy_options::overwrite_existing);
            }
        }
    }

    measure_options in_copy(measure_options options, const std::string& root, const std::string& copy)
    {
        const std::string cwd = options.cwd.empty() ? fs::current_path().string() : options.cwd;
        for (std::size_t i = 0; i < options.command.size(); ++i)
        {
            // the word after python's -m is a module name and after -c a program, never a path,
            // even where a folder of that name is beside it (cd src; python -m particle_prep)
            const bool not_a_path = i > 0 && (options.command[i - 1] == "-m" || options.command[i - 1] == "-c");
            if (!not_a_path)
            {
                options.command[i] = mapped(options.command[i], cwd, root, copy);
            }
        }
        if (!options.python.empty())
        {
            options.python = mapped(options.python, cwd, root, copy);
        }
        std::string pythonpath = options.extra_env.count("PYTHONPATH") ? options.extra_env["PYTHONPATH"]
                                                                        : (std::getenv("PYTHONPATH") ? std::getenv("PYTHONPATH") : "");
        std::string out;
        std::istringstream parts(pythonpath);
        std::string part;
        while (std::getline(parts, part, ':'))
        {
            out += (out.empty() ? "" : ":") + mapped(part, cwd, root, copy);
        }
        if (!pythonpath.empty())
        {
            options.extra_env["PYTHONPATH"] = out;
        }
        options.cwd = mapped(cwd, cwd, root, copy);  // --keep-records stays: a copy records as its variant
        return options;
    }
}
