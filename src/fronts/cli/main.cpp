// warp-probe: the command-line front. One file per subcommand (command.hpp), listed once in the
// table below; this file parses and dispatches.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>

#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "command.hpp"
#include "shared.hpp"
#include "xwarp/jobs/usecases/exit_codes.hpp"
#include "xwarp/version.hpp"

namespace
{
    using namespace xwarp::cli;

    // Every subcommand, in the order --help lists them: one line each.
    const std::vector<subcommand_factory> subcommands = {
        measure_command,
        report_command,
        compare_command,
        doctor_command,
        whatif_command,
        fix_command,
        warmup_command,
        mechanisms_command,
        history_command,
        check_command,
    };

    const char* exit_code_help = R"(Exit codes:
  measure   0 measured (some samples may have failed: see the warnings)
            1 every sample failed (the command failed or timed out)
  measure   8 with --budget: a limit was exceeded (the output names the module)
  check     0 within the budget, 8 a limit was exceeded (the output names the module)
  history   0 printed; import: 65/66 when a file could not be read (the others are stored)
  compare   0 improved, 1 regressed, 2 invalid (workload changed, errors or failed samples),
            3 unverified (no launches recorded), 4 inconclusive (inside the noise band or not
            significant), 5 not-comparable (different Warp version, device or command),
            65 also for a report file that changed between compare's two readings of it
  whatif    0 replayed (each lever's verdict is in the output, not in the exit code)
  fix       0 patches written (each one's verdict is in the output, not in the exit code)
  warmup    0 file written (and with --verify: no covered identity built at run time),
            1 with --verify: a covered identity still built, or the warm-up or the program failed
  report    0 rendered
  doctor    0 facts printed (a missing Python or Warp is reported, not an error)
  mechanisms 0 listed
  all       64 bad options, 65 unreadable report (not JSON, other schema, malformed),
            66 missing file or directory, 70 internal error, 71 out of memory (says while
            reading what, and how large), 73 output not writable, 74 standard output not
            writable (a full disk: what was printed is incomplete),
            77 a report's command not run (whatif, fix --verify, warmup --verify, compare --until-settled: your
            history does not show you ran it here; it is shown, and --run runs it),
            126 command not executable, 127 command not found, 130 interrupted (SIGINT),
            128+N killed by signal N)";

    // Whether an option of `sub` takes a value (so the word after it is that value).
    bool takes_value(const CLI::App& sub, const std::string& word)
    {
        for (const CLI::Option* o : sub.get_options())
        {
            if (o->check_name(word) && o->get_items_expected_min() > 0)
            {
                return true;
            }
        }
        return false;
    }

    // Takes a subcommand's COMMAND out of the words before CLI11 sees them: after the
    // subcommand and its options (and their values), the first word that is not an option, or
    // everything after "--", is the command.
    void split_command(std::vector<std::string>& words, const CLI::App& sub, std::vector<std::string>& command)
    {
        std::size_t i = 1;
        while (i < words.size() && !words[i].empty() && words[i][0] == '-')
        {
            ++i;  // options before the subcommand (--help, --version)
        }
        for (++i; i < words.size(); ++i)
        {
            const std::string& w = words[i];
            if (w == "--" || w.empty() || w[0] != '-')
            {
                const std::size_t from = w == "--" ? i + 1 : i;
                command.assign(words.begin() + static_cast<long>(from), words.end());
                words.resize(i);
                return;
            }
            if (takes_value(sub, w))
            {
                ++i;  // its value, whatever it looks like
            }
        }
    }

    // A command's exit code, unless what it printed did not all reach standard output: a full
    // disk or a closed file left a truncated output behind, and 0 would call it complete. A
    // reader that went away (EPIPE: `| head`) wanted no more, and is not an error.
    int stdout_checked(int code)
    {
        errno = 0;
        if (std::fflush(stdout) != 0 || !std::cout.flush() || std::ferror(stdout))
        {
            // on a pipe or socket only the reader's leaving fails a write (its errno may be
            // gone by now, the write having failed earlier): no disk filled
            struct stat out{};
            if (errno == EPIPE || (::fstat(STDOUT_FILENO, &out) == 0 && (S_ISFIFO(out.st_mode) || S_ISSOCK(out.st_mode))))
            {
                return code;
            }
            const int err = errno;
            std::cout.clear();
            return fail(xwarp::exit_code::io_error, std::string("cannot write standard output: ")
                                                        + (err ? std::strerror(err) : "write error"));
        }
        return code;
    }

    // The subcommand named by the first word that is not an option, if any.
    std::string chosen_name(const std::vector<std::string>& words)
    {
        for (std::size_t i = 1; i < words.size(); ++i)
        {
            if (words[i].empty() || words[i][0] != '-')
            {
                return words[i];
            }
        }
        return {};
    }
}

int main(int argc, char** argv)
{
    CLI::App app{"warp-probe: measure, explain and compare NVIDIA Warp's cold-start compile time"};
    app.set_version_flag("--version", std::string("warp-probe ") + XWARP_VERSION);
    app.require_subcommand(1);
    app.footer(exit_code_help);

    std::vector<std::pair<std::unique_ptr<subcommand>, CLI::App*>> commands;
    for (const auto make : subcommands)
    {
        auto command = make();
        CLI::App* node = command->add(app);
        commands.emplace_back(std::move(command), node);
    }

    std::vector<std::string> words(argv, argv + argc);
    const std::string name = chosen_name(words);
    for (auto& [command, node] : commands)
    {
        if (node->get_name() == name && command->command_words())
        {
            split_command(words, *node, *command->command_words());
        }
    }
    std::vector<char*> cli_argv;
    for (auto& w : words)
    {
        cli_argv.push_back(w.data());
    }
    try
    {
        app.parse(static_cast<int>(cli_argv.size()), cli_argv.data());
    }
    catch (const CLI::ParseError& e)
    {
        const int code = app.exit(e);
        return code == 0 ? 0 : xwarp::exit_code::usage;
    }

    try
    {
        for (auto& [command, node] : commands)
        {
            if (node->parsed())
            {
                return stdout_checked(command->run());
            }
        }
    }
    catch (const std::bad_alloc&)
    {
        // the reports read so far are freed as the stack unwinds: the message has room again
        const std::string& doing = current_activity();
        return fail(xwarp::exit_code::out_of_memory,
                    "out of memory" + (doing.empty() ? std::string() : " while " + doing)
                        + ": give warp-probe more memory (ulimit -v, the container's limit) or a smaller input");
    }
    catch (const std::exception& e)
    {
        return fail(xwarp::exit_code::software, std::string("internal error: ") + e.what());
    }
    return xwarp::exit_code::usage;
}
