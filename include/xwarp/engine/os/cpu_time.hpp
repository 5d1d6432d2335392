// CPU time as the kernel counts it: the whole machine's busy time (/proc/stat), what this
// process's reaped children used, and the calling thread's own. The runner takes a reading before
// and after each pass: what the machine's other processes took while the pass ran is the
// machine's busy time less the pass's processes and the probe's waiting thread.
#ifndef XWARP_OS_CPU_TIME_HPP
#define XWARP_OS_CPU_TIME_HPP

#include <optional>

namespace xwarp
{
    struct cpu_reading
    {
        int cpus = 0;               // the machine's CPUs (/proc/stat's cpuN lines)
        double machine_busy_ms = 0.0;  // every CPU's time not idle, summed since boot
        double children_ms = 0.0;      // user + system time of this process's reaped descendants
        double this_thread_ms = 0.0;   // user + system time of the calling thread
    };

    // None where /proc/stat cannot be read (not Linux, or /proc not mounted).
    std::optional<cpu_reading> read_cpu();

    // What the machine's other processes took between two readings, and the reaped children's
    // share, in ms; `others_ms` is never below zero (the machine's counter ticks at USER_HZ).
    struct cpu_between
    {
        int cpus = 0;
        double others_ms = 0.0;
        double children_ms = 0.0;
    };
    cpu_between cpu_used_between(const cpu_reading& before, const cpu_reading& after);
}

#endif
