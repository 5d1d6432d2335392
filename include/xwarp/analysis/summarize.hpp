// From measured samples to the summary: medians and MADs, module identities across all
// samples, modules built more than once, and the flags the text and HTML reports show.
#ifndef XWARP_ANALYSIS_SUMMARIZE_HPP
#define XWARP_ANALYSIS_SUMMARIZE_HPP

#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "xwarp/model/report.hpp"
#include "xwarp/model/tuple_hash.hpp"

namespace xwarp
{
    // Thresholds, named so that the guide (references/measurement.md) can cite them.
    inline constexpr double overlap_flag_threshold = 1.15;      // BUILDS_OVERLAPPED above this
    inline constexpr double warm_reuse_threshold = 0.25;        // CACHE_NOT_REUSED above this share
    inline constexpr double small_share_threshold = 0.10;       // COMPILE_SMALL_SHARE below this
    inline constexpr double link_dominated_threshold = 0.50;    // LINK_DOMINATED above this share

    // (module, hash, device, block_dim): a module identity, as views of the load's strings (valid
    // while the report holding the load is: the tables keyed by it live inside one analysis).
    // Copying three heap strings per load per table was a fifth of a large report's analysis.
    using identity_key = std::tuple<std::string_view, std::string_view, std::string_view, int>;
    // Tables keyed by it hash it with tuple_hash; those iterated for output stay ordered or
    // follow an order vector.
    identity_key key_of(const module_load& l);

    // Fills r.result (the summary) from r.samples, its build timeline included. Safe to re-run
    // on a loaded report.
    void summarize(report& r);

    // What summarize_figures makes: the figures and the tables by identity (identities, module
    // totals, rebuilt groups and why each hash moved, launches per kernel), or the figures alone
    // (statistics, sources, flags, warnings): all that compare reads of a side.
    enum class summary_scope
    {
        whole,
        figures,
    };

    // Its two halves, for analyze: every figure but the timeline, then (from those figures) the
    // timeline of the typical sample. analyze draws the timeline after the diagnosis, which never reads it: at
    // 100,000 identities its spans (35 MB) and the detectors' context (41 MB) were held at once.
    void summarize_figures(report& r, summary_scope scope = summary_scope::whole);
    void draw_timeline(report& r);

    // A one-line description of why a pass failed ("exited with code 1", "timed out after 5 s").
    std::string describe_failure(const run_result& run, std::optional<double> timeout_s);

    // --samples auto: whether the samples so far have settled, and why (empty: not yet). They
    // have when at least two succeeded, every good sample loaded the same module identities,
    // and the median cold module work is known (95% half-width of a median, from the MAD)
    // to within the band compare judges changes by, max(1% of it, 2 x MAD): with the spread
    // dominating that takes four samples, fewer when the samples agree within 1%.
    std::string sampling_settled(const std::vector<sample>& samples);
}

#endif
