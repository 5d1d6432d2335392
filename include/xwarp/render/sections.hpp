// The sections of a report, in the one order both renderers walk them: the text and the HTML
// say the same things in the same order. A renderer may draw a section as nothing (the text has
// no sparklines), never in another place.
#ifndef XWARP_RENDER_SECTIONS_HPP
#define XWARP_RENDER_SECTIONS_HPP

#include <vector>

namespace xwarp
{
    enum class report_section
    {
        header,          // command, cell, machine, status
        errors,
        flags,           // the summary's flags (BUILDS_OVERLAPPED, ...)
        warnings,
        no_statistics,   // when no sample succeeded: why, and the end of the report
        summary,         // the clocks and counts, median +- MAD
        conditions,      // the machine's load during the passes and the caches each started from
        findings,        // by time at stake
        whatif,          // the replays
        fixes,           // warp-probe fix's patches, with their verdicts
        declined,        // considered and declined
        identities,      // module identities by build time (the HTML adds its chart and identity map)
        rebuilt,         // modules built more than once
        timeline,        // the build timeline of the typical sample
        tests,           // a test suite's tests by build time paid, and its worker processes
        history,         // the run's series in the history store (HTML sparklines)
        launches,        // launches per kernel (HTML)
        sources,         // where each figure came from
    };

    inline const std::vector<report_section>& report_sections()
    {
        static const std::vector<report_section> order = {
            report_section::header,     report_section::errors,   report_section::flags,
            report_section::warnings,   report_section::no_statistics, report_section::summary,
            report_section::conditions,
            report_section::findings,   report_section::whatif,   report_section::fixes,
            report_section::declined,
            report_section::identities, report_section::rebuilt,  report_section::timeline,
            report_section::tests,
            report_section::history,    report_section::launches, report_section::sources,
        };
        return order;
    }

    // Without a successful sample a report ends at no_statistics.
    inline bool shown_without_statistics(report_section s)
    {
        return s == report_section::header || s == report_section::errors || s == report_section::flags
               || s == report_section::warnings || s == report_section::no_statistics;
    }
}

#endif
