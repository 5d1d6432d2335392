// The report model: the one contract between the runner, analysis, renderers and fronts.
//
// The runner fills samples[] with what it measured; analysis fills summary, findings and
// (for compare) verdicts; renderers only read. The same structure round-trips through JSON
// (json_io.hpp) and is described by contracts/report.schema.json.
#ifndef XWARP_MODEL_REPORT_HPP
#define XWARP_MODEL_REPORT_HPP

#include "xwarp/model/results.hpp"

namespace xwarp
{
    // 2 added whatif[] (the what-if replays); 3 the suite fields (summary.tests, summary.workers,
    // a load's test, a process's exited_ms, a kernel's factory) and each pass's containment.
    // 4 a load's CPU clocks, each pass's load and caches, the clocks as words (judged_by, a
    // fix's clock), savings on the CPU clocks. Reports of versions 1 to 3 are read too.
    inline constexpr int report_schema_version = 4;
    inline constexpr int oldest_readable_schema_version = 1;

    struct gpu_info
    {
        int ordinal = 0;
        std::string name;
        std::string compute_capability;
        std::int64_t memory_bytes = 0;
    };

    struct environment
    {
        std::string probe_version;
        std::string warp_version;
        std::string python_version;
        std::string python_executable;
        std::string os;
        std::string machine;         // the architecture (uname -m)
        std::string host;            // the host name (uname -n): the history's machine
        std::string project_commit;  // git commit of the measured project's folder, when it is one
        std::string cpu_model;
        int cpu_count = 0;
        std::string cuda_toolkit;  // "13.0"
        std::string nvrtc_version;
        // Whether that NVRTC caches its compilations where CUDA_CACHE_PATH points, and how long the
        // check's two compiles of one program took (the second a fraction of the first when it does)
        nvrtc_cache_state nvrtc_cache = nvrtc_cache_state::unknown;
        std::optional<double> nvrtc_cache_first_ms;
        std::optional<double> nvrtc_cache_second_ms;
        std::string cuda_cache_maxsize;  // the user's CUDA_CACHE_MAXSIZE, "" when unset (the driver's default)
        std::string cuda_driver;   // "13.0", empty when none
        std::string cuda_status;   // a sentence: "no CUDA device", "driver 12.4 older than runtime 13.0", ...
        std::vector<gpu_info> gpus;
        nlohmann::json warp_devices = nlohmann::json::array();  // as the target's Warp saw them
        std::map<std::string, std::string> sources;  // fact -> where it came from
    };

    struct settings
    {
        int samples = 0;
        std::optional<double> timeout_s;
        std::string python;
        std::string sampling;          // "fixed", or "auto (2 to 10)" for --samples auto
        std::string stopped_because;   // --samples auto: why it stopped where it did
        bool nvrtc_trace = false;      // --nvrtc-trace: compile_time_trace on, NVRTC's traces kept
    };

    struct report
    {
        int schema_version = report_schema_version;
        std::string tool = "warp-probe";
        std::string created_utc;
        std::string label;
        std::vector<std::string> command;
        std::string cwd;
        // Whose code each file the report names is, decided where the run happened (absent in a
        // report written before xwarp recorded it).
        std::optional<xwarp::ownership> ownership;
        settings run_settings;
        std::optional<std::string> setup_code;  // %%warp_setup code a notebook probe ran first
        std::optional<std::string> cell_code;   // the probed notebook cell
        environment env;
        std::vector<sample> samples;
        summary result;
        std::vector<finding> findings;
        std::vector<declined_lever> declined;
        std::vector<whatif_result> whatif;
        std::vector<fix_result> fixes;  // warp-probe fix: a patch per finding with a code form
        std::vector<std::string> warnings;
        std::vector<std::string> errors;
        run_status status = run_status::ok;

        // The first sample whose passes both succeeded (what identities and comparisons are
        // read from), or nullptr.
        const sample* first_good() const
        {
            for (const auto& s : samples)
            {
                if (s.ok())
                {
                    return &s;
                }
            }
            return nullptr;
        }

        // The builds (compiled loads) of the first good sample's cold or warm pass: counted, not
        // timed, so no noise moves them; nullopt without a good sample (or its warm pass).
        std::optional<int> builds_in_first_good(bool warm) const
        {
            const sample* s = first_good();
            if (s == nullptr || (warm && !s->warm))
            {
                return std::nullopt;
            }
            int built = 0;
            for (const auto& l : (warm ? s->warm->module_loads : s->cold.module_loads))
            {
                built += l.status == load_status::compiled ? 1 : 0;
            }
            return built;
        }
    };

}  // namespace xwarp

#endif
