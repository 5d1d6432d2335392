// ptx-load-compile: a PTX module taken from Warp's cache still compiles at every load. The
// driver JIT-compiles PTX (its compute cache keeps the result) when it is at least as new as
// the CUDA toolkit Warp was built with; otherwise Warp compiles the PTX itself on each load and
// nothing keeps the result. Either way the warm pass shows it.
#include <algorithm>
#include <set>
#include <tuple>

#include "detector.hpp"
#include "xwarp/analysis/stats.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp::detect
{
    namespace
    {
        using nlohmann::json;

        std::string version_text(const json& v)
        {
            if (!v.is_array() || v.empty())
            {
                return {};
            }
            std::string t;
            for (const auto& x : v)
            {
                t += (t.empty() ? "" : ".") + (x.is_number_integer() ? std::to_string(x.get<int>()) : x.dump());
            }
            return t;
        }

        void detect(const context& ctx, sink& out)
        {
            constexpr double min_warm_ms = 50.0;  // below this a cached load is not worth a finding
            std::vector<double> warm_ptx_ms;
            unique_names ptx_modules;
            std::string device;
            for (const auto* s : ctx.good)
            {
                std::set<std::tuple<std::string, std::string, std::string>> ptx;  // module, hash, device
                for (const auto& l : s->cold.module_loads)
                {
                    if (l.output_suffix == ".ptx")
                    {
                        ptx.insert({l.module, l.hash, l.device});
                    }
                }
                double ms = 0.0;
                if (!s->warm)
                {
                    continue;  // one pass: no reload to see
                }
                for (const auto& l : s->warm->module_loads)
                {
                    if (l.status == load_status::cached && ptx.count({l.module, l.hash, l.device}))
                    {
                        ms += l.work_ms();
                        if (ptx_modules.add(l.module))
                        {
                            device = l.device;
                        }
                    }
                }
                warm_ptx_ms.push_back(ms);
            }
            const double med = median(warm_ptx_ms).value_or(0.0);
            const auto& modules = ptx_modules.names();
            if (modules.empty() || med < min_warm_ms)
            {
                return;
            }
            finding f = make_finding("ptx-load-compile", join(modules), device);
            json toolkit;
            json driver;
            for (const auto& p : ctx.first_warm().processes)
            {
                if (p.runtime.contains("toolkit_version") && !p.runtime["toolkit_version"].is_null())
                {
                    toolkit = p.runtime["toolkit_version"];
                    driver = field_or(p.runtime, "driver_version", json());
                }
                for (const auto& c : p.config_sets)
                {
                    if (c.key == "cuda_output")
                    {
                        add_location(f, c.file, c.line, "wp.config.cuda_output = " + c.new_value.dump());
                    }
                }
                for (const auto& c : p.calls)
                {
                    if (sets_module_option(c, "cuda_output"))
                    {
                        add_location(f, c.file, c.line, "wp.set_module_options(cuda_output=...)");
                    }
                }
            }
            // who compiles the PTX at each load: the driver (its compute cache could keep it), or
            // Warp itself when the driver is older than Warp's toolkit; unknown without both versions
            const bool versions = toolkit.is_array() && driver.is_array();
            const bool by_driver = versions && driver >= toolkit;
            const bool by_warp = versions && !by_driver;
            f.cause = json_text(nlohmann::json{{"modules", modules},
                       {"compiled_by", by_driver ? "driver" : by_warp ? "warp" : "unknown"},
                       {"toolkit_version", toolkit},
                       {"driver_version", driver},
                       {"warm_load_ms", med}});
            f.evidence = std::to_string(modules.size()) + " module(s) built as PTX still took " + format_ms(med)
                         + " to load from Warp's cache in the warm pass (median)";
            if (by_warp)
            {
                f.evidence += ": the driver (CUDA " + version_text(driver) + ") is older than the CUDA toolkit Warp was "
                              "built with (" + version_text(toolkit) + "), so Warp compiles the PTX itself at every "
                              "load and no cache keeps the result";
            }
            else if (by_driver)
            {
                f.evidence += ": the driver JIT-compiles the PTX, and its compute cache (CUDA_CACHE_PATH) did not "
                              "keep the result between the passes";
            }
            f.recommendation = "Leave the output format to Warp (wp.config.cuda_output = None, the default): it emits "
                               "CUBIN, which loads without compiling, whenever the driver is older than its toolkit. "
                               "Keep PTX only where one binary must serve several GPU architectures; then run a driver "
                               "at least as new as Warp's toolkit, so the driver's compute cache keeps the result, and "
                               "persist CUDA_CACHE_PATH between runs (containers and CI start it empty). Verify: the "
                               "module's cached load in the warm pass drops to a few ms.";
            f.savings_ms = med;  // paid at every process start, not once
            out.findings.push_back(std::move(f));
        }
    }

    extern const detector ptx_load_compile{
        {"ptx-load-compile", "a PTX module compiles again at every load", finding_kind::diagnosis, "ptx-load-compile", "",
         "the output format and the driver are the machine's set-up; the probe cannot swap a driver",
         "ptx_load_compile.cpp"},
        &detect};
}
