// warp-probe fix: plans (analysis), diffs (the fixer), and with --verify copies of the project
// patched and measured against the unpatched program, samples interleaved one by one.
#include "xwarp/fix/fix.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "xwarp/analysis/compare.hpp"
#include "xwarp/analysis/fixes.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/install/layout.hpp"
#include "xwarp/model/format.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/os/process.hpp"
#include "xwarp/os/tempdir.hpp"
#include "xwarp/runner/sampler.hpp"

namespace xwarp
{
    namespace fs = std::filesystem;
    using nlohmann::json;

    namespace
    {
        std::string read_file(const std::string& path)
        {
            std::ifstream in(path, std::ios::binary);
            std::ostringstream text;
            text << in.rdbuf();
            return text.str();
        }

        void write_file(const std::string& path, const std::string& text)
        {
            std::ofstream out(path, std::ios::binary | std::ios::trunc);
            out << text;
            if (!out.flush())
            {
                throw fix_error("cannot write " + path);
            }
        }

        std::map<std::string, std::string> current_environment()
        {
            std::map<std::string, std::string> env;
            for (char** e = environ; e && *e; ++e)
            {
                const std::string kv = *e;
                const auto eq = kv.find('=');
                if (eq != std::string::npos)
                {
                    env[kv.substr(0, eq)] = kv.substr(eq + 1);
                }
            }
            return env;
        }

        struct tool_run
        {
            bool ok = false;
            std::string out;
            std::string err;
        };

        // A short helper command (git, the fixer), its output kept in a private folder.
        tool_run run_tool(const std::string& exe, const std::vector<std::string>& args, const std::string& cwd,
                          const cancel_check& cancelled, double timeout_s = 120.0)
        {
            scoped_temp_dir tmp("xwarp-tool-");
            process_spec spec;
            spec.exe = exe.find('/') == std::string::npos ? find_executable(exe, std::getenv("PATH") ? std::getenv("PATH") : "") : exe;
            spec.args = args;
            spec.env = current_environment();
            spec.cwd = cwd;
            spec.stdout_path = tmp.path() + "/out";
            spec.stderr_path = tmp.path() + "/err";
            tool_run r;
            if (spec.exe.empty())
            {
                r.err = exe + ": not found";
                return r;
            }
            const process_outcome o = run_process(spec, timeout_s, cancelled, {});
            r.out = read_file(spec.stdout_path);
            r.err = read_file(spec.stderr_path);
            r.ok = o.exit_code && *o.exit_code == 0;
            if (!r.ok && r.err.empty())
            {
                r.err = o.spawn_error.empty() ? (o.timed_out ? "timed out" : "failed") : o.spawn_error;
            }
            return r;
        }

        std::string trimmed(std::string s)
        {
            while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' '))
            {
                s.pop_back();
            }
            return s;
        }

        // The Python the program ran with (its syntax is the one to parse), else python3.
        std::string fixer_python(const measure_options& rerun)
        {
            if (!rerun.python.empty())
            {
                return rerun.python;
            }
            if (!rerun.command.empty())
            {
                const std::string name = fs::path(rerun.command[0]).filename().string();
                if (name.rfind("python", 0) == 0)
                {
                    const fs::path p = fs::path(rerun.command[0]);
                    return p.is_relative() && rerun.command[0].find('/') != std::string::npos
                               ? (fs::path(rerun.cwd.empty() ? "." : rerun.cwd) / p).string()
                               : rerun.command[0];
                }
            }
            return "python3";
        }
    }

    std::string project_root(const std::string& folder)
    {
        const std::string dir = folder.empty() ? fs::current_path().string() : folder;
        const tool_run git = run_tool("git", {"-C", dir, "rev-parse", "--show-toplevel"}, dir, {}, 30.0);
        const std::string top = trimmed(git.out);
        std::error_code ec;
        return git.ok && !top.empty() ? fs::weakly_canonical(top, ec).string() : fs::weakly_canonical(dir, ec).string();
    }

    namespace
    {
        // The fixer's answer for these plans: {"fixes": [{id, patch, files, notes} | {id, reason}]}.
        json run_fixer(const std::vector<fix_plan>& plans, const report& analysed, const std::string& root,
                       const std::string& python, const fix_request& request, const cancel_check& cancelled)
        {
            const program_files files = program_files_of(analysed);
            json fixes = json::array();
            for (const auto& p : plans)
            {
                if (!p.ops.empty())
                {
                    fixes.push_back({{"id", p.id}, {"ops", p.ops}});
                }
            }
            if (fixes.empty())
            {
                return {{"fixes", json::array()}};
            }
            std::string fixer = request.fixer;
            if (fixer.empty())
            {
                const std::string shim = default_shim_dir();
                fixer = shim.empty() ? std::string() : (fs::path(shim).parent_path() / "fixer" / "xwarp_fix.py").string();
            }
            std::error_code ec;
            if (fixer.empty() || !fs::exists(fixer, ec))
            {
                throw fix_error("the fixer (share/xwarp/fixer/xwarp_fix.py) is not installed beside warp-probe");
            }
            scoped_temp_dir tmp("xwarp-fix-");
            const json request_json = {{"root", root},
                                       {"entry", files.entry},
                                       {"kernel_modules", files.kernel_modules},
                                       {"launch_sites", files.launch_sites},
                                       {"fixes", fixes}};
            write_file(tmp.path() + "/request.json", request_json.dump());
            const tool_run r = run_tool(python, {fixer, tmp.path() + "/request.json", tmp.path() + "/response.json"},
                                        root, cancelled);
            const json answer = json::parse(read_file(tmp.path() + "/response.json"), nullptr, false);
            if (!r.ok || answer.is_discarded() || !answer.is_object())
            {
                throw fix_error("the fixer could not run with " + python + ": " + r.err.substr(0, 2000));
            }
            return answer;
        }

        fix_result result_of(const fix_plan& p, const json& answer)
        {
            fix_result f;
            f.finding = p.finding_name();
            f.mechanism = p.mechanism;
            f.lever = p.lever;
            f.module = p.module;
            f.verdict = "no-patch";
            f.reason = p.no_form;
            for (const auto& a : answer.value("fixes", json::array()))
            {
                if (a.value("id", "") != p.id)
                {
                    continue;
                }
                f.patch = a.value("patch", "");
                f.files = a.value("files", std::vector<std::string>{});
                f.notes = a.value("notes", std::vector<std::string>{});
                f.reason = f.patch.empty() ? a.value("reason", std::string("the fixer wrote no patch")) : "";
                f.verdict = f.patch.empty() ? "no-patch" : "not-verified";
            }
            return f;
        }
    }
}

namespace xwarp
{
    namespace
    {
        bool skipped_in_copy(const fs::path& p)
        {
            const std::string name = p.filename().string();
            std::error_code ec;
            return name == "__pycache__" || name == ".pytest_cache" || name == ".mypy_cache" || name == ".git" || name == ".tox"
                   || name == ".nox" || (fs::is_directory(p, ec) && fs::exists(p / "pyvenv.cfg", ec));
        }

        void copy_tree(const fs::path& from, const fs::path& to)
        {
            fs::create_directories(to);
            for (const auto& e : fs::directory_iterator(from))
            {
                if (skipped_in_copy(e.path()) || e.is_symlink())
                {
                    continue;
                }
                if (e.is_directory())
                {
                    copy_tree(e.path(), to / e.path().filename());
                }
                else if (e.is_regular_file())
                {
                    fs::copy_file(e.path(), to / e.path().filename(), fs::copy_options::overwrite_existing);
                }
            }
        }

        // A copy of the project to patch. A git work tree: a clone that shares the repository's
        // objects (nothing is written into the user's repository), at its HEAD, with the work
        // tree's changes and its untracked files; otherwise the folder copied without caches and
        // environments.
        void copy_project(const std::string& root, const std::string& dest, const cancel_check& cancelled)
        {
            const tool_run head = run_tool("git", {"-C", root, "rev-parse", "--verify", "HEAD"}, root, cancelled, 30.0);
            const tool_run clone = head.ok ? run_tool("git", {"clone", "--quiet", "--shared", "--no-checkout", root, dest}, root, cancelled)
                                           : tool_run{};
            if (!head.ok || !clone.ok)
            {
                fs::remove_all(dest);
                copy_tree(root, dest);
                return;
            }
            if (!run_tool("git", {"-C", dest, "checkout", "--quiet", "--detach", trimmed(head.out)}, dest, cancelled).ok)
            {
                throw fix_error("could not check out " + trimmed(head.out) + " in the copy of " + root);
            }
            const tool_run changes = run_tool("git", {"-C", root, "diff", "--binary", "HEAD"}, root, cancelled);
            if (changes.ok && !changes.out.empty())
            {
                write_file(dest + "/.xwarp-worktree.diff", changes.out);
                const bool applied = run_tool("git", {"-C", dest, "apply", "--binary", ".xwarp-worktree.diff"}, dest, cancelled).ok;
                fs::remove(dest + "/.xwarp-worktree.diff");
                if (!applied)
                {
                    throw fix_error("the work tree's changes to " + root + " did not apply to its copy");
                }
            }
            const tool_run untracked = run_tool("git", {"-C", root, "ls-files", "--others", "--exclude-standard", "-z"}, root, cancelled);
            std::istringstream names(untracked.out);
            std::string name;
            while (std::getline(names, name, '\0'))
            {
                if (!name.empty() && !skipped_in_copy(fs::path(root) / name))
                {
                    fs::create_directories((fs::path(dest) / name).parent_path());
                    fs::copy_file(fs::path(root) / name, fs::path(dest) / name, fs::copy_options::overwrite_existing);
                }
            }
        }

        // A path into the project, as the same path in the copy when the copy has it (a
        // virtual environment inside the project is not copied: it stays where it is).
        std::string mapped(const std::string& word, const std::string& cwd, const std::string& root, const std::string& copy)
        {
            if (word.empty() || word[0] == '-')
            {
                return word;
            }
            std::error_code ec;
            const fs::path p = fs::path(word).is_absolute() ? fs::path(word) : fs::path(cwd) / word;
            if (!fs::exists(p, ec))
            {
                return word;
            }
            const fs::path abs = fs::weakly_canonical(p, ec);
            const fs::path rel = abs.lexically_relative(root);
            if (rel.empty() || *rel.begin() == "..")
            {
                return word;
            }
            const fs::path there = fs::path(copy) / rel;
            return fs::exists(there, ec) ? there.string() : abs.string();
        }

        // The command of the measured report, run in the copy.
        measure_options in_copy(measure_options options, const std::string& root, const std::string& copy)
        {
            const std::string cwd = options.cwd.empty() ? fs::current_path().string() : options.cwd;
            for (auto& word : options.command)
            {
                word = mapped(word, cwd, root, copy);
            }
            if (!options.python.empty())
            {
                options.python = mapped(options.python, cwd, root, copy);
            }
            std::string pythonpath = options.extra_env.count("PYTHONPATH") ? options.extra_env["PYTHONPATH"]
                                                                            : (std::getenv("PYTHONPATH") ? std::getenv("PYTHONPATH") : "");
            std::string out;
            std::istringstream parts(pythonpath);
            std::string part;
            while (std::getline(parts, part, ':'))
            {
                out += (out.empty() ? "" : ":") + mapped(part, cwd, root, copy);
            }
            if (!pythonpath.empty())
            {
                options.extra_env["PYTHONPATH"] = out;
            }
            options.cwd = mapped(cwd, cwd, root, copy);
            options.keep_records_dir.clear();
            return options;
        }

        std::string verdict_of(const comparison& c)
        {
            if (c.verdict == "improved")
            {
                return "verified";
            }
            if (c.verdict == "regressed")
            {
                return "regressed";
            }
            if (c.verdict == "invalid" || c.verdict == "not-comparable")
            {
                return "invalid";
            }
            return "no-gain";
        }

        void judged(fix_result& f, const report& baseline, const report& patched)
        {
            try
            {
                report before = baseline;
                report after = patched;
                const comparison c = compare_reports(before, after, "unpatched", "patched " + f.finding);
                f.verdict = verdict_of(c);
                f.samples = static_cast<int>(patched.samples.size());
                for (const auto& k : c.clocks)
                {
                    if (k.clock == c.decided_by)
                    {
                        f.saving_ms = k.delta_ms ? std::optional<double>(-*k.delta_ms) : std::nullopt;
                        f.band_ms = k.band_ms;
                        f.clock = k.clock == "compile_elapsed_ms" ? "compile elapsed"
                                  : k.clock == "warm_module_ms"   ? "warm module work"
                                                                  : "cold module work";
                    }
                }
                std::string reasons;
                for (const auto& r : c.reasons)
                {
                    reasons += (reasons.empty() ? "" : "; ") + r;
                }
                f.reason = reasons;
            }
            catch (const compare_input_error& e)
            {
                f.verdict = "invalid";
                f.reason = std::string("the patched program failed in every sample: ") + e.what();
            }
        }
    }
}

namespace xwarp
{
    namespace
    {
        // One patched copy of the project, sampled beside the baseline.
        struct patched_copy
        {
            std::string name;
            std::unique_ptr<scoped_temp_dir> tmp;
            std::unique_ptr<command_sampler> sampler;
            std::vector<sample> samples;
            std::string failed;  // why it could not be measured
        };

        patched_copy make_copy(const std::string& name, const std::string& patch, const std::string& root,
                               const measure_options& rerun, const cancel_check& cancelled)
        {
            patched_copy c;
            c.name = name;
            c.tmp = std::make_unique<scoped_temp_dir>("xwarp-fixcopy-");
            const std::string dest = c.tmp->path() + "/project";
            try
            {
                copy_project(root, dest, cancelled);
                write_file(c.tmp->path() + "/fix.patch", patch);
                const tool_run applied = run_tool("git", {"apply", "--whitespace=nowarn", c.tmp->path() + "/fix.patch"}, dest, cancelled);
                if (!applied.ok)
                {
                    c.failed = "the patch did not apply to a clean copy of the project: " + trimmed(applied.err).substr(0, 500);
                    return c;
                }
                c.sampler = std::make_unique<command_sampler>(in_copy(rerun, root, dest));
            }
            catch (const std::exception& e)
            {
                c.failed = std::string("the patched copy could not be prepared: ") + e.what();
            }
            return c;
        }

        // The baseline and each copy, a sample at a time, round by round (baseline i, then each
        // copy's i): a slow stretch of the machine lands on all. False when interrupted.
        bool sample_interleaved(sampler& baseline, std::vector<sample>& baseline_samples, std::vector<patched_copy>& copies,
                                int samples, run_observer* observer, const cancel_check& cancelled)
        {
            for (int i = 1; i <= samples; ++i)
            {
                baseline_samples.push_back(baseline.run(i, {}, "", observer, cancelled));
                if (stop_sampling(baseline_samples.back(), cancelled))
                {
                    return false;
                }
                for (auto& c : copies)
                {
                    if (!c.sampler)
                    {
                        continue;
                    }
                    c.samples.push_back(c.sampler->run(i, {}, c.name, observer, cancelled));
                    if (stop_sampling(c.samples.back(), cancelled))
                    {
                        return false;
                    }
                }
            }
            return true;
        }

        measure_options shown(measure_options o, int samples)
        {
            o.samples = samples;
            return o;
        }

        // Each patch on a copy of its own, against fresh baseline samples interleaved with them.
        bool verify_each(std::vector<fix_result>& results, const std::string& root, const measure_options& rerun,
                         const fix_request& request, run_observer* observer, const cancel_check& cancelled)
        {
            std::vector<patched_copy> copies;
            std::vector<fix_result*> of_copy;
            for (auto& f : results)
            {
                if (f.patch.empty())
                {
                    continue;
                }
                copies.push_back(make_copy(f.finding, f.patch, root, shown(rerun, request.samples), cancelled));
                of_copy.push_back(&f);
            }
            if (copies.empty())
            {
                return true;
            }
            command_sampler baseline(shown(rerun, request.samples));
            std::vector<sample> baseline_samples;
            const bool completed = sample_interleaved(baseline, baseline_samples, copies, request.samples, observer, cancelled);
            if (!completed)
            {
                return false;
            }
            const report base = baseline.report_of(std::move(baseline_samples));
            for (std::size_t i = 0; i < copies.size(); ++i)
            {
                if (!copies[i].sampler)
                {
                    of_copy[i]->verdict = "invalid";
                    of_copy[i]->reason = copies[i].failed;
                    continue;
                }
                judged(*of_copy[i], base, copies[i].sampler->report_of(std::move(copies[i].samples)));
            }
            return true;
        }

        // The fixer's combined patch of these fixes' operations (one diff: the edits of several
        // fixes to one file made together).
        std::string combined_patch(const std::vector<const fix_plan*>& plans, const report& analysed, const std::string& root,
                                   const std::string& python, const fix_request& request, const cancel_check& cancelled,
                                   std::string& why)
        {
            fix_plan together;
            together.id = "together";
            for (const auto* p : plans)
            {
                for (const auto& op : p->ops)
                {
                    together.ops.push_back(op);
                }
            }
            const json answer = run_fixer({together}, analysed, root, python, request, cancelled);
            for (const auto& a : answer.value("fixes", json::array()))
            {
                why = a.value("reason", std::string());
                return a.value("patch", std::string());
            }
            why = "the fixer wrote nothing";
            return {};
        }
    }
}

namespace xwarp
{
    namespace
    {
        const fix_plan* plan_of(const std::vector<fix_plan>& plans, const fix_result& f)
        {
            for (const auto& p : plans)
            {
                if (p.finding_name() == f.finding)
                {
                    return &p;
                }
            }
            return nullptr;
        }

        // --all: the verified patches together, in ranked order: step k is patches 1..k applied
        // together, each step judged against the one before it, so that a patch that stops
        // paying once the others are in says so.
        bool verify_together(std::vector<fix_result>& results, const std::vector<fix_plan>& plans, const report& analysed,
                             const std::string& root, const std::string& python, const measure_options& rerun,
                             const fix_request& request, run_observer* observer, const cancel_check& cancelled)
        {
            std::vector<fix_result*> verified;
            std::vector<const fix_plan*> chosen;
            std::vector<patched_copy> steps;
            for (auto& f : results)
            {
                const fix_plan* p = plan_of(plans, f);
                if (f.verdict != "verified" || !p)
                {
                    continue;
                }
                verified.push_back(&f);
                chosen.push_back(p);
                std::string why;
                const std::string patch = combined_patch(chosen, analysed, root, python, request, cancelled, why);
                steps.push_back(patch.empty() ? patched_copy{f.finding, nullptr, nullptr, {}, "they do not combine: " + why}
                                              : make_copy(f.finding, patch, root, shown(rerun, request.samples), cancelled));
            }
            if (verified.size() < 2)
            {
                return true;
            }
            command_sampler baseline(shown(rerun, request.samples));
            std::vector<sample> baseline_samples;
            if (!sample_interleaved(baseline, baseline_samples, steps, request.samples, observer, cancelled))
            {
                return false;
            }
            report before = baseline.report_of(std::move(baseline_samples));
            for (std::size_t k = 0; k < steps.size(); ++k)
            {
                if (!steps[k].sampler)
                {
                    verified[k]->together = "not measured with the ones before it: " + steps[k].failed;
                    continue;
                }
                report after = steps[k].sampler->report_of(std::move(steps[k].samples));
                fix_result marginal;
                marginal.finding = verified[k]->finding;
                judged(marginal, before, after);
                const std::string saving = marginal.saving_ms ? format_ms(std::fabs(*marginal.saving_ms)) : "n/a";
                verified[k]->together = k == 0 ? "first in the ranked order: " + marginal.verdict + ", " + saving
                                        : marginal.verdict == "verified"
                                            ? "still pays with the " + std::to_string(k) + " before it applied: -" + saving + " " + marginal.clock
                                            : "stops paying once the " + std::to_string(k) + " before it are applied (" + marginal.verdict
                                                  + (marginal.saving_ms ? ", " + std::string(*marginal.saving_ms >= 0 ? "-" : "+") + saving : "")
                                                  + ")";
                before = std::move(after);
            }
            return true;
        }

        // The files the patches edit, as they were when the fixer wrote the patches: --apply
        // applies only to exactly these (the patch verified is the patch applied).
        std::map<std::string, std::string> patched_files(const std::vector<fix_result>& results, const std::string& root)
        {
            std::map<std::string, std::string> files;
            for (const auto& f : results)
            {
                for (const auto& rel : f.files)
                {
                    const std::string path = (fs::path(root) / rel).string();
                    files.emplace(path, read_file(path));
                }
            }
            return files;
        }

        // The first of those files whose bytes are no longer the ones the patches were made from.
        std::string changed_since(const std::map<std::string, std::string>& files)
        {
            for (const auto& [path, text] : files)
            {
                std::error_code ec;
                if (!fs::is_regular_file(path, ec) || read_file(path) != text)
                {
                    return path;
                }
            }
            return {};
        }

        // --apply: the verified patches, together, into the program's own files: checked first,
        // applied whole or not at all.
        void apply_verified(std::vector<fix_result>& results, const std::vector<fix_plan>& plans, const report& analysed,
                            const std::string& root, const std::string& python, const fix_request& request,
                            const cancel_check& cancelled, std::vector<std::string>& notes)
        {
            std::vector<const fix_plan*> chosen;
            for (const auto& f : results)
            {
                const fix_plan* p = plan_of(plans, f);
                if (f.verdict == "verified" && p && f.together.rfind("stops paying", 0) != 0)
                {
                    chosen.push_back(p);
                }
            }
            if (chosen.empty())
            {
                notes.push_back("--apply: no verified patch, so nothing was applied");
                return;
            }
            std::string why;
            const std::string patch = combined_patch(chosen, analysed, root, python, request, cancelled, why);
            scoped_temp_dir tmp("xwarp-apply-");
            write_file(tmp.path() + "/verified.patch", patch);
            if (patch.empty() || !run_tool("git", {"apply", "--check", tmp.path() + "/verified.patch"}, root, cancelled).ok
                || !run_tool("git", {"apply", tmp.path() + "/verified.patch"}, root, cancelled).ok)
            {
                notes.push_back("--apply: the verified patches did not apply to " + root + " as they are now"
                                + (why.empty() ? std::string() : " (" + why + ")") + ": nothing was changed");
                return;
            }
            for (auto& f : results)
            {
                const fix_plan* p = plan_of(plans, f);
                f.applied = p && std::find(chosen.begin(), chosen.end(), p) != chosen.end();
            }
            notes.push_back("--apply: " + std::to_string(chosen.size()) + " verified patch(es) applied to " + root);
        }

        void write_patches(std::vector<fix_result>& results, const std::vector<fix_plan>& plans, const std::string& dir)
        {
            if (dir.empty())
            {
                return;
            }
            std::error_code ec;
            fs::create_directories(dir, ec);
            if (ec && !fs::is_directory(dir))
            {
                throw fix_write_error("cannot write the patches into " + dir + ": " + ec.message());
            }
            for (auto& f : results)
            {
                const fix_plan* p = plan_of(plans, f);
                if (f.patch.empty() || !p)
                {
                    continue;
                }
                f.patch_file = (fs::path(dir) / (p->id + ".patch")).string();
                try
                {
                    // beside the target, renamed over it: a symlink planted at the name is replaced
                    save_streamed(f.patch_file, [&](std::ostream& out) { out << f.patch; });
                }
                catch (const std::exception& e)
                {
                    throw fix_write_error(e.what());
                }
            }
        }
    }

    report fix_report(const report& saved, const measure_options& rerun, const fix_request& request,
                      run_observer* observer, const cancel_check& cancelled)
    {
        if (request.apply && !request.verify)
        {
            throw fix_error("--apply applies only verified patches: add --verify");
        }
        if (request.all && !request.verify)
        {
            throw fix_error("--all verifies the verified patches together: add --verify");
        }
        report analysed = saved;
        analyze(analysed);
        const std::vector<fix_plan> plans = plan_fixes(analysed, request.finding, request.lever);
        const std::string root = request.root.empty() ? project_root(rerun.cwd) : request.root;
        const std::string python = request.fixer_python.empty() ? fixer_python(rerun) : request.fixer_python;
        const json answer = run_fixer(plans, analysed, root, python, request, cancelled);
        analysed.fixes.clear();
        for (const auto& p : plans)
        {
            analysed.fixes.push_back(result_of(p, answer));
        }
        write_patches(analysed.fixes, plans, request.out_dir);
        const std::map<std::string, std::string> as_verified = request.apply ? patched_files(analysed.fixes, root)
                                                                             : std::map<std::string, std::string>{};
        bool completed = !request.verify || verify_each(analysed.fixes, root, rerun, request, observer, cancelled);
        if (completed && request.all)
        {
            completed = verify_together(analysed.fixes, plans, analysed, root, python, rerun, request, observer, cancelled);
        }
        if (completed && request.apply)
        {
            if (const std::string changed = changed_since(as_verified); !changed.empty())
            {
                analysed.warnings.push_back("--apply: " + changed + " changed while the patches were verified: nothing was "
                                            "applied (the verified patches are for the files as they were; run fix again)");
            }
            else
            {
                apply_verified(analysed.fixes, plans, analysed, root, python, request, cancelled, analysed.warnings);
            }
        }
        if (!completed)
        {
            analysed.status = "interrupted";
        }
        return analysed;
    }
}
