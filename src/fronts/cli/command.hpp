// A warp-probe subcommand: one file each under cli/, listed once in main.cpp's table. A
// subcommand adds itself and its options to the app, and runs when it was the one parsed.
#ifndef XWARP_CLI_COMMAND_HPP
#define XWARP_CLI_COMMAND_HPP

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace xwarp::cli
{
    class subcommand
    {
    public:
        virtual ~subcommand() = default;

        // Adds the subcommand to the app; returns its node (parsed() says whether it was chosen).
        virtual CLI::App* add(CLI::App& app) = 0;

        // Its exit code (exit_codes.hpp).
        virtual int run() = 0;

        // A subcommand that runs a COMMAND of the user's (measure) returns where its words go:
        // everything from the first word that is not one of its options, or after "--".
        virtual std::vector<std::string>* command_words() { return nullptr; }
    };

    using subcommand_factory = std::unique_ptr<subcommand> (*)();

    std::unique_ptr<subcommand> measure_command();
    std::unique_ptr<subcommand> whatif_command();
    std::unique_ptr<subcommand> fix_command();
    std::unique_ptr<subcommand> warmup_command();
    std::unique_ptr<subcommand> compare_command();
    std::unique_ptr<subcommand> report_command();
    std::unique_ptr<subcommand> check_command();
    std::unique_ptr<subcommand> history_command();
    std::unique_ptr<subcommand> mechanisms_command();
    std::unique_ptr<subcommand> doctor_command();
}

#endif
