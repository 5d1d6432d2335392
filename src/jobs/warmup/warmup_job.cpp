// warp-probe warmup: plan, file, and the verification on fresh private caches.
#include "xwarp/jobs/warmup/warmup_job.hpp"

#include "xwarp/analysis/analyze.hpp"
#include "xwarp/model/json_io.hpp"

#include <algorithm>
#include <regex>
#include <cmath>
#include <fstream>
#include <set>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <tuple>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xwarp/analysis/summarize.hpp"
#include "xwarp/analysis/warmup_verdicts.hpp"
#include "xwarp/model/contracts.hpp"
#include "xwarp/model/digest.hpp"
#include "xwarp/model/format.hpp"
#include "xwarp/model/values.hpp"
#include "xwarp/engine/os/bounded_read.hpp"
#include "xwarp/engine/os/tempdir.hpp"
#include "xwarp/render/warmup_file.hpp"

namespace xwarp
{
    namespace
    {
        // Beside the target, renamed over it (save_streamed: a link, a device or a FIFO at the
        // name is refused, never written through).
        void write_file(const std::string& path, const std::string& text)
        {
            try
            {
                save_streamed(path, [&](std::ostream& out) { out << text; });
            }
            catch (const std::exception& e)
            {
                throw warmup_error("cannot write the warm-up file " + path + " (" + e.what() + ")", true);
            }
        }

        // Where warp-probe notes the SHA-256 of each plan it writes (the runtime's plan_ledger()
        // finds it the same way): a plan it lists builds on this machine without --trust-plan.
        std::string plan_ledger_path()
        {
            if (const char* explicit_path = std::getenv("XWARP_PLAN_LEDGER"); explicit_path && *explicit_path)
            {
                return explicit_path;
            }
            const char* data = std::getenv("XDG_DATA_HOME");
            const char* home = std::getenv("HOME");
            const std::string base = data && *data ? std::string(data) : std::string(home ? home : "") + "/.local/share";
            return base + "/xwarp/warmup-plans";
        }

        // One line, "SHA256 UNIX-TIME PLAN-PATH", appended to the ledger (a regular file of this
        // user's, never through a link). Returns why it was not, "" when it was.
        std::string note_plan(const std::string& digest, const std::string& plan_path)
        {
            const std::string ledger = plan_ledger_path();
            std::error_code ec;
            std::filesystem::create_directories(std::filesystem::path(ledger).parent_path(), ec);
            struct ::stat st
            {
            };
            if (::lstat(ledger.c_str(), &st) == 0 && (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid()))
            {
                return ledger + " is not a regular file of yours";
            }
            const int fd = ::open(ledger.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
            if (fd < 0)
            {
                return ledger + ": " + std::strerror(errno);
            }
            std::string path = plan_path;
            std::replace_if(path.begin(), path.end(), [](char c) { return c == '\n' || c == '\r'; }, '?');
            const std::string line = digest + " " + std::to_string(static_cast<long long>(std::time(nullptr))) + " " + path + "\n";
            const bool whole = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
            ::close(fd);
            return whole ? std::string() : ledger + ": the line was not written whole";
        }

        // The runtime, its plan beside it where the runtime looks for it, and a notebook cell's
        // code beside the plan; the plan's digest noted in the ledger.
        void write_runtime_and_plan(warmup_plan& plan, const std::string& runtime_path, bool note = true)
        {
            // every name checked before any is written: -o /dev/null writes no /dev/null.json
            std::vector<std::string> paths{runtime_path, warmup_plan_path(runtime_path)};
            if (plan.cell)
            {
                paths.push_back(warmup_cell_path(runtime_path));
            }
            for (const std::string& path : paths)
            {
                if (const std::string why = output_path_refused(path); !why.empty())
                {
                    throw warmup_error("cannot write the warm-up file " + path + ": " + why, true);
                }
            }
            write_file(runtime_path, warmup_runtime_text());
            if (plan.cell)
            {
                write_file(warmup_cell_path(runtime_path), plan.cell_code);
            }
            write_file(warmup_plan_path(runtime_path), plan.plan_text);
            plan.script_path = runtime_path;
            plan.plan_path = warmup_plan_path(runtime_path);
            plan.plan_digest = sha256_hex(plan.plan_text);
            if (note)
            {
                std::error_code ec;
                const std::string absolute = std::filesystem::absolute(plan.plan_path, ec).string();
                const std::string why = note_plan(plan.plan_digest, ec ? plan.plan_path : absolute);
                plan.ledger = why.empty() ? plan_ledger_path() : std::string();
                if (!why.empty())
                {
                    plan.notes.push_back("the plan was not noted as written here (" + why + "): the file builds it only with "
                                         "--trust-plan=" + plan.plan_digest);
                }
            }
        }

        // The Python that ran the program: the warm-up needs its Warp.
        std::string program_python(const report& saved, const measure_options& rerun)
        {
            if (!rerun.python.empty())
            {
                return rerun.python;
            }
            if (!saved.env.python_executable.empty())
            {
                return saved.env.python_executable;
            }
            return "python3";
        }

        // warmup --verify: in fresh private caches per sample, the warm-up, then the program on
        // the cache it filled; stops at the first sample that failed or an interrupt, and hands
        // the samples to the analysis's rules.
        warmup_check verify(const report& saved, const warmup_plan& plan, const measure_options& rerun, int samples,
                            const sampler_factory& make_sampler, run_observer* observer, const cancel_check& cancelled)
        {
            scoped_temp_dir files("xwarp-warmup-");
            const std::string script = files.path() + "/warp_warmup.py";
            warmup_plan written = plan;
            write_runtime_and_plan(written, script, false);  // trusted by its digest below, not by the ledger
            measure_options prime_options = rerun;
            prime_options.python.clear();
            // what the file says it did, target by target, is read after each warm-up pass
            prime_options.results_file = files.path() + "/results.json";
            // more workers write more precompiled headers: with two samples or more the file is
            // timed at its planned workers and at one, alternately, and the faster is kept
            std::vector<int> candidates{plan.workers};
            if (plan.workers > 1 && plan.covered > 1 && samples >= 2)
            {
                candidates.push_back(1);
            }
            std::vector<int> workers_per_sample;
            prime_options.samples = samples;
            measure_options program_options = rerun;
            program_options.samples = samples;
            const std::unique_ptr<sampler> program = make_sampler(program_options);

            std::vector<primed_sample> taken;
            std::vector<sample> cold_beside;  // the program cold and warm on fresh caches, interleaved
            bool interrupted = false;
            for (int i = 1; i <= samples; ++i)
            {
                // A cold run of the program timed beside the warm-up, on fresh private caches like
                // the warm-up's: the report's cold run was taken at another time, under another load.
                sample cold = program->run(i, {}, "", observer, cancelled);
                if (cold.cold.interrupted || (cold.warm && cold.warm->interrupted) || (cancelled && cancelled()))
                {
                    interrupted = true;
                    break;
                }
                cold_beside.push_back(std::move(cold));
                const int workers = candidates[static_cast<std::size_t>(i - 1) % candidates.size()];
                prime_options.command = {program_python(saved, rerun), script, "--trust-plan=" + written.plan_digest, "--root",
                                         plan.import_root, "--workers", std::to_string(workers), "--results",
                                         prime_options.results_file};
                workers_per_sample.push_back(workers);
                primed_sample s = program->run_primed(i, prime_options, observer, cancelled);
                if (s.prime.interrupted || s.program.cold.interrupted || (s.program.warm && s.program.warm->interrupted)
                    || (cancelled && cancelled()))
                {
                    interrupted = true;
                    break;
                }
                const bool failed = !s.prime.ok() || !s.program.ok();
                taken.push_back(std::move(s));
                if (failed)
                {
                    break;
                }
            }
            return judge_warmup(plan, taken, interrupted, rerun.timeout_s, saved.result.cold_module_ms.median, cold_beside,
                                workers_per_sample);
        }

        // The file a Python module of the program is imported from, under one of the folders the
        // run imported from: ROOT/a/b.py or ROOT/a/b/__init__.py for "a.b". "" when none holds it.
        std::string module_file(const std::string& module, const warmup_plan& plan)
        {
            std::string rel = module;
            std::replace(rel.begin(), rel.end(), '.', '/');
            std::vector<std::string> roots{plan.import_root};
            roots.insert(roots.end(), plan.import_paths.begin(), plan.import_paths.end());
            for (const auto& root : roots)
            {
                for (const std::string& candidate : {root + "/" + rel + ".py", root + "/" + rel + "/__init__.py"})
                {
                    if (is_plain_file(candidate))
                    {
                        return candidate;
                    }
                }
            }
            return {};
        }

        // Whether a module's source on disk defines `name` at its top (def, class or assignment).
        bool defines(const std::string& file, const std::string& name)
        {
            const bounded_read source = read_regular_file(file, 16u << 20);
            if (!source.ok)
            {
                return false;
            }
            const std::regex top(R"((^|\n)((async +)?def +|class +)?)" + name + R"(\b)");
            return std::regex_search(source.text, top);
        }

        // Whether a module's source imports Warp (a line that begins `import warp` or `from warp`):
        // the program's Warp code, where its kernels and factories live.
        bool uses_warp(const std::string& file)
        {
            const bounded_read source = read_regular_file(file, 16u << 20);
            static const std::regex warp_import(R"((^|\n)[ \t]*(import[ \t]+warp\b|from[ \t]+warp\b))");
            return source.ok && std::regex_search(source.text, warp_import);
        }

        // The report's names checked against the disk, when the file is written: every module a
        // covered target imports must be a file under the folders the program was imported from,
        // and every factory a name its module's source defines. A report is data: a name it gives
        // that is not the program's on this disk leaves its target to the program, with why.
        void check_on_disk(warmup_plan& plan)
        {
            const std::regex identifier("[A-Za-z_][A-Za-z0-9_]*");
            for (auto& t : plan.targets)
            {
                if (!t.covered)
                {
                    continue;
                }
                std::vector<std::pair<std::string, std::string>> names;  // module, the top name it must define ("" any)
                if (t.import_from != "__main__")
                {
                    names.emplace_back(t.import_from, t.kernel.substr(0, t.kernel.find('.')));
                }
                for (const auto& f : t.factories)
                {
                    const std::string module = field_or(f, "module", std::string());
                    const std::string qualname = field_or(f, "qualname", std::string());
                    if (warps_own_module(module))
                    {
                        // an installed Warp's modules are imported, never called: its tests' and
                        // examples' helpers included
                        t.why_not = "the report names a factory of " + module + ", Warp's own code: the file calls "
                                    "factories of the program and of installed packages only";
                        break;
                    }
                    names.emplace_back(module, qualname.substr(0, qualname.find('.')));
                }
                if (!t.why_not.empty())
                {
                    continue;
                }
                for (const auto& o : t.overloads)
                {
                    if (!o.module.empty() && o.module != "__main__")
                    {
                        names.emplace_back(o.module, o.kernel.substr(0, o.kernel.find('.')));
                    }
                }
                static const std::vector<std::string> never = never_the_programs();
                for (const auto& [module, name] : names)
                {
                    if (module == "__main__")
                    {
                        continue;
                    }
                    const std::string top = module.substr(0, module.find('.'));
                    if (std::find(never.begin(), never.end(), top) != never.end())
                    {
                        t.why_not = "the report names module " + module + ", of " + top
                                    + ", never the program's code: the file calls and imports only the program's Warp code";
                        break;
                    }
                    const std::string file = module_file(module, plan);
                    if (file.empty())
                    {
                        t.why_not = "the report names module " + module + ", which is not a file under the folders the program "
                                    "was imported from on this disk: the file builds only the program's own code";
                        break;
                    }
                    if (!name.empty() && (!std::regex_match(name, identifier) || !defines(file, name)))
                    {
                        t.why_not = "the report names " + module + "." + name + ", which " + file + " does not define";
                        break;
                    }
                    if (!uses_warp(file))
                    {
                        t.why_not = "the report names module " + module + " (" + file
                                    + "), which does not use Warp: the file calls and imports only the program's Warp code";
                        break;
                    }
                }
            }
        }
    }

    warmup_plan warmup(const report& saved, const std::string& source, const measure_options& rerun,
                       const warmup_request& job, run_observer* observer,
                       const cancel_check& cancelled, const sampler_factory& make_sampler)
    {
        report analysed = saved;
        analyze(analysed);
        warmup_plan plan;
        try
        {
            plan = plan_warmup(analysed, job, source);
        }
        catch (const std::invalid_argument& e)
        {
            throw warmup_error(e.what());
        }
        check_on_disk(plan);
        settle_warmup_plan(plan, analysed);
        if (const std::string wrong = contract_violation(contract::warmup_plan, warmup_plan_document(plan)); !wrong.empty())
        {
            throw std::logic_error("internal: the warm-up plan is outside its contract: " + wrong);
        }
        plan.plan_text = render_warmup_plan(plan);
        if (!job.out.empty())
        {
            // written even when it builds nothing, so that a CI step that runs it still runs (it
            // says so, and costs Warp's import)
            write_runtime_and_plan(plan, job.out);
        }
        if (plan.covered == 0)
        {
            plan.notes.push_back("the warm-up could build none of the run's identities (each NOT line says why)"
                                 + std::string(job.out.empty() ? "" : ": the file written builds nothing, and says so when run")
                                 + std::string(job.verify ? "; there is nothing to verify" : ""));
            return plan;
        }
        if (job.verify)
        {
            plan.check = verify(analysed, plan, rerun, std::max(1, job.samples), make_sampler, observer, cancelled);
            if (plan.check->workers_picked && *plan.check->workers_picked != plan.workers)
            {
                plan.notes.push_back("workers is " + std::to_string(*plan.check->workers_picked) + ", not "
                                     + std::to_string(plan.workers) + ": the file was faster so when --verify timed both");
                plan.workers = *plan.check->workers_picked;
                plan.plan_text = render_warmup_plan(plan);
                if (!job.out.empty())
                {
                    write_runtime_and_plan(plan, job.out);
                }
            }
        }
        return plan;
    }
}
