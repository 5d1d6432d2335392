// A test suite's builds, per test and per worker process (see suite.hpp).
#include "xwarp/analysis/suite.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

#include "xwarp/model/format.hpp"

namespace xwarp
{
    std::string identity_name(const module_load& l)
    {
        return l.module.str() + " " + l.hash.str().substr(0, 7) + " on " + l.device.str()
               + (l.block_dim ? " block_dim " + std::to_string(*l.block_dim) : std::string());
    }

    namespace
    {
        // A test's id in dotted words: "pkg/test_x.py::Class::test" and "pkg.test_x.Class.test"
        // read the same (the shim records the first whichever runner ran it; unittest prints the
        // second).
        std::string dotted_test(std::string id)
        {
            for (const std::string from : {".py::", "::", "/"})
            {
                for (auto at = id.find(from); at != std::string::npos; at = id.find(from, at + 1))
                {
                    id.replace(at, from.size(), ".");
                }
            }
            return id;
        }
    }

    // One test named two ways (a runner's printed id, the shim's recorded one): the same words,
    // one a suffix of the other at a boundary (a runner may name the module from another root).
    bool same_test(const std::string& printed, const std::string& recorded)
    {
        const std::string a = dotted_test(printed);
        const std::string b = dotted_test(recorded);
        if (a == b)
        {
            return true;
        }
        const auto ends_with = [](const std::string& x, const std::string& y)
        { return x.size() > y.size() && x.compare(x.size() - y.size(), y.size(), y) == 0 && x[x.size() - y.size() - 1] == '.'; };
        return ends_with(a, b) || ends_with(b, a);
    }

    bool is_suite(const run_result& cold)
    {
        return std::any_of(cold.module_loads.begin(), cold.module_loads.end(), [](const module_load& l) { return !l.test.empty(); });
    }

    namespace
    {
        // A list in first-seen order that takes each item once, in constant time per item: 80,000
        // test_use records, or 20,000 tests rebuilding one module, stay linear.
        class ordered_set
        {
        public:
            void add(const std::string& item)
            {
                if (!item.empty() && m_seen.insert(item).second)
                {
                    m_items.push_back(item);
                }
            }
            const std::vector<std::string>& items() const { return m_items; }

        private:
            std::unordered_set<std::string> m_seen;
            std::vector<std::string> m_items;
        };

        // Paid by the first: walking each process's loads and test_use records in the order the
        // shim wrote them, a module's current build is paid by the test that compiled it, and a
        // later test that launches the module reuses it (a build from another process's cache
        // has no payer here). test -> the tests that reused what it paid for, in order; and per
        // build (its test, module, device and hash) how many later tests reused that one build.
        using build_key = std::tuple<std::string, std::string, std::string, std::string>;
        std::map<std::string, std::vector<std::string>> reusers_by_payer(const run_result& cold,
                                                                         std::map<build_key, int>& per_build)
        {
            struct event
            {
                std::int64_t seq;
                const module_load* load;     // or
                const nlohmann::json* use;   // a test_use's args
            };
            std::map<std::int64_t, std::vector<event>> by_pid;
            for (const auto& l : cold.module_loads)
            {
                by_pid[l.pid].push_back({l.seq, &l, nullptr});
            }
            for (const auto& p : cold.processes)
            {
                for (const auto& c : p.calls)
                {
                    if (c.function == "test_use" && c.args.is_object())
                    {
                        by_pid[p.pid].push_back({c.seq, nullptr, &c.args});
                    }
                }
            }
            std::map<std::string, ordered_set> reusers;
            for (auto& [pid, events] : by_pid)
            {
                std::stable_sort(events.begin(), events.end(), [](const event& a, const event& b) { return a.seq < b.seq; });
                // (module, device) -> the test that paid for its current build, and the build's hash
                std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>> payer;
                std::map<build_key, ordered_set> build_reusers;
                for (const auto& e : events)
                {
                    if (e.load)
                    {
                        payer[{e.load->module.str(), e.load->device.str()}] = {
                            e.load->status == load_status::compiled ? e.load->test.str() : std::string(), e.load->hash.str()};
                        continue;
                    }
                    const std::string test = e.use->value("test", std::string());
                    const std::string module = e.use->value("module", std::string());
                    const std::string device = e.use->value("device", std::string());
                    const auto it = payer.find({module, device});
                    if (it == payer.end() || it->second.first.empty() || test.empty() || test == it->second.first)
                    {
                        continue;
                    }
                    reusers[it->second.first].add(test);
                    build_reusers[{it->second.first, module, device, it->second.second}].add(test);
                }
                for (const auto& [key, tests] : build_reusers)
                {
                    per_build[key] += static_cast<int>(tests.items().size());
                }
            }
            std::map<std::string, std::vector<std::string>> out;
            for (auto& [payer, tests] : reusers)
            {
                out[payer] = tests.items();
            }
            return out;
        }
    }

    std::map<std::pair<std::string, std::string>, std::vector<std::string>> tests_launching(const run_result& cold)
    {
        std::map<std::pair<std::string, std::string>, ordered_set> seen;
        const auto add = [&](const std::string& module, const std::string& device, const std::string& test)
        {
            seen[{module, device}].add(test);
        };
        for (const auto& l : cold.module_loads)
        {
            add(l.module.str(), l.device.str(), l.status == load_status::compiled ? l.test.str() : std::string());
        }
        for (const auto& p : cold.processes)
        {
            for (const auto& c : p.calls)
            {
                if (c.function == "test_use" && c.args.is_object())
                {
                    add(c.args.value("module", std::string()), c.args.value("device", std::string()),
                        c.args.value("test", std::string()));
                }
            }
        }
        std::map<std::pair<std::string, std::string>, std::vector<std::string>> out;
        for (auto& [key, tests] : seen)
        {
            out[key] = tests.items();
        }
        return out;
    }

    void attribute_to_tests(std::vector<finding>& findings, const run_result& cold)
    {
        if (!is_suite(cold))
        {
            return;
        }
        std::map<std::string, ordered_set> built_in;  // module -> the tests that built it
        for (const auto& l : cold.module_loads)
        {
            if (l.status != load_status::compiled)
            {
                continue;
            }
            built_in[l.module.str()].add(l.test.empty() ? std::string("collection / set-up") : l.test.str());
        }
        for (auto& f : findings)
        {
            // a finding about several modules names them joined: "a, b, c"
            const std::string modules = f.module.str();
            ordered_set tests;
            for (const auto& t : f.tests)
            {
                tests.add(t);
            }
            std::size_t at = 0;
            while (at <= modules.size() && !modules.empty())
            {
                const std::size_t comma = modules.find(", ", at);
                const std::string name = modules.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
                if (const auto it = built_in.find(name); it != built_in.end())
                {
                    for (const auto& t : it->second.items())
                    {
                        tests.add(t);
                    }
                }
                if (comma == std::string::npos)
                {
                    break;
                }
                at = comma + 2;
            }
            f.tests = tests.items();
        }
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
            t.identities.push_back({l.module, l.hash.str(), l.device, l.block_dim, ms});
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
        std::map<build_key, int> per_build;
        const auto reused = reusers_by_payer(cold, per_build);
        const std::unordered_set<std::string> failed(cold.failed_tests.begin(), cold.failed_tests.end());
        for (auto& [name, t] : by_test)
        {
            t.failed = !name.empty() && (failed.count(name) > 0 || std::any_of(cold.failed_tests.begin(), cold.failed_tests.end(),
                                                                              [&](const std::string& f) { return same_test(f, name); }));
            if (const auto it = reused.find(name); it != reused.end())
            {
                t.reused_by = static_cast<int>(it->second.size());
                t.reusers = it->second;  // every one: the renderers cap what they show
            }
            for (auto& b : t.identities)
            {
                if (const auto it = per_build.find({name, b.module.str(), b.device.str(), b.hash}); it != per_build.end())
                {
                    b.reused_by = it->second;
                }
            }
            s.tests.push_back(std::move(t));
        }
        // the costliest first; a test that built nothing stays listed (it ran, and paid nothing)
        std::stable_sort(s.tests.begin(), s.tests.end(), [](const test_cost& a, const test_cost& b) { return a.build_ms > b.build_ms; });
    }
}
