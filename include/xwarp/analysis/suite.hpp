// A test suite's builds, per test and per worker process: which test paid for which build (the
// shim attributes every load to the test that was running), how much of each process's wall its
// builds took. Filled into the summary from the first good sample's cold pass.
#ifndef XWARP_ANALYSIS_SUITE_HPP
#define XWARP_ANALYSIS_SUITE_HPP

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "xwarp/model/report.hpp"

namespace xwarp
{
    // summary.tests and summary.workers of a pass; both left empty when no load ran inside a test
    // (a program that is no test suite).
    void suite_tables(const run_result& cold, summary& s);

    // Whether any load of the pass ran inside a test: the pass is a test suite's.
    bool is_suite(const run_result& cold);

    // "module hash7 on device [block_dim N]": how an identity is named in the tests' tables.
    std::string identity_name(const module_load& l);

    // The tests that launched each (module, device) in the pass, in the order they first did: the
    // test that compiled it, then the shim's test_use records.
    std::map<std::pair<std::string, std::string>, std::vector<std::string>> tests_launching(const run_result& cold);

    // Each finding of a suite's pass named with the tests during which its modules were built
    // ("collection / set-up" outside any test), from the pass's loads; nothing for a program
    // that is no test suite.
    void attribute_to_tests(std::vector<finding>& findings, const run_result& cold);
}

#endif
