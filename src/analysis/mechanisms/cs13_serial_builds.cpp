// CS-13: several independent modules built one after another in one thread, where a parallel
// preload could overlap their native compiles. Judged on elapsed time; declined, with its
// numbers, where the machine's CPUs or the headers extra workers write would eat the gain.
#include <algorithm>
#include <map>
#include <string_view>

#include "detector.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp::detect
{
    namespace
    {
        using nlohmann::json;

        const std::string recommendation = "Preload them together from the entry point: wp.force_load(device=..., modules=[...], "
            "max_workers=N) or wp.load_module(..., max_workers=N), naming the modules (never "
            "modules=None) and the block_dim the launches use. This moves work, it does not "
            "remove it: judge it on compile elapsed. Codegen stays serial; only native compiles overlap. On CPU with "
            "Warp 1.16 or older keep max_workers <= 1 (CS-8), and each CPU worker thread writes its own precompiled "
            "header.";

        void detect(const context& ctx, sink& out)
        {
            const run_result& run = ctx.first_cold();
            std::string preload_workers;
            for (const auto& p : run.processes)
            {
                for (const auto& c : p.calls)
                {
                    auto mw = c.args.find("max_workers");
                    if (mw != c.args.end() && mw->is_number_integer() && mw->get<int>() > 1)
                    {
                        preload_workers = std::to_string(mw->get<int>());
                    }
                }
            }
            // (pid, device): views of the loads' strings, which outlive the detector
            std::map<std::pair<std::int64_t, std::string_view>, std::vector<const module_load*>> serial;
            for (const auto& l : run.module_loads)
            {
                if (l.status == load_status::compiled && !warps_own_module(l.module))
                {
                    serial[{l.pid, l.device}].push_back(&l);
                }
            }
            const auto& overlap = ctx.r.result.overlap_factor.median;
            for (const auto& [key, v] : serial)
            {
                // A named copy: C++17 lambdas cannot capture a structured binding.
                const std::string device(key.second);
                // The modules, sorted and each once, as views: a set of copies (and the cause as a
                // tree of more copies) cost a report of 50,000 modules most of this detector's time.
                std::vector<std::string_view> mods;
                mods.reserve(v.size());
                for (const auto* l : v)
                {
                    // a module's builds often follow each other: those are dropped before the sort
                    if (mods.empty() || mods.back() != std::string_view(l->module))
                    {
                        mods.emplace_back(l->module);
                    }
                }
                std::sort(mods.begin(), mods.end());
                mods.erase(std::unique(mods.begin(), mods.end()), mods.end());
                if (mods.size() < 2)
                {
                    continue;
                }
                const std::string names = join(mods);
                double sum = 0.0;
                double biggest = 0.0;
                double header = 0.0;
                for (const auto* l : v)
                {
                    sum += removable(*l, ctx.estimates_on());
                    biggest = std::max(biggest, removable(*l, ctx.estimates_on()));
                    header = std::max(header, l->header_cost_ms(ctx.estimates_on()));
                }
                const int cpus = ctx.r.env.cpu_count;
                const int workers = std::max(1, std::min(4, cpus));
                const double overlap_gain = sum - std::max(biggest, sum / workers);
                // On the CPU every extra worker thread writes its own precompiled header.
                const double header_cost = device == "cpu" ? header * (workers - 1) / workers : 0.0;
                const double ceiling = overlap_gain - header_cost;
                json numbers = {{"modules", mods.size()},  {"builds_ms", sum},           {"largest_ms", biggest},
                                {"cpus", cpus},           {"workers", workers},         {"overlap_gain_ms", overlap_gain},
                                {"header_cost_ms", header_cost}, {"ceiling_ms", ceiling}};
                if (overlap)
                {
                    numbers["overlap_factor"] = *overlap;
                }
                auto decline = [&](const std::string& reason)
                {
                    declined_lever d = make_declined("CS-13", names, device);
                    d.reason = reason;
                    d.numbers = numbers;
                    d.recommendation = recommendation;
                    out.declined.push_back(d);
                };
                if (!preload_workers.empty())
                {
                    decline("the program already preloads with max_workers=" + preload_workers);
                    continue;
                }
                if (overlap && *overlap > overlap_flag_threshold)
                {
                    decline("the builds already overlapped (overlap factor " + format_fixed(*overlap, 2) + ")");
                    continue;
                }
                if (ceiling <= 0.0)
                {
                    std::string why = std::to_string(mods.size()) + " modules built one at a time on " + device + " ("
                                      + format_ms(sum) + ", the largest " + format_ms(biggest) + "), but with "
                                      + std::to_string(cpus) + " CPU(s) " + std::to_string(workers) + " worker(s) could save at most "
                                      + format_ms(std::max(0.0, overlap_gain));
                    if (header_cost > 0.0)
                    {
                        why += ", less than the " + format_ms(header_cost) + " of precompiled headers the extra worker "
                               "thread(s) would write";
                    }
                    decline(why);
                    continue;
                }
                finding f = make_finding("CS-13", names, device);
                // members in the order dump() writes them (sorted)
                f.cause = json_text::of_compact_text("{\"modules\":" + json_string_array(mods) + ",\"overlap_factor\":"
                                                     + (overlap ? json(*overlap) : json()).dump() + ",\"workers\":"
                                                     + std::to_string(workers) + "}");
                f.evidence = std::to_string(mods.size()) + " independent modules were built one at a time on " + device
                             + " (" + format_ms(sum) + " of builds, the largest " + format_ms(biggest) + "; overlap factor "
                             + (overlap ? format_fixed(*overlap, 2) : std::string("n/a")) + "); ceiling with "
                             + std::to_string(workers) + " workers: " + format_ms(ceiling);
                f.recommendation = recommendation;
                f.savings_ms = ceiling;
                out.findings.push_back(std::move(f));
            }
        }
    }

    extern const detector cs13_serial_builds{
        {"CS-13", "independent modules built one at a time", finding_kind::advisory, "cs-13", "parallel-preload", "",
         "cs13_serial_builds.cpp"},
        &detect};
}
