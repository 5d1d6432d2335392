// The two kinds of sampler: the real command, and passes recorded earlier (--replay-streams).
#include "xwarp/engine/runner/sampler.hpp"

#include <filesystem>
#include <fstream>

#include "xwarp/model/json_io.hpp"

namespace xwarp
{
    namespace fs = std::filesystem;

    command_sampler::command_sampler(const measure_options& options) : m_command(prepare_command(options)) {}

    int command_sampler::samples() const
    {
        return m_command.options.samples;
    }

    sample command_sampler::run(int index, const std::map<std::string, std::string>& extra_env, const std::string& variant,
                                run_observer* observer, const cancel_check& cancelled)
    {
        return run_sample(m_command, index, extra_env, variant, observer, cancelled);
    }

    sample command_sampler::run_on_kept_caches(int index, const std::vector<cache_kind>& keeps,
                                               const std::map<std::string, std::string>& extra_env, const std::string& variant,
                                               run_observer* observer, const cancel_check& cancelled)
    {
        return run_sample_on_kept_caches(m_command, index, keeps, extra_env, variant, observer, cancelled);
    }

    primed_sample command_sampler::run_primed(int index, const measure_options& prime, run_observer* observer,
                                              const cancel_check& cancelled)
    {
        // the prime command may change from sample to sample (warmup --verify tries worker counts)
        if (!m_prime || m_prime->options.command != prime.command)
        {
            m_prime = std::make_unique<prepared_command>(prepare_command(prime));
        }
        return run_primed_sample(m_command, *m_prime, index, observer, cancelled);
    }

    report command_sampler::report_of(std::vector<sample> samples) const
    {
        report r = make_report(m_command, std::move(samples));
        std::error_code ec;
        const fs::path facts_file = fs::path(m_command.options.keep_records_dir) / "run.json";
        // the first sampler of a recording writes the run's facts (the program as measured: fix's
        // and warmup's baseline report first); its variants' samples go beside them
        // (symlink_status: a link planted at the name is an entry, never followed; the facts are
        // written beside it and renamed over it)
        if (!m_command.options.keep_records_dir.empty() && !fs::exists(fs::symlink_status(facts_file, ec)))
        {
            report facts = r;
            facts.samples.clear();
            save_streamed(facts_file.string(), [&](std::ostream& out) { out << report_to_json(facts).dump(2) << "\n"; });
        }
        else if (!m_command.options.keep_records_dir.empty() && fs::is_symlink(fs::symlink_status(facts_file, ec)))
        {
            r.warnings.push_back(facts_file.string() + " is a symbolic link: the run's facts were not written through it (the "
                                                       "recording has no run.json of this run)");
        }
        return r;
    }

    std::vector<std::string> command_sampler::command_words() const
    {
        return m_command.options.command;
    }

    sampler_factory command_samplers()
    {
        return [](const measure_options& options) { return std::make_unique<command_sampler>(options); };
    }

    namespace
    {
        int recorded_count(const std::string& dir, const std::string& variant)
        {
            int n = 0;
            std::error_code ec;
            while (fs::is_directory(recorded_sample_dir(dir, variant, n + 1) + "/cold", ec))
            {
                ++n;
            }
            return n;
        }

        // A pass that did not run: what a command that cannot start gives.
        run_result not_recorded(const std::string& why)
        {
            run_result r;
            r.spawn_error = why;
            return r;
        }

        class recorded_sampler : public sampler
        {
        public:
            recorded_sampler(std::string dir, const measure_options& options) : m_dir(std::move(dir)), m_options(options)
            {
                try
                {
                    m_facts = load_report((fs::path(m_dir) / "run.json").string());
                }
                catch (const report_error& e)
                {
                    throw probe_error(probe_error::kind::usage,
                                      "--replay-streams " + m_dir + ": not a run recorded with --keep-records (" + e.what() + ")");
                }
                m_facts.samples.clear();
            }

            int samples() const override { return m_options.samples; }

            sample run(int index, const std::map<std::string, std::string>& /*extra_env*/, const std::string& variant,
                       run_observer* observer, const cancel_check& cancelled) override
            {
                sample s;
                s.index = index;
                const int n = recorded_count(m_dir, variant);
                if (cancelled && cancelled())
                {
                    s.cold.interrupted = true;
                    return s;
                }
                if (n == 0)
                {
                    s.cold = not_recorded("no recorded stream of " + (variant.empty() ? std::string("the program") : variant)
                                          + " under " + m_dir);
                    return s;
                }
                const std::string dir = recorded_sample_dir(m_dir, variant, (index - 1) % n + 1);
                s.cold = pass(dir + "/cold", index, variant, "cold", observer);
                std::error_code ec;
                if (fs::is_directory(dir + "/warm", ec))
                {
                    s.warm = pass(dir + "/warm", index, variant, "warm", observer);
                }
                return s;
            }

            primed_sample run_primed(int index, const measure_options& /*prime*/, run_observer* observer,
                                     const cancel_check& cancelled) override
            {
                primed_sample out;
                const int n = recorded_count(m_dir, "");
                std::error_code ec;
                const std::string prime_dir = n == 0 ? std::string() : recorded_sample_dir(m_dir, "", (index - 1) % n + 1) + "/warmup";
                if (prime_dir.empty() || !fs::is_directory(prime_dir, ec))
                {
                    out.prime = not_recorded("no recorded warm-up pass under " + m_dir);
                    return out;
                }
                out.prime = pass(prime_dir, index, "", "warmup", observer);
                if (out.prime.ok())
                {
                    out.program = run(index, {}, "primed", observer, cancelled);
                }
                return out;
            }

            report report_of(std::vector<sample> samples) const override
            {
                report r = m_facts;
                r.label = m_options.label.empty() ? r.label : m_options.label;
                r.samples = std::move(samples);
                r.run_settings.samples = static_cast<int>(r.samples.size());
                bool interrupted = false;
                for (const auto& s : r.samples)
                {
                    interrupted = interrupted || s.cold.interrupted || (s.warm && s.warm->interrupted);
                }
                r.warnings.push_back("replayed from the passes recorded in " + m_dir + " (--replay-streams): nothing ran");
                settle_status(r, interrupted);
                return r;
            }

            std::vector<std::string> command_words() const override { return m_facts.command; }

        private:
            run_result pass(const std::string& dir, int index, const std::string& variant, const std::string& phase,
                            run_observer* observer) const
            {
                const std::string shown = variant.empty() ? phase : phase + " [" + variant + "]";
                if (observer)
                {
                    observer->pass_started(index, m_options.samples, shown);
                }
                run_result r;
                try
                {
                    r = load_recorded_pass(dir);
                }
                catch (const std::exception& e)
                {
                    r = not_recorded(e.what());
                }
                if (observer)
                {
                    observer->pass_finished(index, m_options.samples, shown, r);
                }
                return r;
            }

            std::string m_dir;
            measure_options m_options;
            report m_facts;
        };
    }

    sampler_factory recorded_samplers(const std::string& dir)
    {
        return [dir](const measure_options& options) { return std::make_unique<recorded_sampler>(dir, options); };
    }

    report measure(sampler& source, int samples, run_observer* observer, const cancel_check& cancelled)
    {
        std::vector<sample> taken;
        for (int i = 1; i <= samples; ++i)
        {
            if (cancelled && cancelled())
            {
                break;
            }
            taken.push_back(source.run(i, {}, "", observer, cancelled));
            if (stop_sampling(taken.back(), cancelled))
            {
                break;
            }
            if (observer && i < samples)
            {
                observer->sample_finished(i, samples, source.report_of(taken));
            }
        }
        report r = source.report_of(std::move(taken));
        if (cancelled && cancelled() && r.status != run_status::interrupted)
        {
            settle_status(r, true);
        }
        return r;
    }
}
