#include "proc_table.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <dirent.h>
#include <signal.h>

namespace xwarp::proc
{
    // The command name (field 2) is in parentheses and may hold spaces: the fields after it
    // are read from the last ')'.
    std::optional<stat_line> stat_of(pid_t pid)
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
        stat_line st;
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

    std::string describe(pid_t pid)
    {
        std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
        std::string name;
        std::getline(in, name);
        return std::to_string(pid) + (name.empty() ? std::string() : " (" + name + ")");
    }

    void kill_alive(const std::vector<pid_t>& pids, kill_tally& tally)
    {
        for (pid_t p : pids)
        {
            const auto st = stat_of(p);
            if (!st || st->state == 'Z' || st->state == 'X')
            {
                continue;
            }
            if (::kill(p, SIGKILL) == 0)
            {
                if (std::find(tally.killed.begin(), tally.killed.end(), p) == tally.killed.end())
                {
                    tally.killed.push_back(p);
                }
            }
            else if (errno == EPERM && std::find(tally.refused.begin(), tally.refused.end(), p) == tally.refused.end())
            {
                tally.refused.push_back(p);
            }
        }
    }
}
