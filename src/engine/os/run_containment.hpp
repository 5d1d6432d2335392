// Keeps one run's processes findable whatever they do (a new session, an emptied environment)
// and after the probe itself is killed with -9. Where this user may make one, a cgroup of the
// run's own (cgroup v2, else v1's pids hierarchy): the command enters it before it starts, and
// every descendant is born in it and cannot leave. Where none can be made, a record of the
// run's process tree (pid and start time: a pid alone may be reused), rewritten as it changes.
// Both are named in a directory under $TMPDIR (xwarp-run-*) that a later probe finds when this
// one is gone. Private to the os layer.
#ifndef XWARP_OS_RUN_CONTAINMENT_HPP
#define XWARP_OS_RUN_CONTAINMENT_HPP

#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "proc_table.hpp"
#include "xwarp/engine/os/tempdir.hpp"

namespace xwarp::proc
{
    class run_containment
    {
    public:
        // `token` names the run (and its probe: see owner_of); the cgroup is xwarp-<token>.
        explicit run_containment(const std::string& token);
        ~run_containment();
        run_containment(const run_containment&) = delete;
        run_containment& operator=(const run_containment&) = delete;

        // In the child between fork and exec (async-signal-safe): enters the run's cgroup.
        void enter() const noexcept;
        bool has_cgroup() const { return !m_cgroup.empty(); }
        const std::string& cgroup() const { return m_cgroup; }

        // Without a cgroup: the run's tree as seen now, written down when it changed.
        void record(const std::vector<pid_t>& tree);

        // Kills every process in the cgroup until none is left.
        void kill_members(kill_tally& tally) const;

    private:
        scoped_temp_dir m_dir;
        std::string m_cgroup;  // the cgroup's directory; empty without one
        int m_procs_fd = -1;   // its cgroup.procs, open for the child to write "0" into
        std::set<std::pair<pid_t, unsigned long long>> m_recorded;
    };

    // A dead probe's run directory: kills what its cgroup still holds (then removes the cgroup)
    // and its recorded processes that still run (the same pid with the same start time).
    void kill_what_a_dead_run_left(const std::string& run_dir, kill_tally& tally);

    // Cgroups named xwarp-<token> whose token `dead` says belongs to a probe that is gone,
    // wherever this process would make one: their processes killed, the cgroups removed.
    void kill_dead_runs_cgroups(const std::function<bool(const std::string& token)>& dead, kill_tally& tally);
}

#endif
