#include "helper_tools.hpp"

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

#include "xwarp/jobs/fix/fix.hpp"
#include "xwarp/engine/os/process.hpp"
#include "xwarp/engine/os/tempdir.hpp"

namespace xwarp::fix_parts
{
    namespace
    {
        std::map<std::string, std::string> current_environment()
        {
            std::map<std::string, std::string> env;
            for (char** e = environ; e && *e; ++e)
            {
                const std::string kv = *e;
                const auto eq = kv.find('=');
                if (eq != std::string::npos)
                {
                    env[kv.substr(0, eq)] = kv.substr(eq + 1);
                }
            }
            return env;
        }

    }

    std::string read_file(const std::string& path)
    {
        std::ifstream in(path, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        return text.str();
    }

    void write_file(const std::string& path, const std::string& text)
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << text;
        if (!out.flush())
        {
            throw fix_error("cannot write " + path);
        }
    }

    // A short helper command (git, the fixer), its output kept in a private folder.
    tool_run run_tool(const std::string& exe, const std::vector<std::string>& args, const std::string& cwd,
                      const cancel_check& cancelled, double timeout_s)
    {
        scoped_temp_dir tmp("xwarp-tool-");
        process_spec spec;
        spec.exe = exe.find('/') == std::string::npos ? find_executable(exe, std::getenv("PATH") ? std::getenv("PATH") : "") : exe;
        spec.args = args;
        spec.env = current_environment();
        spec.cwd = cwd;
        spec.stdout_path = tmp.path() + "/out";
        spec.stderr_path = tmp.path() + "/err";
        tool_run r;
        if (spec.exe.empty())
        {
            r.err = exe + ": not found";
            return r;
        }
        const process_outcome o = run_process(spec, timeout_s, cancelled, {});
        r.out = read_file(spec.stdout_path);
        r.err = read_file(spec.stderr_path);
        r.ok = o.exit_code && *o.exit_code == 0;
        if (!r.ok && r.err.empty())
        {
            r.err = o.spawn_error.empty() ? (o.timed_out ? "timed out" : "failed") : o.spawn_error;
        }
        return r;
    }

    std::string trimmed(std::string s)
    {
        while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' '))
        {
            s.pop_back();
        }
        return s;
    }
}
