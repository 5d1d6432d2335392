#include "run_containment.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace xwarp::proc
{
    namespace
    {
        // Where this process's own cgroups are, in the hierarchies a run's cgroup can go into:
        // cgroup v2 first, then v1's pids controller. From /proc/self/mountinfo (the mount
        // point, and the mount's root within its hierarchy) and /proc/self/cgroup (this
        // process's path in each hierarchy). $XWARP_CGROUP=off: none (the record instead).
        std::vector<std::string> cgroup_homes()
        {
            if (const char* v = std::getenv("XWARP_CGROUP"); v && std::string(v) == "off")
            {
                return {};
            }
            std::string v2_path;
            std::string pids_path;
            std::ifstream self("/proc/self/cgroup");
            for (std::string line; std::getline(self, line);)
            {
                const auto a = line.find(':');
                const auto b = a == std::string::npos ? a : line.find(':', a + 1);
                if (b == std::string::npos)
                {
                    continue;
                }
                const std::string controllers = "," + line.substr(a + 1, b - a - 1) + ",";
                if (line.compare(0, a, "0") == 0 && b == a + 1)
                {
                    v2_path = line.substr(b + 1);
                }
                else if (controllers.find(",pids,") != std::string::npos)
                {
                    pids_path = line.substr(b + 1);
                }
            }
            std::vector<std::string> v2_homes;
            std::vector<std::string> v1_homes;
            std::ifstream mounts("/proc/self/mountinfo");
            for (std::string line; std::getline(mounts, line);)
            {
                std::istringstream fields(line);
                std::string id, parent, dev, root, point;
                fields >> id >> parent >> dev >> root >> point;
                const auto dash = line.find(" - ");
                if (dash == std::string::npos)
                {
                    continue;
                }
                std::istringstream tail(line.substr(dash + 3));
                std::string type, source, options;
                tail >> type >> source >> options;
                const auto home = [&](const std::string& own) -> std::string
                {
                    // the own path is within the hierarchy; the mount shows it from `root` down
                    if (own.empty() || own.compare(0, root.size(), root) != 0)
                    {
                        return {};
                    }
                    const std::string rest = root == "/" ? own : own.substr(root.size());
                    return point + (rest == "/" ? std::string() : rest);
                };
                if (type == "cgroup2" && !v2_path.empty())
                {
                    if (auto h = home(v2_path); !h.empty())
                    {
                        v2_homes.push_back(h);
                    }
                }
                else if (type == "cgroup" && ("," + options + ",").find(",pids,") != std::string::npos && !pids_path.empty())
                {
                    if (auto h = home(pids_path); !h.empty())
                    {
                        v1_homes.push_back(h);
                    }
                }
            }
            v2_homes.insert(v2_homes.end(), v1_homes.begin(), v1_homes.end());
            return v2_homes;
        }

        std::vector<pid_t> members_of(const std::string& cgroup)
        {
            std::vector<pid_t> out;
            std::ifstream in(cgroup + "/cgroup.procs");
            long pid = 0;
            while (in >> pid)
            {
                out.push_back(static_cast<pid_t>(pid));
            }
            return out;
        }

        // Kills a cgroup's processes until it is empty (cgroup.kill, where v2 offers it, takes
        // the ones forked meanwhile too), then removes it.
        void empty_and_remove(const std::string& cgroup, kill_tally& tally)
        {
            for (int round = 0; round < 50; ++round)
            {
                const std::vector<pid_t> members = members_of(cgroup);
                bool alive = false;
                for (pid_t p : members)
                {
                    const auto st = stat_of(p);
                    alive = alive || (st && st->state != 'Z' && st->state != 'X');
                }
                if (!alive)
                {
                    break;
                }
                const std::size_t refused_before = tally.refused.size();
                kill_alive(members, tally);
                if (std::ofstream kill_all(cgroup + "/cgroup.kill"); kill_all)
                {
                    kill_all << "1" << std::flush;
                }
                if (tally.refused.size() > refused_before && tally.refused.size() >= members.size())
                {
                    break;  // none left that this user may kill
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
            for (int attempt = 0; attempt < 20 && ::rmdir(cgroup.c_str()) != 0 && errno == EBUSY; ++attempt)
            {
                std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the last ones still exiting
            }
        }
    }

    run_containment::run_containment(const std::string& token) : m_dir("xwarp-run-")
    {
        for (const std::string& home : cgroup_homes())
        {
            const std::string dir = home + "/xwarp-" + token;
            if (::mkdir(dir.c_str(), 0755) != 0)
            {
                continue;  // not this user's to make here
            }
            m_procs_fd = ::open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
            if (m_procs_fd < 0)
            {
                ::rmdir(dir.c_str());
                continue;
            }
            m_cgroup = dir;
            std::ofstream(m_dir.path() + "/cgroup") << dir << "\n";
            break;
        }
    }

    run_containment::~run_containment()
    {
        if (m_procs_fd >= 0)
        {
            ::close(m_procs_fd);
        }
        if (!m_cgroup.empty())
        {
            kill_tally ignored;
            empty_and_remove(m_cgroup, ignored);
        }
    }

    void run_containment::enter() const noexcept
    {
        if (m_procs_fd >= 0)
        {
            const ssize_t written = ::write(m_procs_fd, "0", 1);
            static_cast<void>(written);  // where it fails, the token and the record still find the tree
        }
    }

    void run_containment::record(const std::vector<pid_t>& tree)
    {
        std::set<std::pair<pid_t, unsigned long long>> now;
        for (pid_t p : tree)
        {
            if (const auto st = stat_of(p))
            {
                now.emplace(p, st->start);
            }
        }
        // grows only: one that exited is harmless to name (its start time no longer matches)
        const std::size_t before = m_recorded.size();
        m_recorded.insert(now.begin(), now.end());
        if (m_recorded.size() == before)
        {
            return;
        }
        const std::string path = m_dir.path() + "/processes";
        {
            std::ofstream out(path + ".new");
            for (const auto& [pid, start] : m_recorded)
            {
                out << pid << " " << start << "\n";
            }
        }
        std::error_code ec;
        fs::rename(path + ".new", path, ec);
    }

    void run_containment::kill_members(kill_tally& tally) const
    {
        if (m_cgroup.empty())
        {
            return;
        }
        for (int round = 0; round < 50; ++round)
        {
            std::vector<pid_t> alive;
            for (pid_t p : members_of(m_cgroup))
            {
                const auto st = stat_of(p);
                if (st && st->state != 'Z' && st->state != 'X'
                    && std::find(tally.refused.begin(), tally.refused.end(), p) == tally.refused.end())
                {
                    alive.push_back(p);
                }
            }
            if (alive.empty())
            {
                return;
            }
            kill_alive(alive, tally);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }

    void kill_what_a_dead_run_left(const std::string& run_dir, kill_tally& tally)
    {
        std::string cgroup;
        if (std::ifstream in(run_dir + "/cgroup"); in && std::getline(in, cgroup) && !cgroup.empty()
                                                   && fs::path(cgroup).filename().string().rfind("xwarp-", 0) == 0)
        {
            empty_and_remove(cgroup, tally);
        }
        std::ifstream record(run_dir + "/processes");
        long pid = 0;
        unsigned long long start = 0;
        std::vector<pid_t> still;
        while (record >> pid >> start)
        {
            const auto st = stat_of(static_cast<pid_t>(pid));
            if (st && st->start == start)
            {
                still.push_back(static_cast<pid_t>(pid));
            }
        }
        kill_alive(still, tally);
    }

    void kill_dead_runs_cgroups(const std::function<bool(const std::string& token)>& dead, kill_tally& tally)
    {
        for (const std::string& home : cgroup_homes())
        {
            std::error_code ec;
            for (const auto& entry : fs::directory_iterator(home, ec))
            {
                const std::string name = entry.path().filename().string();
                if (name.rfind("xwarp-", 0) == 0 && entry.is_directory(ec) && dead(name.substr(6)))
                {
                    empty_and_remove(entry.path().string(), tally);
                }
            }
        }
    }
}
