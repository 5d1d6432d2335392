#include "pid_namespace.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace xwarp::proc
{
    namespace
    {
        void close_range_from(unsigned int first, unsigned int last) noexcept
        {
#ifdef SYS_close_range
            if (::syscall(SYS_close_range, first, last, 0u) == 0)
            {
                return;
            }
#endif
            for (unsigned int fd = first; fd <= last && fd < 65536; ++fd)
            {
                ::close(static_cast<int>(fd));
            }
        }

        // Closes every descriptor from 3 up except `keep_a` and `keep_b` (-1: none): the
        // processes around the command hold none of its files open (Boost's exec-error pipe among
        // them: the probe reads it to its end to know the command started).
        void close_all_but(int keep_a, int keep_b = -1) noexcept
        {
            const int low = std::min(keep_a, keep_b);
            const int high = std::max(keep_a, keep_b);
            unsigned int from = 3;
            for (const int keep : {low, high})
            {
                if (keep < static_cast<int>(from))
                {
                    continue;
                }
                if (keep > static_cast<int>(from))
                {
                    close_range_from(from, static_cast<unsigned int>(keep) - 1);
                }
                from = static_cast<unsigned int>(keep) + 1;
            }
            close_range_from(from, ~0u);
        }

        bool write_all(int fd, const void* data, std::size_t n) noexcept
        {
            const char* p = static_cast<const char*>(data);
            while (n > 0)
            {
                const ssize_t w = ::write(fd, p, n);
                if (w < 0 && errno == EINTR)
                {
                    continue;
                }
                if (w <= 0)
                {
                    return false;
                }
                p += w;
                n -= static_cast<std::size_t>(w);
            }
            return true;
        }

        // Ends this process as `status` says the command ended: its exit code, or its signal
        // (no core file: the command's own end already was whatever it was).
        [[noreturn]] void end_as(int status) noexcept
        {
            if (WIFSIGNALED(status))
            {
                const int sig = WTERMSIG(status);
                struct rlimit no_core = {0, 0};
                ::setrlimit(RLIMIT_CORE, &no_core);
                struct sigaction dfl;
                std::memset(&dfl, 0, sizeof dfl);
                dfl.sa_handler = SIG_DFL;
                ::sigaction(sig, &dfl, nullptr);
                sigset_t one;
                sigemptyset(&one);
                sigaddset(&one, sig);
                ::sigprocmask(SIG_UNBLOCK, &one, nullptr);
                ::kill(::getpid(), sig);
                ::_exit(128 + sig);
            }
            ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
        }

        // The processes of this namespace other than its init, as its own /proc lists them
        // (getdents64 straight: opendir allocates, which a forked child of a threaded process
        // must not). -1 when /proc is not the namespace's (its mount failed).
        int others_in_namespace() noexcept
        {
            const int dir = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (dir < 0)
            {
                return -1;
            }
            int count = 0;
            alignas(8) char buf[4096];
            while (true)
            {
                const long n = ::syscall(SYS_getdents64, dir, buf, sizeof buf);
                if (n <= 0)
                {
                    break;
                }
                for (long at = 0; at < n;)
                {
                    const auto reclen = *reinterpret_cast<unsigned short*>(buf + at + 16);  // d_reclen
                    const char* name = buf + at + 19;                                        // d_name
                    bool digits = name[0] != '\0';
                    for (const char* c = name; *c; ++c)
                    {
                        digits = digits && *c >= '0' && *c <= '9';
                    }
                    if (digits && !(name[0] == '1' && name[1] == '\0'))
                    {
                        ++count;
                    }
                    at += reclen;
                }
            }
            ::close(dir);
            return count;
        }

        // The namespace's first process: reaps whatever ends in it (orphans come here) until
        // the command's parent ends (as the command did); then kills what is left, hands out the
        // command's status and how many it killed, and ends, which ends the namespace.
        [[noreturn]] void be_init(pid_t command_parent, int status_fd, bool own_proc) noexcept
        {
            while (true)
            {
                int status = 0;
                const pid_t ended = ::waitpid(-1, &status, 0);
                if (ended == command_parent)
                {
                    int ignored = 0;
                    while (::waitpid(-1, &ignored, WNOHANG) > 0)
                    {
                    }
                    const int left = own_proc ? others_in_namespace() : -1;
                    ::kill(-1, SIGKILL);  // every process of the namespace but this one
                    const int said[2] = {status, left};
                    write_all(status_fd, said, sizeof said);
                    ::_exit(0);
                }
                if (ended < 0 && errno != EINTR)
                {
                    ::_exit(127);
                }
            }
        }
    }

    namespace
    {
        // "<id> <id> 1": the one line that maps a user (or group) to itself in a user namespace.
        bool write_identity_map(const char* path, unsigned long id) noexcept
        {
            char digits[24];
            int n = 0;
            do
            {
                digits[n++] = static_cast<char>('0' + id % 10);
                id /= 10;
            } while (id > 0 && n < 20);
            char line[64];
            int at = 0;
            for (int copy = 0; copy < 2; ++copy)
            {
                for (int i = n - 1; i >= 0; --i)
                {
                    line[at++] = digits[i];
                }
                line[at++] = ' ';
            }
            line[at++] = '1';
            line[at++] = '\n';
            const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
            const bool written = fd >= 0 && write_all(fd, line, static_cast<std::size_t>(at));
            if (fd >= 0)
            {
                ::close(fd);
            }
            return written;
        }

        // A PID namespace (and a mount namespace for its /proc). As root the kernel grants it. A
        // user without CAP_SYS_ADMIN gets one inside a user namespace of its own, where the
        // kernel allows unprivileged ones: the user and group are mapped to themselves, so the
        // command sees its own ids and holds no capability (a set-user-ID program it runs does
        // not change user there). Without it, a daemon that left the run's session and emptied
        // its environment outlived a probe killed with -9 and was no later probe's to find.
        bool unshare_pid_namespace() noexcept
        {
            if (::unshare(CLONE_NEWPID | CLONE_NEWNS) == 0)
            {
                return true;
            }
            if (errno != EPERM || ::geteuid() == 0)
            {
                return false;
            }
            const uid_t uid = ::geteuid();
            const gid_t gid = ::getegid();
            if (::unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS) != 0)
            {
                return false;  // no unprivileged user namespaces here: the cgroup or the tree contain
            }
            const int fd = ::open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
            if (fd >= 0)
            {
                write_all(fd, "deny", 4);
                ::close(fd);
            }
            if (!write_identity_map("/proc/self/uid_map", uid) || !write_identity_map("/proc/self/gid_map", gid))
            {
                // in a user namespace already, as the overflow user: the command must not run so
                ::_exit(127);
            }
            return true;
        }
    }

    bool pid_namespace_wanted()
    {
        const char* v = std::getenv("XWARP_PIDNS");
        return !(v && std::strcmp(v, "off") == 0);
    }

    void enter_own_pid_namespace(int said_fd) noexcept
    {
        int status_pipe[2];
        if (!unshare_pid_namespace() || ::pipe2(status_pipe, O_CLOEXEC) != 0)
        {
            write_all(said_fd, "f", 1);
            return;
        }
        const pid_t init = ::fork();
        if (init < 0)
        {
            ::_exit(127);  // the namespace is promised to this child's next fork: nothing can run
        }
        if (init > 0)
        {
            // outside: waits for the init, tells the probe how many the init killed, and ends
            // as the command did
            write_all(said_fd, "n", 1);
            close_all_but(said_fd, status_pipe[0]);
            const int status_fd = status_pipe[0];
            int init_status = 0;
            while (::waitpid(init, &init_status, 0) < 0 && errno == EINTR)
            {
            }
            int said[2] = {0, -1};
            ssize_t got = 0;
            do
            {
                got = ::read(status_fd, said, sizeof said);
            } while (got < 0 && errno == EINTR);
            const bool told = got == static_cast<ssize_t>(sizeof said);
            if (told && said[1] >= 0)
            {
                write_all(said_fd, &said[1], sizeof said[1]);
            }
            // not told: the init was killed (the probe's timeout or interrupt kills the group)
            end_as(told ? said[0] : init_status);
        }
        // the namespace's init (pid 1 in it): dies with the child outside
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        ::close(status_pipe[0]);
        // Its own /proc, in a mount namespace whose changes never reach the machine's. Where the
        // mount fails the command still runs; only /proc/<its pid> then names another process.
        const bool own_proc = ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0
                              && ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0;
        const pid_t command_parent = ::fork();
        if (command_parent < 0)
        {
            ::_exit(127);
        }
        if (command_parent > 0)
        {
            ::prctl(PR_SET_NAME, "xwarp-init", 0, 0, 0);
            close_all_but(status_pipe[1]);
            be_init(command_parent, status_pipe[1], own_proc);
        }
        // The command's parent (pid 2): the command sees a parent that is not pid 1, as it would
        // outside (a program may exit when its parent is init, taking itself for an orphan). It
        // waits for the command and ends as the command did; orphans go to the init.
        ::close(status_pipe[1]);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        const pid_t command = ::fork();
        if (command < 0)
        {
            ::_exit(127);
        }
        if (command > 0)
        {
            ::prctl(PR_SET_NAME, "xwarp-parent", 0, 0, 0);
            close_all_but(-1);
            int status = 0;
            while (::waitpid(command, &status, 0) < 0)
            {
                if (errno != EINTR)
                {
                    ::_exit(127);
                }
            }
            end_as(status);
        }
        // the command: goes on to exec
    }
}
