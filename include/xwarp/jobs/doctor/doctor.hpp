// warp-probe doctor: what this machine and a given Python would give a measurement. It runs
// the Python once to ask Warp for its version and where its kernel cache would go, without
// initializing Warp (nothing is created or written).
#ifndef XWARP_DOCTOR_DOCTOR_HPP
#define XWARP_DOCTOR_DOCTOR_HPP

#include <string>

#include <nlohmann/json.hpp>

#include "xwarp/model/report.hpp"
#include "xwarp/render/view.hpp"

namespace xwarp
{
    struct doctor_report
    {
        environment env;        // host and CUDA facts (NVRTC, cudart)
        std::string python;     // the interpreter asked
        nlohmann::json target = nlohmann::json::object();  // python version, warp version, cache path
        std::string shim_dir;   // empty: not installed
        bool built_with_cuda = false;
        // "" where this process may count its threads' instructions (perf_event_open), else why
        // not: build work is then judged on thread CPU time, which load moves
        std::string instructions_unavailable;
    };

    // The interpreter is asked within answer_within_s: one that hangs (a sitecustomize that waits,
    // a stuck import) is stopped and said so.
    doctor_report run_doctor(const std::string& python, const std::string& shim_dir, double answer_within_s = 60.0);
    nlohmann::json doctor_to_json(const doctor_report& d);
    std::string render_doctor_text(const doctor_report& d);
    // The facts as text and, for --json, as data.
    view doctor_view(const doctor_report& d);
}

#endif
