#include "xwarp/jobs/doctor/doctor.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "xwarp/engine/env/environment.hpp"
#include "xwarp/model/format.hpp"
#include "xwarp/engine/os/process.hpp"
#include "xwarp/engine/os/cpu_time.hpp"
#include "xwarp/engine/os/file_tail.hpp"
#include "xwarp/engine/os/tempdir.hpp"
#include "xwarp/render/html.hpp"

extern char** environ;

namespace xwarp
{
    namespace
    {
        // Asks Warp what it is and where its cache would go, the way Warp itself decides
        // (WARP_CACHE_PATH, else the per-user cache directory), without calling wp.init().
        const char* k_facts_script = R"(import json, os, sys
out = {"python_version": sys.version.split()[0], "executable": sys.executable}
try:
    import warp
    out["warp_version"] = getattr(warp, "__version__", None)
    out["warp_path"] = os.path.dirname(warp.__file__)
    version = getattr(warp.config, "version", out["warp_version"])
    if os.environ.get("WARP_CACHE_PATH"):
        base = os.path.realpath(os.environ["WARP_CACHE_PATH"])
        out["cache_dir"] = os.path.join(base, version)
        out["cache_source"] = "WARP_CACHE_PATH"
    else:
        appdirs = None
        for name in ("warp._src.thirdparty.appdirs", "warp.thirdparty.appdirs"):
            try:
                appdirs = __import__(name, fromlist=["user_cache_dir"])
                break
            except ImportError:
                pass
        if appdirs is not None:
            out["cache_dir"] = appdirs.user_cache_dir(appname="warp", appauthor="NVIDIA", version=version)
            out["cache_source"] = "per-user cache directory"
    d = out.get("cache_dir")
    if d:
        out["cache_exists"] = os.path.isdir(d)
        out["cache_modules"] = len([e for e in os.listdir(d) if e.startswith("wp_")]) if os.path.isdir(d) else 0
except Exception as exc:
    out["warp_error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
)";
    }

    doctor_report run_doctor(const std::string& python, const std::string& shim_dir, double answer_within_s)
    {
        doctor_report d;
        d.env = collect_host_environment();
        d.python = python;
        d.shim_dir = shim_dir;
        d.built_with_cuda = built_with_cuda_toolkit();
        d.instructions_unavailable = instruction_counts_unavailable();
        scoped_temp_dir tmp("xwarp-doctor-");
        process_spec spec;
        for (char** e = environ; e && *e; ++e)
        {
            std::string kv = *e;
            auto eq = kv.find('=');
            if (eq != std::string::npos && eq > 0)
            {
                spec.env[kv.substr(0, eq)] = kv.substr(eq + 1);
            }
        }
        spec.env["PYTHONDONTWRITEBYTECODE"] = "1";
        spec.env["TMPDIR"] = tmp.path();
        std::string exe = python.find('/') == std::string::npos
                              ? find_executable(python, spec.env.count("PATH") ? spec.env["PATH"] : "/usr/bin:/bin")
                              : std::filesystem::absolute(python).string();
        if (exe.empty())
        {
            d.target["error"] = "python not found: " + python;
            return d;
        }
        spec.exe = exe;
        spec.args = {"-c", k_facts_script};
        spec.cwd = tmp.path();
        spec.stdout_path = tmp.path() + "/out";
        spec.stderr_path = tmp.path() + "/err";
        auto outcome = run_process(spec, answer_within_s, {}, {});
        std::ifstream in(spec.stdout_path);
        std::string line;
        std::string last;
        while (std::getline(in, line))
        {
            if (!line.empty())
            {
                last = line;
            }
        }
        nlohmann::json j = nlohmann::json::parse(last, nullptr, false);
        if (!outcome.spawn_error.empty())
        {
            d.target["error"] = "could not start " + exe + ": " + outcome.spawn_error;
        }
        else if (outcome.timed_out)
        {
            d.target["error"] = exe + " did not answer within " + format_fixed(answer_within_s, 0)
                                + " s: stopped (does it hang at start-up, or on import warp?)";
        }
        else if (j.is_discarded() || !j.is_object())
        {
            d.target["error"] = "the Python did not answer (" + file_tail(spec.stderr_path, 400) + ")";
        }
        else
        {
            d.target = j;
        }
        return d;
    }

    nlohmann::json doctor_to_json(const doctor_report& d)
    {
        nlohmann::json env = nlohmann::json::object();
        // the environment's JSON mapping lives with the report model
        env["os"] = d.env.os;
        env["machine"] = d.env.machine;
        env["cpu_model"] = d.env.cpu_model;
        env["cpu_count"] = d.env.cpu_count;
        env["cuda_toolkit"] = d.env.cuda_toolkit;
        env["nvrtc_version"] = d.env.nvrtc_version;
        env["nvrtc_cache"] = d.env.nvrtc_cache;
        env["nvrtc_cache_first_ms"] = d.env.nvrtc_cache_first_ms ? nlohmann::json(*d.env.nvrtc_cache_first_ms) : nlohmann::json();
        env["nvrtc_cache_second_ms"] = d.env.nvrtc_cache_second_ms ? nlohmann::json(*d.env.nvrtc_cache_second_ms) : nlohmann::json();
        env["cuda_cache_maxsize"] = d.env.cuda_cache_maxsize;
        env["cuda_driver"] = d.env.cuda_driver;
        env["cuda_status"] = d.env.cuda_status;
        env["gpus"] = nlohmann::json::array();
        for (const auto& g : d.env.gpus)
        {
            env["gpus"].push_back(
                {{"ordinal", g.ordinal}, {"name", g.name}, {"compute_capability", g.compute_capability}, {"memory_bytes", g.memory_bytes}});
        }
        return {{"tool", "warp-probe doctor"},
                {"probe_version", d.env.probe_version},
                {"built_with_cuda_toolkit", d.built_with_cuda},
                {"machine", env},
                {"python", d.python},
                {"target", d.target},
                {"shim_dir", d.shim_dir},
                {"instruction_counts", d.instructions_unavailable.empty()},
                {"instruction_counts_why_not", d.instructions_unavailable}};
    }

    namespace
    {
    std::string nvrtc_cache_words(const environment& env)
    {
        const auto timing = [&]
        {
            return env.nvrtc_cache_first_ms && env.nvrtc_cache_second_ms
                       ? " (one program compiled twice: " + format_ms(*env.nvrtc_cache_first_ms) + ", then "
                             + format_ms(*env.nvrtc_cache_second_ms) + ")"
                       : std::string();
        };
        const std::string limit = env.cuda_cache_maxsize.empty() ? std::string("CUDA_CACHE_MAXSIZE unset: the driver's default limit")
                                                                  : "CUDA_CACHE_MAXSIZE " + env.cuda_cache_maxsize + " bytes";
        switch (env.nvrtc_cache)
        {
            case nvrtc_cache_state::caches:
                return "caches its compilations in CUDA_CACHE_PATH" + timing()
                       + ": a run that empties only Warp's kernel cache is not cold; keep both caches in CI (" + limit + ")";
            case nvrtc_cache_state::not_cached:
                return "compiled twice, served from no cache" + timing();
            case nvrtc_cache_state::no_driver:
                return "caches only where a CUDA driver is installed (its cache is the driver's compute cache): none here";
            case nvrtc_cache_state::disabled:
                return "its cache is disabled (CUDA_CACHE_DISABLE)";
            case nvrtc_cache_state::not_supported:
                return "no cache (this NVRTC has no cache trace: before 12.9)";
            case nvrtc_cache_state::unknown:
                break;
        }
        return "not checked";
    }
    }

    std::string render_doctor_text(const doctor_report& d)
    {
        std::ostringstream o;
        auto row = [&](const std::string& k, const std::string& v)
        { o << "  " << k << std::string(k.size() < 14 ? 14 - k.size() : 1, ' ') << v << "\n"; };
        o << "warp-probe doctor " << d.env.probe_version << "\n";
        row("OS", d.env.os + " " + d.env.machine);
        row("CPU", d.env.cpu_model + " (" + std::to_string(d.env.cpu_count) + " CPUs)");
        const auto& t = d.target;
        if (t.contains("error"))
        {
            row("Python", d.python + ": " + t.value("error", ""));
        }
        else
        {
            row("Python", t.value("executable", d.python) + " (" + t.value("python_version", "?") + ")");
            if (t.contains("warp_error"))
            {
                row("Warp", "not importable with this Python: " + t.value("warp_error", "") + " (use --python)");
            }
            else
            {
                row("Warp", t.value("warp_version", "?") + " at " + t.value("warp_path", "?"));
                if (t.contains("cache_dir"))
                {
                    row("Warp cache", t.value("cache_dir", "") + " (" + t.value("cache_source", "") + "; "
                                          + (t.value("cache_exists", false)
                                                 ? std::to_string(t.value("cache_modules", 0)) + " module builds in it"
                                                 : std::string("not created yet"))
                                          + ")");
                }
            }
        }
        if (d.built_with_cuda)
        {
            // found at run time: say which library answered (its soname or path), or that none did
            const auto from = [&d](const char* key) {
                const auto it = d.env.sources.find(key);
                return it == d.env.sources.end() ? std::string() : " from " + it->second;
            };
            row("CUDA runtime", d.env.cuda_toolkit.empty() ? std::string("not found (no libcudart.so.13/12/11 here)")
                                                            : d.env.cuda_toolkit + from("cuda_toolkit"));
            row("NVRTC", d.env.nvrtc_version.empty() ? std::string("not found (no libnvrtc.so.13/12/11.2 here)")
                                                      : d.env.nvrtc_version + from("nvrtc_version"));
            row("CUDA driver", d.env.cuda_driver.empty() ? std::string("none found (no libcuda.so.1)") : d.env.cuda_driver);
            row("NVRTC cache", nvrtc_cache_words(d.env));
        }
        else
        {
            row("CUDA", "warp-probe was built with XWARP_WITH_CUDA=OFF: not checked");
        }
        if (d.env.gpus.empty())
        {
            row("devices", d.env.cuda_status);
        }
        for (const auto& g : d.env.gpus)
        {
            row("cuda:" + std::to_string(g.ordinal),
                g.name + ", compute capability " + g.compute_capability + ", "
                    + std::to_string(g.memory_bytes / (1024 * 1024 * 1024)) + " GiB");
        }
        row("instructions", d.instructions_unavailable.empty()
                                ? std::string("counted per build (perf_event_open): recorded beside each load's CPU time")
                                : "not counted: " + d.instructions_unavailable
                                      + "; build work is judged on the loading threads' CPU time, which the machine's "
                                        "load moves (a busier core runs slower)");
        row("probe shim", d.shim_dir.empty() ? "NOT FOUND (set XWARP_SHIM_DIR or reinstall)" : d.shim_dir);
        return o.str();
    }

    view doctor_view(const doctor_report& d)
    {
        const std::string text = render_doctor_text(d);
        return {"warp-probe doctor", [text](std::ostream& out) { out << text; },
                [text](std::ostream& out) { out << render_preformatted_html(text); },
                "application/json", [data = doctor_to_json(d)](std::ostream& out) { out << data.dump(2) << '\n'; }};
    }
}
