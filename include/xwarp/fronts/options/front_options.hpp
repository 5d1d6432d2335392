// The options the probing fronts share, with their help texts, defined once: measure and the
// probe magics (--samples, --max-samples, --timeout, --whatif, --whatif-budget, --nvrtc-trace),
// whatif and %warp_whatif (the replay options).
#ifndef XWARP_FRONT_OPTIONS_FRONT_OPTIONS_HPP
#define XWARP_FRONT_OPTIONS_FRONT_OPTIONS_HPP

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "xwarp/model/history.hpp"
#include "xwarp/model/run_request.hpp"

namespace xwarp
{
    // Which front an option is added to: where they differ (a notebook's --whatif may be given
    // bare, meaning auto), the help says so.
    enum class front
    {
        cli,
        notebook,
    };

    void add_probe_options(CLI::App& app, probe_request& request, front f);

    // The options after the run (--samples, --until-settled, --max-samples, --reuse-baseline,
    // --budget, --timeout); the levers are a positional the front adds after its run argument.
    void add_replay_options(CLI::App& app, replay_request& request);
    // That positional: LEVER... or auto (the levers of the findings, also when none is named).
    void add_lever_positional(CLI::App& app, lever_choice& choice, const std::string& help);

    // "auto", "LEVER[,LEVER...]" or both ("auto,pch-off"), as --whatif takes it.
    lever_choice parse_lever_choice(const std::string& spec);

    // fix and %warp_fix: which findings, where the patches go, and how they are proved.
    void add_fix_options(CLI::App& app, fix_request& request, front f);

    // warmup and %warp_warmup.
    void add_warmup_options(CLI::App& app, warmup_request& request, front f);

    // --kind KIND of the history listings: one of the kinds a run is stored as.
    void add_run_kind_option(CLI::App& app, std::optional<run_kind>& target);

    // "backward-off, pch-off, ...": the levers the shim-inputs contract names, for help texts.
    std::string lever_names();
}

#endif
