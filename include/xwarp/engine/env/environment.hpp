// Facts about the machine a report was measured on: OS, CPU, CUDA toolkit (NVRTC API),
// CUDA devices and driver (cudart). Works on a machine without a GPU or without a driver.
#ifndef XWARP_ENV_ENVIRONMENT_HPP
#define XWARP_ENV_ENVIRONMENT_HPP

#include "xwarp/model/report.hpp"

namespace xwarp
{
    // Host facts from uname and /proc, CUDA facts from NVRTC and cudart when the build has
    // the CUDA toolkit. Each fact's origin is written to env.sources.
    environment collect_host_environment();

    // The host facts, collected once per process (they do not change while it runs) and in
    // the background from the first call on: the CUDA query initialises the driver, about
    // 0.2 s that must not delay the first pass. get() waits only if they are not ready yet.
    // The driver starts under a private CUDA_CACHE_PATH, set by the thread that starts the
    // query and put back by the first that takes the facts or waits for them (the query's
    // thread changes no environment variable: setenv races with getenv on other threads).
    environment cached_host_environment();
    void start_collecting_host_environment();

    // Waits until the background collection, when one was started, has finished. Nothing may
    // let the process exit before: cudart tears itself down at exit, and a thread still inside
    // the driver's start then crashes the process (SIGSEGV after a usage error, under load).
    void finish_collecting_host_environment() noexcept;

    // True while a started collection has not finished (for the test of the above).
    bool host_environment_being_collected();

    // Adds what the measured program's Warp saw (version, Python, its device list) from the
    // shim's process records of the first good pass.
    void merge_target_facts(environment& env, const run_result& pass);

    bool built_with_cuda_toolkit();

    // The commit checked out in the git work tree holding `folder` (searched upwards; a
    // linked work tree's `.git` file is followed), or "" when there is none. Read from
    // HEAD, the ref files and packed-refs: no git process, nothing written. Uncommitted
    // changes are not seen.
    std::string project_commit(const std::string& folder);
}

#endif
