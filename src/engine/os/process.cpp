#include "xwarp/engine/os/process.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/algorithm/string/split.hpp>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>

#include "pid_namespace.hpp"
#include "proc_table.hpp"
#include "run_containment.hpp"
#include "xwarp/engine/os/tempdir.hpp"

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

        constexpr const char* token_name = "XWARP_PROBE_TOKEN";

        // The pipe on which the child says whether it made the command a PID namespace of its own
        // (pid_namespace.hpp), and later how many processes the namespace's init killed.
        class namespace_channel
        {
        public:
            namespace_channel() { m_open = proc::pid_namespace_wanted() && ::pipe2(m_fds, O_CLOEXEC) == 0; }
            ~namespace_channel()
            {
                for (int& fd : m_fds)
                {
                    if (m_open && fd >= 0)
                    {
                        ::close(fd);
                    }
                }
            }
            namespace_channel(const namespace_channel&) = delete;
            namespace_channel& operator=(const namespace_channel&) = delete;

            int child_end() const { return m_open ? m_fds[1] : -1; }

            // After the spawn: the child's answer, written before the command starts (EOF if it
            // never was). This side's write end is closed first, so that EOF can come.
            bool made()
            {
                if (!m_open)
                {
                    return false;
                }
                ::close(m_fds[1]);
                m_fds[1] = -1;
                char answer = 0;
                m_made = read_all(&answer, 1) && answer == 'n';
                return m_made;
            }

            // After the child ended: what the init killed as the command ended (0 when it said
            // nothing: it was killed itself, or there was no namespace).
            int killed_by_init()
            {
                int killed = 0;
                return m_made && read_all(&killed, sizeof killed) ? killed : 0;
            }

        private:
            bool read_all(void* into, std::size_t n)
            {
                ssize_t got = 0;
                do
                {
                    got = ::read(m_fds[0], into, n);
                } while (got < 0 && errno == EINTR);
                return got == static_cast<ssize_t>(n);
            }

            int m_fds[2] = {-1, -1};
            bool m_open = false;
            bool m_made = false;
        };

        // This process's descendants (through /proc/<pid>/task/<tid>/children: no scan of every
        // process on the machine), leaving out `spare` and what descends from it, with each
        // one's parent.
        std::vector<std::pair<pid_t, pid_t>> own_subtree(const std::set<pid_t>& spare)
        {
            std::vector<std::pair<pid_t, pid_t>> out;  // (pid, parent)
            std::set<pid_t> seen;
            std::vector<std::pair<pid_t, pid_t>> stack;
            for (pid_t c : proc::direct_children(::getpid()))
            {
                stack.emplace_back(c, ::getpid());
            }
            while (!stack.empty())
            {
                const auto [p, parent] = stack.back();
                stack.pop_back();
                if (spare.count(p) || !seen.insert(p).second)
                {
                    continue;
                }
                out.emplace_back(p, parent);
                for (pid_t c : proc::direct_children(p))
                {
                    stack.emplace_back(c, p);
                }
            }
            return out;
        }

        // Kills every process `is_runs` claims (given its pid, its token and its start time),
        // and every descendant of one, whatever its session, until none is left (a process
        // may fork while it is killed). Reaps those that were adopted here.
        // own: only this process's descendants can be the run's (it is their subreaper while
        // the run lasts), so only they are looked at; otherwise every process is.
        template <class Claim>
        void kill_claimed(Claim is_runs, const std::set<pid_t>& spare, bool own, proc::kill_tally& tally)
        {
            const pid_t self = ::getpid();
            for (int round = 0; round < 50; ++round)
            {
                std::map<pid_t, std::vector<pid_t>> children;
                std::vector<pid_t> procs;
                if (own)
                {
                    for (const auto& [p, parent] : own_subtree(spare))
                    {
                        procs.push_back(p);
                        children[parent].push_back(p);
                    }
                }
                else
                {
                    for (pid_t p : proc::all_pids())
                    {
                        if (p == self || spare.count(p))
                        {
                            continue;
                        }
                        if (auto st = proc::stat_of(p))
                        {
                            children[st->ppid].push_back(p);
                            procs.push_back(p);
                        }
                    }
                }
                std::vector<pid_t> marked;
                for (pid_t p : procs)
                {
                    const auto st = proc::stat_of(p);
                    if (st && st->state != 'Z' && is_runs(p, proc::environ_value(p, token_name), st->start))
                    {
                        marked.push_back(p);
                    }
                }
                // descendants of a marked process, even ones that cleared their environment
                for (std::size_t i = 0; i < marked.size(); ++i)
                {
                    for (pid_t c : children[marked[i]])
                    {
                        if (std::find(marked.begin(), marked.end(), c) == marked.end())
                        {
                            marked.push_back(c);
                        }
                    }
                }
                std::vector<pid_t> alive;
                for (pid_t p : marked)
                {
                    auto st = proc::stat_of(p);
                    if (st && st->state != 'Z' && std::find(tally.refused.begin(), tally.refused.end(), p) == tally.refused.end())
                    {
                        alive.push_back(p);
                    }
                }
                if (alive.empty())
                {
                    break;
                }
                proc::kill_alive(alive, tally);
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
            // Adopted ones are this process's children now: reap them (ECHILD for the others).
            for (pid_t p : tally.killed)
            {
                ::waitpid(p, nullptr, 0);
            }
        }

        // Orphans that exited before the sweep were adopted here and wait as zombies: reap the
        // children that are not this process's own (those it had before the run started).
        void reap_adopted_zombies(const std::set<pid_t>& own_before)
        {
            for (pid_t p : proc::direct_children(::getpid()))
            {
                if (own_before.count(p))
                {
                    continue;
                }
                auto st = proc::stat_of(p);
                if (st && st->state == 'Z')
                {
                    ::waitpid(p, nullptr, WNOHANG);
                }
            }
        }

        std::set<pid_t> children_of_self()
        {
            const auto v = proc::direct_children(::getpid());
            return {v.begin(), v.end()};
        }

        // While a run lasts, orphaned descendants are adopted by this process instead of init,
        // so nothing the command starts can leave its reach. Restored afterwards: the kernel's
        // own process must not keep adopting the user's orphans.
        class subreaper_scope
        {
        public:
            subreaper_scope()
            {
                int previous = 0;
                ::prctl(PR_GET_CHILD_SUBREAPER, &previous, 0, 0, 0);
                m_set_here = previous == 0 && ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
            }
            ~subreaper_scope()
            {
                if (m_set_here)
                {
                    ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
                }
            }
            subreaper_scope(const subreaper_scope&) = delete;
            subreaper_scope& operator=(const subreaper_scope&) = delete;

        private:
            bool m_set_here = false;
        };

        std::string new_token()
        {
            static std::atomic<unsigned> counter{0};
            return owner_id() + "." + std::to_string(++counter);
        }

        // "<pid>.<start>" prefix of a token: the probe that owns it.
        std::string owner_of(const std::string& token)
        {
            const auto first = token.find('.');
            const auto second = first == std::string::npos ? first : token.find('.', first + 1);
            return second == std::string::npos ? token : token.substr(0, second);
        }
    }

    std::string owner_id()
    {
        const pid_t self = ::getpid();
        auto st = proc::stat_of(self);
        return std::to_string(self) + "." + std::to_string(st ? st->start : 0);
    }

    bool owner_gone(const std::string& owner)
    {
        const auto dot = owner.find('.');
        if (dot == std::string::npos)
        {
            return false;  // not ours to judge
        }
        char* end = nullptr;
        const long pid = std::strtol(owner.c_str(), &end, 10);
        const unsigned long long start = std::strtoull(owner.c_str() + dot + 1, nullptr, 10);
        if (pid <= 0 || end != owner.c_str() + dot)
        {
            return false;
        }
        auto st = proc::stat_of(static_cast<pid_t>(pid));
        return !st || st->start != start;
    }

    cleanup_result clean_after_dead_probes()
    {
        cleanup_result out;
        proc::kill_tally tally;
        const std::string& dir = temp_base();
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
        {
            const std::string name = entry.path().filename().string();
            if (name.rfind("xwarp-", 0) != 0 || !entry.is_directory(ec))
            {
                continue;
            }
            std::ifstream in(entry.path() / ".xwarp-owner");
            std::string owner;
            if (!std::getline(in, owner) || !owner_gone(owner))
            {
                continue;  // no owner recorded (not one of ours), or its probe is alive
            }
            // Only directories this user owns: never another user's, whatever its name.
            struct stat st{};
            if (::lstat(entry.path().c_str(), &st) == 0 && st.st_uid == ::getuid())
            {
                if (name.rfind("xwarp-run-", 0) == 0)
                {
                    proc::kill_what_a_dead_run_left(entry.path().string(), tally);  // its cgroup, its record
                }
                std::filesystem::remove_all(entry.path(), ec);
                out.dirs_removed += ec ? 0 : 1;
            }
        }
        const auto dead = [](const std::string& token) { return !token.empty() && owner_gone(owner_of(token)); };
        proc::kill_dead_runs_cgroups(dead, tally);
        // A probe killed before it cleaned up always leaves its directory: only then can it
        // have left processes too, and only then is every process's environment read.
        if (out.dirs_removed > 0)
        {
            kill_claimed([&](pid_t, const std::string& token, unsigned long long) { return dead(token); }, {}, false, tally);
        }
        out.processes_killed = static_cast<int>(tally.killed.size());
        return out;
    }

    process_outcome run_process(const process_spec& spec,
                                std::optional<double> timeout_s,
                                const cancel_check& cancelled,
                                const std::function<void(double)>& tick)
    {
        process_outcome out;
        // set(), not operator[]: Boost 1.74's operator[] looks each name up with a comparison
        // that reads past the end of shorter entries (AddressSanitizer: heap-buffer-overflow
        // in basic_environment_impl::find, on every pass).
        bp::environment env;
        for (const auto& [name, value] : spec.env)
        {
            env.set(name, value);
        }

        const std::string token = new_token();
        env.set(token_name, token);
        proc::run_containment contained(token);  // before the command starts: its cgroup, or its record
        subreaper_scope adopt_orphans;
        const std::set<pid_t> own_children = children_of_self();
        const pid_t parent = ::getpid();

        namespace_channel pid_namespace;
        const int said_fd = pid_namespace.child_end();

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
                        bp::extend::on_exec_setup =
                            [parent, &contained, said_fd](auto&)
                            {
                                contained.enter();
                                // The child dies with the probe, even a probe killed with -9.
                                ::prctl(PR_SET_PDEATHSIG, SIGKILL);
                                if (::getppid() != parent)
                                {
                                    ::_exit(127);  // the probe died before prctl took hold
                                }
                                if (said_fd >= 0)
                                {
                                    proc::enter_own_pid_namespace(said_fd);
                                }
                            },
                        ec);
        out.containment = pid_namespace.made() ? held_by::pid_namespace : contained.has_cgroup() ? held_by::cgroup : held_by::process_tree;
        if (ec)
        {
            out.spawn_error = ec.message();
            return out;
        }

        // Every process of this subtree that started with the command or after it is the
        // command's: an orphan adopted here is one, whatever its session or environment.
        const auto started = proc::stat_of(child.id());
        const unsigned long long run_start = started ? started->start : 0;
        const auto is_runs = [&](pid_t, const std::string& t, unsigned long long start)
        { return t == token || (run_start > 0 && start >= run_start); };
        const auto record_tree = [&]
        {
            if (!contained.has_cgroup())
            {
                std::vector<pid_t> tree;
                for (const auto& [p, parent_pid] : own_subtree(own_children))
                {
                    tree.push_back(p);
                }
                contained.record(tree);
            }
        };
        record_tree();

        // Poll rather than block: the loop is what lets a timeout or an interrupt act.
        // 2 ms keeps the wall-time error far below anything Warp compiles in.
        double next_tick = 100.0;
        double next_record = 100.0;
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
            if (elapsed >= next_record)
            {
                record_tree();  // without a cgroup: what a later probe kills if this one is killed
                next_record = elapsed + 100.0;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        out.wall_ms = ms_since(t0);

        kill_group(group);
        if (out.timed_out || out.interrupted)
        {
            std::error_code wait_ec;
            child.wait(wait_ec);
        }
        proc::kill_tally tally;
        if (!out.timed_out && !out.interrupted)
        {
            out.strays_killed += pid_namespace.killed_by_init();
        }
        kill_claimed(is_runs, own_children, true, tally);
        contained.kill_members(tally);  // those that left this subtree too (none can leave the cgroup)
        reap_adopted_zombies(own_children);
        out.strays_killed += static_cast<int>(tally.killed.size());
        for (pid_t p : tally.refused)
        {
            out.strays_left.push_back(proc::describe(p));
        }
        if (out.timed_out || out.interrupted)
        {
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

    std::string find_executable(const std::string& name, const std::string& path_env, std::string* not_executable)
    {
        std::vector<std::string> parts;
        boost::algorithm::split(parts, path_env, [](char c) { return c == ':'; });
        for (const auto& p : parts)
        {
            const std::filesystem::path candidate = std::filesystem::path(p.empty() ? "." : p) / name;
            std::error_code ec;
            if (!std::filesystem::is_regular_file(candidate, ec))
            {
                continue;
            }
            if (::access(candidate.c_str(), X_OK) == 0)
            {
                return std::filesystem::absolute(candidate, ec).string();
            }
            if (not_executable && not_executable->empty())
            {
                *not_executable = candidate.string();
            }
        }
        return {};
    }

    std::string missing_interpreter(const std::string& path)
    {
        std::ifstream in(path, std::ios::binary);
        char head[2] = {0, 0};
        if (!in.read(head, 2) || head[0] != '#' || head[1] != '!')
        {
            return {};
        }
        std::string line;
        std::getline(in, line);
        std::istringstream words(line);
        std::string interpreter;
        words >> interpreter;
        if (interpreter.empty())
        {
            return "(none)";
        }
        return ::access(interpreter.c_str(), X_OK) == 0 ? std::string() : interpreter;
    }
}
