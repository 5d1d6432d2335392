// What the sampling loops (measure, --samples auto, what-if replays and their rounds, compare
// --until-settled, fix --verify, warmup --verify) take their samples from: the real command, run
// in fresh subprocesses (command_sampler), or samples recorded earlier with --keep-records
// (recorded_samplers: warp-probe's hidden --replay-streams, and the unit tests' scripts), behind
// one interface, so that each loop's rules are tested without running Warp. The jobs that sample
// take a sampler_factory; the fronts choose which.
#ifndef XWARP_RUNNER_SAMPLER_HPP
#define XWARP_RUNNER_SAMPLER_HPP

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "xwarp/engine/runner/runner.hpp"

namespace xwarp
{
    class sampler
    {
    public:
        virtual ~sampler() = default;

        // The N of "sample i of N" in progress lines: the most samples a loop may take a side.
        virtual int samples() const = 0;

        // One sample: a cold pass, then a warm pass on the cache it filled. extra_env reaches both
        // passes (a what-if lever's); variant names them ("" the program as measured, else the
        // lever, the patched copy's finding).
        virtual sample run(int index, const std::map<std::string, std::string>& extra_env, const std::string& variant,
                           run_observer* observer, const cancel_check& cancelled) = 0;

        // A lever that keeps caches: a cold pass of the command fills them, every other cache is
        // emptied, and the sample runs on what is left (run_sample_on_kept_caches). A recording
        // (or a script) already holds such samples under the variant: they are served as run().
        virtual sample run_on_kept_caches(int index, const std::vector<cache_kind>& keeps,
                                          const std::map<std::string, std::string>& extra_env, const std::string& variant,
                                          run_observer* observer, const cancel_check& cancelled)
        {
            (void)keeps;
            return run(index, extra_env, variant, observer, cancelled);
        }

        // warmup --verify: the prime command (the warm-up file) in fresh private caches first,
        // then this command's cold and warm passes on the cache it filled (variant "primed").
        virtual primed_sample run_primed(int index, const measure_options& prime, run_observer* observer,
                                         const cancel_check& cancelled) = 0;

        // The report around samples of this command (not analysed).
        virtual report report_of(std::vector<sample> samples) const = 0;

        // The command's words, as its reports give them.
        virtual std::vector<std::string> command_words() const = 0;
    };

    // Makes the sampler of a command (throws probe_error when the command cannot run).
    using sampler_factory = std::function<std::unique_ptr<sampler>(const measure_options& options)>;

    // The real command, checked and resolved once (throws probe_error when it cannot run).
    class command_sampler : public sampler
    {
    public:
        explicit command_sampler(const measure_options& options);

        int samples() const override;
        sample run(int index, const std::map<std::string, std::string>& extra_env, const std::string& variant,
                   run_observer* observer, const cancel_check& cancelled) override;
        primed_sample run_primed(int index, const measure_options& prime, run_observer* observer,
                                 const cancel_check& cancelled) override;
        sample run_on_kept_caches(int index, const std::vector<cache_kind>& keeps,
                                  const std::map<std::string, std::string>& extra_env, const std::string& variant,
                                  run_observer* observer, const cancel_check& cancelled) override;
        // With --keep-records, also writes the run's facts (run.json) beside the recorded samples,
        // unless a sampler of the same recording wrote them first.
        report report_of(std::vector<sample> samples) const override;
        std::vector<std::string> command_words() const override;

    private:
        prepared_command m_command;
        std::unique_ptr<prepared_command> m_prime;  // prepared at the first primed sample, again when it changes
    };

    // Samplers of the real commands.
    sampler_factory command_samplers();

    // Samplers that serve the passes recorded under `dir` with --keep-records (run.json, the
    // samples, variants/<name>/ for a lever or a patched copy, and "primed" with the warm-up's
    // passes) in place of running anything: sample i is the recording's ((i - 1) mod n) + 1.
    // A variant with no recording is a sample that could not start, saying so. Throws
    // probe_error when `dir` is not a recording.
    sampler_factory recorded_samplers(const std::string& dir);

    // measure: `samples` samples of one command (fewer when interrupted or it cannot start),
    // the report so far shown to the observer after each but the last. Not analysed.
    report measure(sampler& source, int samples, run_observer* observer, const cancel_check& cancelled);
}

#endif
