#include "xwarp/engine/os/cpu_time.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cctype>
#include <fstream>
#include <sstream>
#include <string>

#include <linux/perf_event.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace xwarp
{
    namespace
    {
        double ms_of(const timeval& t)
        {
            return static_cast<double>(t.tv_sec) * 1000.0 + static_cast<double>(t.tv_usec) / 1000.0;
        }

        double used_ms(int who)
        {
            rusage u{};
            if (::getrusage(who, &u) != 0)
            {
                return 0.0;
            }
            return ms_of(u.ru_utime) + ms_of(u.ru_stime);
        }
    }

    std::optional<cpu_reading> read_cpu()
    {
        std::ifstream in("/proc/stat");
        if (!in)
        {
            return std::nullopt;
        }
        const long hz = ::sysconf(_SC_CLK_TCK);
        if (hz <= 0)
        {
            return std::nullopt;
        }
        cpu_reading r;
        bool total_seen = false;
        std::string line;
        while (std::getline(in, line))
        {
            if (line.rfind("cpu", 0) != 0)
            {
                continue;
            }
            if (line.size() > 3 && std::isdigit(static_cast<unsigned char>(line[3])))
            {
                ++r.cpus;
                continue;
            }
            // "cpu user nice system idle iowait irq softirq steal guest guest_nice": guest time is
            // counted in user already; idle and iowait are not busy
            std::istringstream fields(line.substr(3));
            unsigned long long v[8] = {};
            for (auto& x : v)
            {
                fields >> x;
            }
            const unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
            r.machine_busy_ms = static_cast<double>(busy) * 1000.0 / static_cast<double>(hz);
            total_seen = true;
        }
        if (!total_seen || r.cpus == 0)
        {
            return std::nullopt;
        }
        r.children_ms = used_ms(RUSAGE_CHILDREN);
        r.this_thread_ms = used_ms(RUSAGE_THREAD);
        return r;
    }

    cpu_between cpu_used_between(const cpu_reading& before, const cpu_reading& after)
    {
        cpu_between out;
        out.cpus = after.cpus;
        out.children_ms = std::max(0.0, after.children_ms - before.children_ms);
        const double busy = after.machine_busy_ms - before.machine_busy_ms;
        const double own_thread = after.this_thread_ms - before.this_thread_ms;
        out.others_ms = std::max(0.0, busy - out.children_ms - own_thread);
        return out;
    }

    std::string instruction_counts_unavailable()
    {
        perf_event_attr attr{};
        attr.size = sizeof attr;
        attr.type = PERF_TYPE_HARDWARE;
        attr.config = PERF_COUNT_HW_INSTRUCTIONS;
        attr.disabled = 1;
        attr.exclude_kernel = 1;
        attr.exclude_hv = 1;
        const long fd = ::syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
        if (fd >= 0)
        {
            ::close(static_cast<int>(fd));
            return {};
        }
        const int err = errno;
        std::string paranoid = "?";
        if (std::ifstream in("/proc/sys/kernel/perf_event_paranoid"); in)
        {
            std::getline(in, paranoid);
        }
        switch (err)
        {
            case ENOENT:
            case EOPNOTSUPP:
                return "no hardware instruction counter here (perf_event_open: " + std::string(std::strerror(err))
                       + "; usual in a virtual machine)";
            case EACCES:
            case EPERM:
                return "perf_event_open refused (" + std::string(std::strerror(err)) + "; perf_event_paranoid is " + paranoid
                       + ", a seccomp filter may refuse it too)";
            case ENOSYS:
                return "no perf_event_open on this kernel";
            default:
                return "perf_event_open failed: " + std::string(std::strerror(err));
        }
    }
}
