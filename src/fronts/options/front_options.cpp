#include "xwarp/fronts/options/front_options.hpp"

#include "xwarp/model/contracts.hpp"
#include "xwarp/fronts/options/validators.hpp"

namespace xwarp
{
    std::string lever_names()
    {
        std::string names;
        for (const auto& l : contract_levers())
        {
            names += (names.empty() ? "" : ", ") + l;
        }
        return names;
    }

    lever_choice parse_lever_choice(const std::string& spec)
    {
        lever_choice choice;
        std::string item;
        for (std::size_t i = 0; i <= spec.size(); ++i)
        {
            if (i < spec.size() && spec[i] != ',')
            {
                item += spec[i] == ' ' ? std::string() : std::string(1, spec[i]);
                continue;
            }
            if (item == "auto")
            {
                choice.automatic = true;
            }
            else if (!item.empty())
            {
                choice.levers.push_back(item);
            }
            item.clear();
        }
        return choice;
    }

    void add_lever_positional(CLI::App& app, lever_choice& choice, const std::string& help)
    {
        app.add_option_function<std::vector<std::string>>(
            "levers",
            [&choice](const std::vector<std::string>& words)
            {
                for (const auto& w : words)
                {
                    const lever_choice one = parse_lever_choice(w);
                    choice.automatic = choice.automatic || one.automatic;
                    choice.levers.insert(choice.levers.end(), one.levers.begin(), one.levers.end());
                }
            },
            help);
    }

    void add_probe_options(CLI::App& app, probe_request& r, front f)
    {
        app.add_option_function<std::string>(
               "--samples,-n",
               [&r](const std::string& text)
               {
                   r.until_settled = text == "auto";
                   r.samples = r.until_settled ? r.samples : std::stoi(text);  // a whole number: checked
               },
               "samples, each a cold and a warm pass: a number, or auto (until the measurement settles; with "
               "--whatif, from two a side until each replay's verdict settles; the report says why it stopped)")
            ->default_str("3")
            ->check(sample_count(1, 1000));
        app.add_option("--max-samples", r.max_samples,
                       "with --samples auto: the most samples it takes (a side, with --whatif; default 10)")
            ->default_val(default_max_samples)
            ->check(whole_number(2, 1000));
        app.add_option("--timeout", r.timeout_s, "seconds each pass may run before its processes are killed")
            ->check(positive_seconds());
        auto* whatif = app.add_option_function<std::string>(
            "--whatif", [&r](const std::string& spec) { r.whatif = parse_lever_choice(spec); },
                                      "replay levers on the unmodified program and measure each: auto (the levers of "
                                      "the findings"
                                          + std::string(f == front::notebook ? "; the default when given bare" : "")
                                          + ") or LEVER[,LEVER...] (" + lever_names() + ")");
        if (f == front::notebook)
        {
            whatif->expected(0, 1)->default_str("auto");
        }
        app.add_option("--whatif-budget", r.whatif_budget, "seconds of replays allowed (default: 6 x one cold run)")
            ->check(positive_seconds());
        app.add_flag("--nvrtc-trace", r.nvrtc_trace,
                     "turn Warp's compile_time_trace on in the measured processes (Warp 1.8+, CUDA builds through NVRTC "
                     "from CUDA 12.8) and keep NVRTC's per-module traces (in the JSON, and merged into the build "
                     "timeline's trace export); module hashes then differ from a run without it");
    }

    void add_replay_options(CLI::App& app, replay_request& r)
    {
        app.add_option("--samples,-n", r.samples, "samples a side (default: the run's)")->check(whole_number(1, 1000));
        app.add_flag("--until-settled", r.until_settled,
                     "after --samples a side, add a baseline sample and one of each lever whose verdict could still "
                     "change, round by round, until every verdict settled, --max-samples or the budget (compare "
                     "--until-settled's rule; each lever's result says how many it added and why it stopped)");
        app.add_option("--max-samples", r.max_samples, "with --until-settled: the most samples a side (default 10)")
            ->check(whole_number(2, 1000));
        app.add_flag("--reuse-baseline", r.reuse_baseline,
                     "judge the replays against the run's own samples, not fresh baseline samples (half the runs; the "
                     "machine may have changed since the run was measured)");
        app.add_option("--budget", r.budget_s, "seconds of replays allowed (default: 6 x one cold run)")
            ->check(positive_seconds());
        app.add_option("--timeout", r.timeout_s, "seconds each pass may run before its process group is killed")
            ->check(positive_seconds());
    }

    void add_fix_options(CLI::App& app, fix_request& o, front f)
    {
        app.add_option("--finding", o.finding, "only this finding: its number in the report (2) or its mechanism (CS-9)");
        app.add_option("--lever", o.lever, "only the findings of this lever: " + lever_names());
        // the default where the option is declared: the CLI writes the patches into a folder, a
        // notebook shows them
        if (f == front::cli && o.out_dir.empty())
        {
            o.out_dir = "xwarp-fixes";
        }
        app.add_option("--out", o.out_dir,
                       std::string("write each patch as DIR/<mechanism>-<lever>.patch")
                           + (f == front::cli ? " (default: ./xwarp-fixes)" : " (default: none; the patches are shown)"));
        app.add_flag("--verify", o.verify,
                     "prove each patch on a copy of the project (a clone sharing the repository's objects with the work "
                     "tree's changes, or a copy of the folder): the same command measured there, samples interleaved "
                     "with the unpatched program's, judged as compare judges (same launches, beyond the band): "
                     "verified, no-gain, regressed or invalid");
        app.add_flag("--all", o.all, "with --verify: the verified patches together, in ranked order, saying which stop "
                                     "paying once the others are in");
        app.add_flag("--apply", o.apply, "with --verify: apply the verified patches to the program's own files (nothing "
                                         "else is ever written there)");
        app.add_option("--samples,-n", o.samples, "with --verify: samples a side (default 2)")->check(whole_number(1, 100));
        app.add_option("--timeout", o.timeout_s, "with --verify: seconds each pass may run")->check(positive_seconds());
    }

    void add_warmup_options(CLI::App& app, warmup_request& o, front f)
    {
        // likewise: the CLI writes the file, a notebook shows it
        if (f == front::cli && o.out.empty())
        {
            o.out = "warp_warmup.py";
        }
        app.add_option("-o,--out", o.out,
                       std::string("write the warm-up runtime here, and the plan it builds from beside it (NAME.json: data, "
                                   "the part a re-measure changes)")
                           + (f == front::cli ? " (default: ./warp_warmup.py)" : " (default: none; the plan is shown)"));
        app.add_option("--workers", o.workers, "worker processes that build at a time in the file (default: the measured machine's CPU count, at most 16)")
            ->check(whole_number(1, 256));
        app.add_option("--device", o.device, "build for this CUDA device instead of the measured one (cuda:1); CPU builds stay");
        app.add_option("--arch", o.arch, "also build each CUDA module ahead of time for this architecture (86, 90; "
                                         "repeatable), through wp.compile_aot_module where the Warp supports it")
            ->check(whole_number(10, 1000));
        app.add_flag("--verify", o.verify,
                     "prove it: in fresh private caches run the warm-up (timed, with its workers), then the program on "
                     "that cache; a covered identity the program still builds fails the check, by module and hash");
        app.add_option("--samples,-n", o.samples, "with --verify: samples (default 2)")->check(whole_number(1, 100));
        app.add_option("--timeout", o.timeout_s, "with --verify: seconds each pass may run")->check(positive_seconds());
    }

    void add_run_kind_option(CLI::App& app, std::optional<run_kind>& target)
    {
        std::vector<std::string> words;
        std::string listed;
        for (const auto w : enum_words<run_kind>::words)
        {
            words.emplace_back(w);
            listed += (listed.empty() ? "" : ", ") + std::string(w);
        }
        app.add_option_function<std::string>(
               "--kind", [&target](const std::string& word) { target = parse_member<run_kind>(word); },
               "only runs of this kind: " + listed)
            ->check(CLI::IsMember(words));
    }
}
