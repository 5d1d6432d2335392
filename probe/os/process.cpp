#include "xwarp/os/process.hpp"

#include <chrono>
#include <thread>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/algorithm/string/split.hpp>
#include <boost/process.hpp>

namespace bp = boost::process;

namespace xwarp
{
    namespace
    {
        using clock = std::chrono::steady_clock;

        double ms_since(clock::time_point t0)
        {
            return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
        }

        void kill_group(bp::group& group)
        {
            std::error_code ec;
            if (group.valid())
            {
                group.terminate(ec);  // killpg(SIGKILL); ESRCH when the group is already empty
            }
        }
    }

    process_outcome run_process(const process_spec& spec,
                                std::optional<double> timeout_s,
                                const cancel_check& cancelled,
                                const std::function<void(double)>& tick)
    {
        process_outcome out;
        bp::environment env;
        for (const auto& [name, value] : spec.env)
        {
            env[name] = value;
        }

        bp::group group;
        std::error_code ec;
        auto t0 = clock::now();
        bp::child child(bp::exe = spec.exe,
                        bp::args = spec.args,
                        env,
                        bp::start_dir = spec.cwd,
                        bp::std_in < bp::null,
                        bp::std_out > spec.stdout_path,
                        bp::std_err > spec.stderr_path,
                        group,
                        ec);
        if (ec)
        {
            out.spawn_error = ec.message();
            return out;
        }

        // Poll rather than block: the loop is what lets a timeout or an interrupt act.
        // 2 ms keeps the wall-time error far below anything Warp compiles in.
        double next_tick = 100.0;
        while (true)
        {
            std::error_code run_ec;
            if (!child.running(run_ec))
            {
                break;
            }
            double elapsed = ms_since(t0);
            if (timeout_s && elapsed >= *timeout_s * 1000.0)
            {
                out.timed_out = true;
                break;
            }
            if (cancelled && cancelled())
            {
                out.interrupted = true;
                break;
            }
            if (tick && elapsed >= next_tick)
            {
                tick(elapsed);
                next_tick = elapsed + 100.0;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        out.wall_ms = ms_since(t0);

        kill_group(group);
        if (out.timed_out || out.interrupted)
        {
            std::error_code wait_ec;
            child.wait(wait_ec);
            return out;
        }

        int status = child.native_exit_code();
        if (WIFEXITED(status))
        {
            out.exit_code = WEXITSTATUS(status);
        }
        else if (WIFSIGNALED(status))
        {
            out.term_signal = WTERMSIG(status);
        }
        return out;
    }

    std::string find_executable(const std::string& name, const std::string& path_env)
    {
        std::vector<boost::filesystem::path> dirs;
        std::vector<std::string> parts;
        boost::algorithm::split(parts, path_env, [](char c) { return c == ':'; });
        for (const auto& p : parts)
        {
            dirs.emplace_back(p.empty() ? "." : p);
        }
        auto found = bp::search_path(name, dirs);
        return found.empty() ? std::string() : found.string();
    }
}
