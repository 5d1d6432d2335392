#include "xwarp/os/process.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <dirent.h>
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

#include "xwarp/os/tempdir.hpp"

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

        // /proc/<pid>/stat: the parent (field 4), the state (3) and the start time in clock
        // ticks since boot (22). The command name (2) is in parentheses and may hold spaces.
        struct proc_stat
        {
            pid_t ppid = 0;
            char state = '?';
            unsigned long long start = 0;
        };

        std::optional<proc_stat> stat_of(pid_t pid)
        {
            std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
            std::string text;
            if (!std::getline(in, text))
            {
                return std::nullopt;
            }
            const auto close = text.rfind(')');
            if (close == std::string::npos)
            {
                return std::nullopt;
            }
            std::istringstream rest(text.substr(close + 2));
            proc_stat st;
            std::string field;
            rest >> st.state >> st.ppid;
            for (int i = 5; i < 22 && rest >> field; ++i)
            {
            }
            if (!(rest >> st.start))
            {
                return std::nullopt;
            }
            return st;
        }

        std::vector<pid_t> all_pids()
        {
            std::vector<pid_t> out;
            if (DIR* d = ::opendir("/proc"))
            {
                while (dirent* e = ::readdir(d))
                {
                    char* end = nullptr;
                    const long v = std::strtol(e->d_name, &end, 10);
                    if (end && *end == '\0' && v > 0)
                    {
                        out.push_back(static_cast<pid_t>(v));
                    }
                }
                ::closedir(d);
            }
            return out;
        }

        // A process's children, from /proc/<pid>/task/<tid>/children (every thread's), or from a
        // scan of /proc where the kernel does not offer those files.
        std::vector<pid_t> direct_children(pid_t pid)
        {
            std::vector<pid_t> out;
            bool listed = false;
            if (DIR* d = ::opendir(("/proc/" + std::to_string(pid) + "/task").c_str()))
            {
                while (dirent* e = ::readdir(d))
                {
                    if (e->d_name[0] == '.')
                    {
                        continue;
                    }
                    std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + e->d_name + "/children");
                    if (!in)
                    {
                        continue;
                    }
                    listed = true;
                    long child = 0;
                    while (in >> child)
                    {
                        out.push_back(static_cast<pid_t>(child));
                    }
                }
                ::closedir(d);
            }
            if (!listed)
            {
                for (pid_t p : all_pids())
                {
                    auto st = stat_of(p);
                    if (st && st->ppid == pid)
                    {
                        out.push_back(p);
                    }
                }
            }
            return out;
        }

        // The value of one variable in a process's environment (empty when absent or unreadable:
        // another user's process, or a zombie).
        std::string environ_value(pid_t pid, const std::string& name)
        {
            std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
            std::string entry;
            const std::string prefix = name + "=";
            while (std::getline(in, entry, '\0'))
            {
                if (entry.compare(0, prefix.size(), prefix) == 0)
                {
                    return entry.substr(prefix.size());
                }
            }
            return {};
        }

        // Kills every process whose token satisfies `match`, and every descendant of one,
        // whatever its session, until none is left (a process may fork while it is killed).
        // Reaps those that were adopted here. Returns how many were killed.
        // own_subtree: only this process's descendants can carry the token (it is their
        // subreaper while the run lasts), so only their environments are read.
        template <class Match>
        int kill_marked(Match match, const std::set<pid_t>& spare, bool own_subtree)
        {
            const pid_t self = ::getpid();
            std::set<pid_t> killed;
            for (int round = 0; round < 50; ++round)
            {
                std::map<pid_t, std::vector<pid_t>> children;
                std::vector<std::pair<pid_t, char>> procs;
                std::set<pid_t> candidates;
                if (own_subtree)
                {
                    // Walk down from this process through /proc/<pid>/task/<tid>/children: no
                    // scan of every process on the machine after each pass.
                    std::vector<pid_t> stack = direct_children(self);
                    while (!stack.empty())
                    {
                        const pid_t p = stack.back();
                        stack.pop_back();
                        if (spare.count(p) || !candidates.insert(p).second)
                        {
                            continue;
                        }
                        if (auto st = stat_of(p))
                        {
                            procs.emplace_back(p, st->state);
                        }
                        for (pid_t c : direct_children(p))
                        {
                            children[p].push_back(c);
                            stack.push_back(c);
                        }
                    }
                }
                else
                {
                    for (pid_t p : all_pids())
                    {
                        if (p == self || spare.count(p))
                        {
                            continue;
                        }
                        if (auto st = stat_of(p))
                        {
                            children[st->ppid].push_back(p);
                            procs.emplace_back(p, st->state);
                        }
                    }
                }
                std::vector<pid_t> marked;
                for (const auto& [p, state] : procs)
                {
                    if (state != 'Z' && (!own_subtree || candidates.count(p)) && match(environ_value(p, token_name)))
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
                    auto st = stat_of(p);
                    if (st && st->state != 'Z')
                    {
                        alive.push_back(p);
                    }
                }
                if (alive.empty())
                {
                    break;
                }
                for (pid_t p : alive)
                {
                    if (::kill(p, SIGKILL) == 0)
                    {
                        killed.insert(p);
                    }
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
            // Adopted ones are this process's children now: reap them (ECHILD for the others).
            for (pid_t p : killed)
            {
                ::waitpid(p, nullptr, 0);
            }
            return static_cast<int>(killed.size());
        }

        // Orphans that exited before the sweep were adopted here and wait as zombies: reap the
        // children that are not this process's own (those it had before the run started).
        void reap_adopted_zombies(const std::set<pid_t>& own_before)
        {
            for (pid_t p : direct_children(::getpid()))
            {
                if (own_before.count(p))
                {
                    continue;
                }
                auto st = stat_of(p);
                if (st && st->state == 'Z')
                {
                    ::waitpid(p, nullptr, WNOHANG);
                }
            }
        }

        std::set<pid_t> children_of_self()
        {
            const auto v = direct_children(::getpid());
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
        auto st = stat_of(self);
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
        auto st = stat_of(static_cast<pid_t>(pid));
        return !st || st->start != start;
    }

    cleanup_result clean_after_dead_probes()
    {
        cleanup_result out;
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
                std::filesystem::remove_all(entry.path(), ec);
                out.dirs_removed += ec ? 0 : 1;
            }
        }
        // A probe killed before it cleaned up always leaves its directory: only then can it
        // have left processes too, and only then is every process's environment read.
        if (out.dirs_removed > 0)
        {
            out.processes_killed = kill_marked(
                [](const std::string& token) { return !token.empty() && owner_gone(owner_of(token)); }, {}, false);
        }
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
        subreaper_scope adopt_orphans;
        const std::set<pid_t> own_children = children_of_self();
        const pid_t parent = ::getpid();

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
                            [parent](auto&)
                            {
                                // The child dies with the probe, even a probe killed with -9.
                                ::prctl(PR_SET_PDEATHSIG, SIGKILL);
                                if (::getppid() != parent)
                                {
                                    ::_exit(127);  // the probe died before prctl took hold
                                }
                            },
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
            out.strays_killed = kill_marked([&](const std::string& t) { return t == token; }, own_children, true);
            reap_adopted_zombies(own_children);
            return out;
        }
        out.strays_killed = kill_marked([&](const std::string& t) { return t == token; }, own_children, true);
        reap_adopted_zombies(own_children);

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
