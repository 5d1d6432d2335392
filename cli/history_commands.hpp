// warp-probe's history front: the `history` and `check` subcommands, and the pieces the other
// subcommands share with them (--history, reading "@ID" where a report path goes, storing a
// run and saying so). The store and the trend analysis live below, in the history and
// analysis layers; this file only parses, calls and prints.
#ifndef XWARP_CLI_HISTORY_COMMANDS_HPP
#define XWARP_CLI_HISTORY_COMMANDS_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "xwarp/model/report.hpp"
#include "xwarp/os/file_stamp.hpp"

namespace xwarp::cli
{
    // Prints "warp-probe: MESSAGE" (one line) on stderr and returns `code`: every front error.
    int fail(int code, const std::string& message);

    // Adds --history PATH|off to a subcommand.
    void add_history_option(CLI::App* sub, std::string& target);

    // Reads a report from a path, or from the store when `arg` is "@ID". Returns 0, or the
    // exit code after printing the error.
    int load_report_arg(const std::string& arg, const std::string& history_option, report& out);

    // What tells a second reading of `arg` whether it is still what load_report_arg read the
    // first time: a regular file's stamp, or an empty one for "@ID" (a stored run does not
    // change). nullopt for what can be read only once (standard input, a pipe) or not at all.
    std::optional<file_stamp> stamp_report_arg(const std::string& arg);

    // Stores an analysed run (measure, whatif, compare's sides). Notes (a store moved aside,
    // a store that could not be written) always go to stderr; "stored as @N" unless quiet.
    std::optional<std::int64_t> store_run(const std::string& history_option, const report& r, const std::string& kind,
                                          bool quiet);

    // Stores a comparison of two stored runs (quietly: compare's output is its verdict).
    void store_comparison(const std::string& history_option, std::int64_t before_run, std::int64_t after_run,
                          const std::string& verdict, const std::string& comparison_json);

    // Checks --budget against an analysed report and prints one line per limit. Returns 0, or
    // exit_code::over_budget.
    int print_budget(const report& r, const std::string& spec);

    // The `history ...` and `check` subcommands.
    struct history_commands
    {
        CLI::App* history = nullptr;
        CLI::App* list = nullptr;
        CLI::App* show = nullptr;
        CLI::App* trend = nullptr;
        CLI::App* diff = nullptr;
        CLI::App* import = nullptr;
        CLI::App* export_ = nullptr;
        CLI::App* table = nullptr;
        CLI::App* check = nullptr;

        std::string store_option;
        std::string label;
        std::string command;
        std::string machine;
        std::string kind;
        std::string module;
        int limit = 50;
        std::string run_a;
        std::string run_b;
        std::vector<std::string> files;
        std::string output;
        std::string by = "machine";
        std::string check_report;
        std::string budget;
    };

    void add_history_commands(CLI::App& app, history_commands& h);

    // Runs whichever of them was parsed; nothing when none was (returns std::nullopt).
    std::optional<int> run_history_commands(history_commands& h);
}

#endif
