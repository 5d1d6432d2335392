// Small builders for synthetic reports used by the unit tests (real runs are in tests/python).
#ifndef XWARP_TESTS_BUILDERS_HPP
#define XWARP_TESTS_BUILDERS_HPP

#include <string>
#include <vector>

#include "xwarp/model/report.hpp"

namespace xwarp::testing
{
    inline module_load load(const std::string& module,
                            const std::string& hash,
                            double ms,
                            load_status status = load_status::compiled,
                            int block_dim = 1,
                            std::vector<std::string> kernels = {"k"})
    {
        module_load l;
        l.module = module;
        l.hash = hash;
        l.device = "cpu";
        l.block_dim = block_dim;
        l.status = status;
        l.warp_ms = ms;
        l.total_ms = ms + 1.0;
        l.native_ms = status == load_status::compiled ? ms * 0.9 : 0.0;
        l.source = figure_source::hook;
        l.pid = 1;
        content_snapshot s;
        for (const auto& k : kernels)
        {
            s.kernels.push_back({k, "h" + k, "", false});
        }
        s.options = shared_options({{"block_dim", block_dim}, {"enable_backward", true}});
        l.snapshot = s;
        return l;
    }

    // A pass of process 1. Its loads run one after another from t=0, unless concurrent, where
    // they keep the start times they were given (0 by default: all at once), each in a worker
    // thread of its own.
    inline run_result pass(double wall_ms, std::vector<module_load> loads, std::int64_t launches = 2, bool concurrent = false)
    {
        double t = 0.0;
        int worker = 0;
        for (auto& l : loads)
        {
            if (concurrent)
            {
                if (l.thread.empty())
                {
                    l.thread = "worker-" + std::to_string(++worker);
                }
                continue;
            }
            l.t_start_ms = t;
            t += l.total_ms.value_or(0.0);
        }
        run_result r;
        r.wall_ms = wall_ms;
        r.exit_code = 0;
        r.module_loads = std::move(loads);
        r.launch_total = launches;
        r.load_source = figure_source::hook;
        process_record p;
        p.pid = 1;
        p.warp_version = "1.19.0";
        p.hooks = {{"launch", true}, {"module_load", true}};
        r.processes.push_back(p);
        if (launches > 0)
        {
            launch_record lr;
            lr.kernel = "k";
            lr.module = "m";
            lr.dim = json_text(10);
            lr.device = "cpu";
            lr.block_dim = 1;
            lr.count = launches;
            r.launches.push_back(lr);
        }
        return r;
    }

    inline sample make_sample(int index, run_result cold, run_result warm)
    {
        sample s;
        s.index = index;
        s.cold = std::move(cold);
        s.warm = std::move(warm);
        return s;
    }
}

#endif
