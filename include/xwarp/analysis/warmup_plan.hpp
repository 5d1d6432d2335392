// warp-probe warmup, the analysis half: which of a measured run's identities a warm-up file can
// build before the program runs (importing the modules that define them, registering the
// generic instances they held, setting the options they were built with), in what order, and
// why the others cannot be (a factory's kernel, the command's own __main__ script, a type that
// exists only at run time, a module that changed while the program ran). The render half
// (render/warmup_script.hpp) writes the file; warmup/warmup_job.hpp verifies it.
#ifndef XWARP_ANALYSIS_WARMUP_PLAN_HPP
#define XWARP_ANALYSIS_WARMUP_PLAN_HPP

#include <string>
#include <vector>

#include "xwarp/model/report.hpp"
#include "xwarp/model/run_request.hpp"
#include "xwarp/model/warmup.hpp"

namespace xwarp
{
    // The plan of an analysed report (`source`: its name, for the file's header) (one with a good sample); its targets are the identities
    // of the first good sample's cold pass, in load order. Throws std::invalid_argument when the
    // report has no good sample or recorded no identity with its content (an older xwarp, or
    // Warp's log alone).
    warmup_plan plan_warmup(const report& analysed, const warmup_request& request, const std::string& source = "");

    // The plan's figures and imports again after targets were refused (a why_not set): what it
    // covers, where the file imports from, its packages, and what it leaves to the program.
    void settle_warmup_plan(warmup_plan& plan, const report& analysed);
}

#endif
