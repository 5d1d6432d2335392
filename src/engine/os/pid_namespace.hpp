// The measured command in a PID namespace of its own, where the kernel lets this process make
// one (as root: CAP_SYS_ADMIN; as another user: inside a user namespace that maps the user to
// itself, where unprivileged user namespaces are allowed). When the namespace's first process ends, the kernel kills every
// other process in it: a daemon that left the run's session, emptied its environment and moved
// itself out of the run's cgroup (all possible as root) still dies with the run. The cgroup and
// the recorded process tree stay as the fallbacks (run_containment.hpp). Private to the os layer.
//
// The shape, between fork and exec of the command (so the probe's own later children are never
// in it): the forked child unshares, then forks the namespace's init, which mounts a /proc of
// the namespace (so the command's os.getpid() names its own /proc entry) and forks the
// command's parent, which forks the command: the command is pid 3 with parent 2, never a child
// of pid 1 (a program that exits when its parent is init would take itself for an orphan). The
// parent ends as the command did; the init reaps orphans and hands that status to the child
// outside, which ends the same way (same exit code, same signal), so the probe sees the
// command's own status.
#ifndef XWARP_OS_PID_NAMESPACE_HPP
#define XWARP_OS_PID_NAMESPACE_HPP

namespace xwarp::proc
{
    // Whether to try: not with $XWARP_PIDNS=off (then the cgroup, or the recorded tree, contain).
    bool pid_namespace_wanted();

    // In the child between fork and exec, async-signal-safe. Writes one byte to `said_fd`: 'n'
    // when the namespace was made, 'f' when not (the command then runs as before). Returns in
    // the process that goes on to exec the command; the two around it never return.
    void enter_own_pid_namespace(int said_fd) noexcept;
}

#endif
