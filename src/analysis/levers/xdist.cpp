// The suite levers: how pytest-xdist runs the suite, changed in the replay's pytest process (the
// shim rewrites its arguments before pytest reads them) and judged on the command's cold wall,
// which is what a change to how a suite runs is for.
//   xdist-loadfile: --dist loadfile, each test file's tests on one worker, so a module a file's
//     tests build is built once rather than by every worker that draws one of them.
//   xdist-workers: -n N with N the CPUs of the machine the replay runs on.
#include <algorithm>
#include <map>
#include <set>
#include <thread>

#include "lever.hpp"

namespace xwarp::levers
{
    namespace
    {
        bool is_pytest_command(const std::vector<std::string>& command)
        {
            for (std::size_t i = 0; i < command.size(); ++i)
            {
                const std::string& a = command[i];
                const std::string base = a.substr(a.find_last_of('/') == std::string::npos ? 0 : a.find_last_of('/') + 1);
                if (base == "pytest" || base == "py.test" || (a == "-m" && i + 1 < command.size() && command[i + 1] == "pytest"))
                {
                    return true;
                }
            }
            return false;
        }

        // The value of an option written `--name V`, `--name=V` or (short) `-nV`; "" when absent.
        std::string option_value(const std::vector<std::string>& command, const std::string& long_name,
                                 const std::string& short_name)
        {
            std::string value;
            for (std::size_t i = 0; i < command.size(); ++i)
            {
                const std::string& a = command[i];
                if ((a == long_name || (!short_name.empty() && a == short_name)) && i + 1 < command.size())
                {
                    value = command[i + 1];
                }
                else if (a.rfind(long_name + "=", 0) == 0)
                {
                    value = a.substr(long_name.size() + 1);
                }
                else if (!short_name.empty() && a.size() > short_name.size() && a.rfind(short_name, 0) == 0
                         && a.rfind("--", 0) != 0)
                {
                    value = a.substr(short_name.size());
                }
            }
            return value;
        }

        // The processes of the cold pass that ran tests: a suite under xdist has more than one.
        std::size_t test_processes(const run_result& cold)
        {
            std::set<std::int64_t> pids;
            for (const auto& l : cold.module_loads)
            {
                if (!l.test.empty())
                {
                    pids.insert(l.pid);
                }
            }
            return pids.size();
        }

        // The suite must be pytest under xdist, run in more than one process: else nothing to change.
        bool xdist_suite(lever_plan& p, const plan_input& in)
        {
            if (!is_pytest_command(in.baseline.command))
            {
                p.not_applicable = "the command is not a pytest run (a suite lever changes pytest-xdist's arguments)";
                return false;
            }
            if (option_value(in.baseline.command, "--numprocesses", "-n").empty() && test_processes(in.cold) < 2)
            {
                p.not_applicable = "the suite ran in one process: pytest-xdist (-n) is not in use";
                return false;
            }
            return true;
        }

        void plan_loadfile(lever_plan& p, const plan_input& in)
        {
            if (!xdist_suite(p, in))
            {
                return;
            }
            const std::string dist = option_value(in.baseline.command, "--dist", "");
            if (dist == "loadfile")
            {
                p.not_applicable = "the suite already runs with --dist loadfile";
                return;
            }
            p.params = {{"dist", "loadfile"}};
        }

        void plan_workers(lever_plan& p, const plan_input& in)
        {
            if (!xdist_suite(p, in))
            {
                return;
            }
            const int cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
            const std::string now = option_value(in.baseline.command, "--numprocesses", "-n");
            if (now == std::to_string(cpus))
            {
                p.not_applicable = "the suite already runs one worker per CPU of this machine (-n " + now + ")";
                return;
            }
            p.params = {{"workers", cpus}};
        }

        // What the repeats cost: every build of an identity after its first, across processes
        // (the time a distribution that keeps a module's tests together can take back).
        double repeated_stake(const lever_plan&, const run_result& cold)
        {
            std::map<std::string, std::set<std::int64_t>> seen;
            double ms = 0.0;
            for (const auto& l : cold.module_loads)
            {
                if (l.status != load_status::compiled)
                {
                    continue;
                }
                auto& pids = seen[l.module.str() + '\x1f' + l.hash.str() + '\x1f' + l.device.str()];
                if (!pids.empty() && !pids.count(l.pid))
                {
                    ms += l.work_ms();
                }
                pids.insert(l.pid);
            }
            return ms;
        }

        // How the replay spread the suite's tests over its workers: a distribution that put most
        // tests on one worker (loadfile with one large file, or pytest 7's --pyargs handing it
        // one "file") waits on that worker, whatever it saved in builds. Said beside the verdict.
        bool note_distribution(whatif_result& w, const lever_plan&, const report&, const report& replay)
        {
            const sample* s = replay.first_good();
            if (s == nullptr)
            {
                return false;
            }
            std::map<std::int64_t, std::set<std::string>> tests_of;
            for (const auto& l : s->cold.module_loads)
            {
                if (!l.test.empty())
                {
                    tests_of[l.pid].insert(l.test.str());
                }
            }
            for (const auto& p : s->cold.processes)
            {
                for (const auto& c : p.calls)
                {
                    if (c.function == "test_use" && c.args.is_object() && c.args.value("test", std::string()) != "")
                    {
                        tests_of[p.pid].insert(c.args.value("test", std::string()));
                    }
                }
            }
            std::size_t total = 0;
            std::size_t most = 0;
            for (const auto& [pid, tests] : tests_of)
            {
                total += tests.size();
                most = std::max(most, tests.size());
            }
            if (tests_of.size() >= 1 && total >= 4 && most * 4 >= total * 3)
            {
                w.reason += (w.reason.empty() ? "" : "; ") + std::string("the replay ran ") + std::to_string(most) + " of the "
                            + std::to_string(total) + " tests that used Warp on one worker (of "
                            + std::to_string(tests_of.size())
                            + " that ran any): that worker's wall is the suite's (with --pyargs, pytest 7 hands loadfile "
                              "one group for a whole package)";
            }
            return false;
        }

        double all_builds_stake(const lever_plan&, const run_result& cold)
        {
            double ms = 0.0;
            for (const auto& l : cold.module_loads)
            {
                ms += l.status == load_status::compiled ? l.work_ms() : 0.0;
            }
            return ms;
        }
    }

    extern const lever_def xdist_loadfile{
        {"xdist-loadfile", "runs the pytest suite with pytest-xdist's --dist loadfile (each file's tests on one worker): "
                           "judged on the suite's cold wall",
         "xdist.cpp"},
        &plan_loadfile,
        nullptr,
        &note_distribution,
        nullptr,
        "a suite's pytest arguments are the CI job's, not the program's code: add --dist loadfile to its pytest command "
        "(or to addopts in its pytest configuration) where the replay measured a shorter wall",
        &repeated_stake,
        true};

    extern const lever_def xdist_workers{
        {"xdist-workers", "runs the pytest suite with pytest-xdist's -n set to this machine's CPUs: judged on the "
                          "suite's cold wall",
         "xdist.cpp", true},
        &plan_workers,
        nullptr,
        &note_distribution,
        nullptr,
        "a suite's worker count is the CI job's setting, not the program's code: set -n where the replay measured a "
        "shorter wall",
        &all_builds_stake,
        true};
}
