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

    // What held a command's processes so that none outlived it.
    enum class held_by
    {
        pid_namespace,  // all die with the command (the cgroup or the tree is kept too)
        cgroup,
        process_tree,   // the recorded tree
    };

    struct process_outcome
    {
        double wall_ms = 0.0;
        std::optional<int> exit_code;
        std::optional<int> term_signal;
        bool timed_out = false;
        bool interrupted = false;
        std::string spawn_error;
        int strays_killed = 0;  // descendants left running (any session) that were killed after it
        std::vector<std::string> strays_left;  // "1234 (sleep)": ones it was not permitted to kill
        held_by containment = held_by::process_tree;
    };

    // Starts the child as the leader of a new process group (Boost.Process group), waits for
    // it, and on timeout or cancel kills the group with SIGKILL. When the child exits on its
    // own, whatever it left running in its group is killed too: a probe run leaves nothing
    // behind. `tick` is called about every 100 ms with the elapsed time.
    //
    // Descendants that left the group (setsid, start_new_session, an emptied environment) are
    // found too. Where this user may make one, the command starts in a cgroup of the run's own
    // that no descendant can leave; every process of the run carries a token in its
    // environment ($XWARP_PROBE_TOKEN); and while the run lasts this process is a child
    // subreaper, so orphans are adopted here rather than by init, and every process of its
    // subtree that started with the command or later is the command's. After the child ends,
    // timed out or was interrupted, all of them are killed and the adopted ones reaped; the
    // ones it may not kill are named in strays_left. The child dies with this process
    // (PR_SET_PDEATHSIG); the cgroup, or else a record of the tree (pid and start time)
    // rewritten as it changes, is named in a directory under $TMPDIR, and the token names this
    // process, so that a later run can kill what a probe killed with -9 left
    // (clean_after_dead_probes). $XWARP_CGROUP=off makes no cgroup. Where the kernel allows
    // (as root), the command also runs in a PID namespace of its own, whose processes all die
    // when the command ends (pid_namespace.hpp); $XWARP_PIDNS=off runs it without one.
    process_outcome run_process(const process_spec& spec,
                                std::optional<double> timeout_s,
                                const cancel_check& cancelled,
                                const std::function<void(double)>& tick);

    // PATH lookup for a command name: the first executable regular file of that name. When
    // there is none but a non-executable file of that name was found, `not_executable` holds
    // its path (the shell says 126 for it, 127 when nothing was found).
    std::string find_executable(const std::string& name, const std::string& path_env, std::string* not_executable = nullptr);

    // For a file starting with "#!": the interpreter it names when that does not exist or is
    // not executable (the shell says 127: "bad interpreter"), else empty.
    std::string missing_interpreter(const std::string& path);

    // Kills the processes that probes no longer alive left running (their token names a dead
    // probe), and removes the temporary directories such probes left (scoped_temp_dir records
    // its owner). Returns what it removed, for a note. Never touches a live probe's work.
    struct cleanup_result
    {
        int processes_killed = 0;
        int dirs_removed = 0;
    };
    cleanup_result clean_after_dead_probes();

    // "<pid>.<start time>" of this process: who owns a token or a temporary directory.
    std::string owner_id();

    // True when the process of an owner_id() is gone (or its pid was reused).
    bool owner_gone(const std::string& owner);
}

#endif
