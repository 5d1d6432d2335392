// xwarp: a Python notebook kernel (xeus-python) with the warp-probe magics.
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include <pthread.h>

#include <pybind11/embed.h>

#include "xwarp/kernel/xadapter.hpp"
#include "xwarp/magics/magics.hpp"
#include "xwarp/install/layout.hpp"
#include "xwarp/version.hpp"

#ifndef XWARP_DEFAULT_PYTHON
#define XWARP_DEFAULT_PYTHON "/usr/bin/python3"
#endif

namespace py = pybind11;

namespace
{
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
    auto magics = std::make_shared<xwarp::magic_registry>();
    xwarp::register_warp_magics(*magics, session);

    xwarp::run_kernel(file, std::move(magics));
}
