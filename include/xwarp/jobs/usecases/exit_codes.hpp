// Every exit code warp-probe returns, decided here and documented in README.md and --help.
#ifndef XWARP_FRONTS_EXIT_CODES_HPP
#define XWARP_FRONTS_EXIT_CODES_HPP

#include <string>

#include "xwarp/model/report.hpp"
#include "xwarp/model/verdicts.hpp"
#include "xwarp/model/warmup.hpp"

namespace xwarp::exit_code
{
    // measure / report / doctor
    inline constexpr int ok = 0;
    inline constexpr int all_samples_failed = 1;  // measure: no sample succeeded
    inline constexpr int check_failed = 1;        // warmup --verify: a covered identity still built, or a run failed

    // compare verdicts
    inline constexpr int improved = 0;
    inline constexpr int regressed = 1;
    inline constexpr int invalid = 2;        // workload changed, errors or failed samples
    inline constexpr int unverified = 3;     // no launches recorded: the workload cannot be checked
    inline constexpr int inconclusive = 4;   // inside the noise band or not significant
    inline constexpr int not_comparable = 5; // different Warp version, device or command

    // measure --budget / check: a budget was exceeded (the output names the module)
    inline constexpr int over_budget = 8;

    // usage and input errors (sysexits.h numbering)
    inline constexpr int usage = 64;          // bad options
    inline constexpr int bad_input = 65;      // a report that is not JSON, another schema, malformed
    inline constexpr int no_input = 66;       // a file or directory that does not exist
    inline constexpr int software = 70;       // an internal error (a bug: please report it)
    inline constexpr int out_of_memory = 71;  // memory ran out (the message says while doing what, with how large an input)
    inline constexpr int cannot_write = 73;   // the --json / -o output could not be written
    inline constexpr int io_error = 74;       // standard output could not be written (a full disk, a closed file)
    inline constexpr int not_permitted = 77;  // a report's command not run: not run here before, and no --run
    inline constexpr int not_executable = 126;
    inline constexpr int command_not_found = 127;
    inline constexpr int interrupted = 130;   // SIGINT (128 + signal number for others)
}

namespace xwarp::fronts
{
    class job_error;
}

namespace xwarp
{
    // The jobs' one map to exit codes: a front returns what these say, and decides none itself
    // (test_structure.py holds the CLI to it; its own are usage, output and internal errors).

    // A job refused (use_cases.hpp's job_error): its kind, as sysexits.h numbers it.
    int exit_code_for_refusal(const fronts::job_error& refused);

    // measure: 1 when no sample succeeded (a --budget's verdict is check's, judging.cpp).
    inline int exit_code_for_measure(const report& r)
    {
        return r.result.valid ? exit_code::ok : exit_code::all_samples_failed;
    }

    // warmup: 1 when it covers no identity (asked for a warm-up, and there is none to give) or
    // its --verify check did not verify.
    inline int exit_code_for_warmup(const warmup_plan& plan)
    {
        if (plan.covered == 0)
        {
            return exit_code::check_failed;
        }
        return plan.check && plan.check->verdict != warmup_verdict::verified ? exit_code::check_failed : exit_code::ok;
    }

    // A compare verdict's exit code: the fronts (CLI, magics) set comparison::exit_code with it.
    inline int exit_code_for(verdict v)
    {
        switch (v)
        {
            case verdict::improved: return exit_code::improved;
            case verdict::regressed: return exit_code::regressed;
            case verdict::invalid: return exit_code::invalid;
            case verdict::unverified: return exit_code::unverified;
            case verdict::not_comparable: return exit_code::not_comparable;
            default: return exit_code::inconclusive;
        }
    }
}

#endif
