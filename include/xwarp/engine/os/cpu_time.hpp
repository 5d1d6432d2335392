// CPU time as the kernel counts it: the whole machine's busy time (/proc/stat), what this
// process's reaped children used, and the calling thread's own. The runner takes a reading before
// and after each pass: what the machine's other processes took while the pass ran is the
// machine's busy time less the pass's processes and the probe's waiting thread.
#ifndef XWARP_OS_CPU_TIME_HPP
#define XWARP_OS_CPU_TIME_HPP

#include <optional>
#include <string>

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

    // Whether this process may count the user-space instructions its threads retire
    // (perf_event_open, as the shim asks for each build): "" when it can, else why not (no
    // hardware counters in a virtual machine, perf_event_paranoid, a seccomp filter). Load
    // moves a thread's CPU time (a busier core runs slower); it does not move its instructions.
    std::string instruction_counts_unavailable();
}

#endif
