// Reading the process table from /proc: a process's parent, state and start time, its
// children, one variable of its environment. Private to the os layer.
#ifndef XWARP_OS_PROC_TABLE_HPP
#define XWARP_OS_PROC_TABLE_HPP

#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace xwarp::proc
{
    // /proc/<pid>/stat: the parent (field 4), the state (3) and the start time in clock ticks
    // since boot (22). A pid and its start time name one process: a pid can be reused.
    struct stat_line
    {
        pid_t ppid = 0;
        char state = '?';
        unsigned long long start = 0;
    };
    std::optional<stat_line> stat_of(pid_t pid);

    std::vector<pid_t> all_pids();

    // A process's children, from /proc/<pid>/task/<tid>/children (every thread's), or from a
    // scan of /proc where the kernel does not offer those files.
    std::vector<pid_t> direct_children(pid_t pid);

    // The value of one variable in a process's environment (empty when absent or unreadable:
    // another user's process, or a zombie).
    std::string environ_value(pid_t pid, const std::string& name);

    // "1234 (sleep)": a process as a report names one it could not kill.
    std::string describe(pid_t pid);

    // SIGKILL to each of `pids` still alive (not a zombie) and not yet killed; what could not
    // be signalled (another user's process) goes to `refused` once. Returns how many were sent.
    struct kill_tally
    {
        std::vector<pid_t> killed;
        std::vector<pid_t> refused;
    };
    void kill_alive(const std::vector<pid_t>& pids, kill_tally& tally);
}

#endif
