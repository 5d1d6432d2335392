// A sampler that plays samples back in order, one queue per variant ("" the baseline, else a
// lever), behind the interface the real command_sampler has: the sampling loops' stopping rules
// tested on recorded shim streams, without running Warp. Every call is kept for the tests to
// read (which variant, which index, in what order).
#ifndef XWARP_TESTS_SCRIPTED_SAMPLER_HPP
#define XWARP_TESTS_SCRIPTED_SAMPLER_HPP

#include <deque>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "xwarp/engine/runner/runner.hpp"
#include "xwarp/engine/runner/sampler.hpp"

namespace xwarp::testing
{
    class scripted_sampler : public sampler
    {
    public:
        struct call
        {
            std::string variant;
            int index = 0;
        };

        scripted_sampler(std::map<std::string, std::deque<sample>> script, int shown, std::vector<std::string> words = {"python", "prog.py"})
            : m_script(std::move(script)), m_shown(shown), m_words(std::move(words))
        {
        }

        int samples() const override { return m_shown; }

        sample run(int index, const std::map<std::string, std::string>& /*extra_env*/, const std::string& variant,
                   run_observer* /*observer*/, const cancel_check& /*cancelled*/) override
        {
            auto& queue = m_script[variant];
            if (queue.empty())
            {
                throw std::runtime_error("the script has no sample left for variant '" + variant + "' (call "
                                         + std::to_string(calls.size() + 1) + ")");
            }
            sample s = std::move(queue.front());
            queue.pop_front();
            s.index = index;
            calls.push_back({variant, index});
            return s;
        }

        report report_of(std::vector<sample> samples) const override
        {
            report r;
            r.command = m_words;
            r.run_settings.samples = static_cast<int>(samples.size());
            r.samples = std::move(samples);
            int good = 0;
            for (const auto& s : r.samples)
            {
                good += s.ok() ? 1 : 0;
            }
            r.status = good == 0 ? run_status::failed : good < static_cast<int>(r.samples.size()) ? run_status::partial : run_status::ok;
            return r;
        }

        // warmup --verify: the prime's pass is the cold pass of the next "prime" sample, the
        // program's the next "primed" sample (when the prime succeeded).
        primed_sample run_primed(int index, const measure_options& /*prime*/, run_observer* observer,
                                 const cancel_check& cancelled) override
        {
            primed_sample out;
            out.prime = run(index, {}, "prime", observer, cancelled).cold;
            if (out.prime.ok())
            {
                out.program = run(index, {}, "primed", observer, cancelled);
            }
            return out;
        }

        std::vector<std::string> command_words() const override { return m_words; }

        int taken(const std::string& variant) const
        {
            int n = 0;
            for (const auto& c : calls)
            {
                n += c.variant == variant ? 1 : 0;
            }
            return n;
        }

        std::vector<call> calls;

    private:
        std::map<std::string, std::deque<sample>> m_script;
        int m_shown;
        std::vector<std::string> m_words;
    };
}

#endif
