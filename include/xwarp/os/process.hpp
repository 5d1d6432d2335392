// Running one command in its own process group, with a timeout and a cancel check.
#ifndef XWARP_OS_PROCESS_HPP
#define XWARP_OS_PROCESS_HPP

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace xwarp
{
    // Polled while the child runs; returning true kills the child's whole process group.
    using cancel_check = std::function<bool()>;

    struct process_spec
    {
        std::string exe;  // absolute path
        std::vector<std::string> args;  // without argv[0]
        std::map<std::string, std::string> env;  // the complete environment
        std::string cwd;
        std::string stdout_path;
        std::string stderr_path;
    };

    struct process_outcome
    {
        double wall_ms = 0.0;
        std::optional<int> exit_code;
        std::optional<int> term_signal;
        bool timed_out = false;
        bool interrupted = false;
        std::string spawn_error;
    };

    // Starts the child as the leader of a new process group (Boost.Process group), waits for
    // it, and on timeout or cancel kills the group with SIGKILL. When the child exits on its
    // own, whatever it left running in its group is killed too: a probe run leaves nothing
    // behind. `tick` is called about every 100 ms with the elapsed time.
    process_outcome run_process(const process_spec& spec,
                                std::optional<double> timeout_s,
                                const cancel_check& cancelled,
                                const std::function<void(double)>& tick);

    // PATH lookup for a command name (Boost.Process search_path); empty when not found.
    std::string find_executable(const std::string& name, const std::string& path_env);
}

#endif
