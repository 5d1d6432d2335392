// xwarp: a Python notebook kernel (xeus-python) with the warp-probe magics.
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include <execinfo.h>
#include <pthread.h>
#include <unistd.h>

#include <pybind11/embed.h>

#include "xwarp/fronts/kernel/xadapter.hpp"
#include "xwarp/fronts/magics/magics.hpp"
#include "xwarp/engine/install/layout.hpp"
#include "xwarp/version.hpp"

#ifndef XWARP_DEFAULT_PYTHON
#define XWARP_DEFAULT_PYTHON "/usr/bin/python3"
#endif

namespace py = pybind11;

namespace
{
    // A kernel that crashes is seen by Jupyter only as "the kernel died": before dying, this
    // one says on stderr (the Jupyter server's log) which signal killed it and where.
    // Async-signal-safe calls only: write, backtrace (loaded once beforehand), raise.
    void say(const char* text)
    {
        (void)!::write(STDERR_FILENO, text, std::strlen(text));
    }

    void report_fatal_signal(int sig)
    {
        say("xwarp: the kernel dies of ");
        say(sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGILL ? "SIGILL" : sig == SIGFPE ? "SIGFPE" : "SIGABRT");
        say("; its stack:\n");
        void* frames[64];
        ::backtrace_symbols_fd(frames, ::backtrace(frames, 64), STDERR_FILENO);
        std::raise(sig);  // SA_RESETHAND put the default back: the signal ends the process
    }

    void report_fatal_signals()
    {
        void* warm_up[1];
        ::backtrace(warm_up, 1);  // its first call loads libgcc: never inside the handler
        struct sigaction on_fatal{};
        on_fatal.sa_handler = report_fatal_signal;
        on_fatal.sa_flags = SA_RESETHAND;
        sigemptyset(&on_fatal.sa_mask);
        for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT})
        {
            ::sigaction(sig, &on_fatal, nullptr);
        }
    }

    std::string connection_file(int argc, char* argv[])
    {
        for (int i = 1; i + 1 < argc; ++i)
        {
            if (std::strcmp(argv[i], "-f") == 0)
            {
                return argv[i + 1];
            }
        }
        return {};
    }
}

int main(int argc, char* argv[])
{
    for (int i = 1; i < argc; ++i)
    {
        if (std::strcmp(argv[i], "--version") == 0)
        {
            std::cout << "xwarp " << XWARP_VERSION << "\n";
            return 0;
        }
    }
    const std::string file = connection_file(argc, argv);
    if (file.empty())
    {
        std::cerr << "xwarp: usage: xwarp -f CONNECTION_FILE (started by Jupyter from its kernelspec)\n";
        return 64;
    }

    report_fatal_signals();

    // A Jupyter started with SIGINT ignored (nohup, "jupyter lab &" from a script) passes the
    // ignore on, and Python installs its KeyboardInterrupt handler only over the default: the
    // kernel could never be interrupted. Interrupts are this kernel's to take.
    std::signal(SIGINT, SIG_DFL);

    // Block SIGINT before any thread exists: xeus' threads inherit the mask, and the cell
    // thread opens it only while a cell runs (xadapter.cpp).
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);

    // The embedded Python is the kernel's venv (made from Debian's python3 with its system
    // packages): program_name makes sys.executable and sys.prefix the venv's.
    const char* env_python = std::getenv("XWARP_PYTHON");
    const std::string python = env_python && *env_python ? env_python : XWARP_DEFAULT_PYTHON;
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.parse_argv = 0;
    PyConfig_SetBytesString(&config, &config.program_name, python.c_str());
    py::scoped_interpreter guard(&config);

    auto session = std::make_shared<xwarp::probe_session>();
    session->shim_dir = xwarp::default_shim_dir();
    session->guide_text = xwarp::installed_guide_text();
    session->exercises_text = xwarp::installed_exercises_text();
    auto magics = std::make_shared<xwarp::magic_registry>();
    xwarp::register_warp_magics(*magics, session);

    xwarp::run_kernel(file, std::move(magics));
}
