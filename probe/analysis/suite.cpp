// A test suite's builds, per test and per worker process (see suite.hpp).
#include "xwarp/analysis/suite.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "xwarp/model/format.hpp"

namespace xwarp
{
    std::string identity_name(const module_load& l)
    {
        return l.module.str() + " " + l.hash.str().substr(0, 7) + " on " + l.device.str()
               + (l.block_dim ? " block_dim " + std::to_string(*l.block_dim) : std::string());
    }

    bool is_suite(const run_result& cold)
    {
        return std::any_of(cold.module_loads.begin(), cold.module_loads.end(), [](const module_load& l) { return !l.test.empty(); });
    }

    void suite_tables(const run_result& cold, summary& s)
    {
        if (!is_suite(cold))
        {
            return;
        }
        std::map<std::string, test_cost> by_test;
        std::map<std::int64_t, worker_share> by_pid;
        std::map<std::int64_t, std::set<std::string>> tests_in;
        for (const auto& l : cold.module_loads)
        {
            test_cost& t = by_test[l.test.str()];
            t.test = l.test.str();
            if (std::find(t.pids.begin(), t.pids.end(), l.pid) == t.pids.end())
            {
                t.pids.push_back(l.pid);
            }
            if (!l.test.empty())
            {
                tests_in[l.pid].insert(l.test.str());
            }
            if (l.status != load_status::compiled)
            {
                continue;
            }
            const double ms = l.work_ms();
            t.builds += 1;
            t.build_ms += ms;
            t.identities.push_back(identity_name(l) + " (" + format_ms(ms) + ")");
            worker_share& w = by_pid[l.pid];
            w.pid = l.pid;
            w.builds += 1;
            w.build_ms += ms;
        }
        for (const auto& p : cold.processes)
        {
            if (auto it = by_pid.find(p.pid); it != by_pid.end())
            {
                it->second.wall_ms = p.exited_ms;
            }
        }
        for (auto& [pid, w] : by_pid)
        {
            w.tests = static_cast<int>(tests_in[pid].size());
            s.workers.push_back(w);
        }
        for (auto& [name, t] : by_test)
        {
            s.tests.push_back(std::move(t));
        }
        // the costliest first; a test that built nothing stays listed (it ran, and paid nothing)
        std::stable_sort(s.tests.begin(), s.tests.end(), [](const test_cost& a, const test_cost& b) { return a.build_ms > b.build_ms; });
    }
}
