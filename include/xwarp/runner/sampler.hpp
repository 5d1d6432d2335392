// What the sampling loops (--samples auto, what-if replays and their rounds, compare
// --until-settled) take their samples from: the real command, run in fresh subprocesses
// (command_sampler), or in the unit tests a script of recorded samples behind the same
// interface, so that each loop's stopping rule is tested without running Warp.
#ifndef XWARP_RUNNER_SAMPLER_HPP
#define XWARP_RUNNER_SAMPLER_HPP

#include <map>
#include <string>
#include <vector>

#include "xwarp/runner/runner.hpp"

namespace xwarp
{
    class sampler
    {
    public:
        virtual ~sampler() = default;

        // The N of "sample i of N" in progress lines: the most samples a loop may take a side.
        virtual int samples() const = 0;

        // One sample: a cold pass, then a warm pass on the cache it filled. extra_env reaches both
        // passes (a what-if lever's); variant names them ("" the baseline, else the lever).
        virtual sample run(int index, const std::map<std::string, std::string>& extra_env, const std::string& variant,
                           run_observer* observer, const cancel_check& cancelled) = 0;

        // The report around samples of this command (not analysed).
        virtual report report_of(std::vector<sample> samples) const = 0;

        // The command's words, as its reports give them.
        virtual std::vector<std::string> command_words() const = 0;
    };

    // The real command, checked and resolved once (throws probe_error when it cannot run).
    class command_sampler : public sampler
    {
    public:
        explicit command_sampler(const measure_options& options) : m_command(prepare_command(options)) {}

        int samples() const override { return m_command.options.samples; }

        sample run(int index, const std::map<std::string, std::string>& extra_env, const std::string& variant,
                   run_observer* observer, const cancel_check& cancelled) override
        {
            return run_sample(m_command, index, extra_env, variant, observer, cancelled);
        }

        report report_of(std::vector<sample> samples) const override { return make_report(m_command, std::move(samples)); }

        std::vector<std::string> command_words() const override { return m_command.options.command; }

    private:
        prepared_command m_command;
    };
}

#endif
