// Before/after comparison: a compile-time gain counts only when the application still does
// the same work and the change is larger than the noise.
#ifndef XWARP_ANALYSIS_COMPARE_HPP
#define XWARP_ANALYSIS_COMPARE_HPP

#include <stdexcept>
#include <string>

#include "xwarp/model/comparison.hpp"

namespace xwarp
{
    // A side that cannot be compared at all (a failed run): one line for the user.
    class compare_input_error : public std::runtime_error
    {
    public:
        using std::runtime_error::runtime_error;
    };

    inline constexpr double noise_floor_fraction = 0.01;  // band >= 1% of the baseline median
    inline constexpr double noise_mad_factor = 2.0;       // band >= 2 x baseline MAD
    inline constexpr std::size_t rank_test_min_samples = 5;
    // Other processes keeping this many CPUs busy on average during a pass is a busy machine,
    // named beside an inconclusive wall clock.
    inline constexpr double busy_cpus_noted = 0.5;
    inline constexpr double significance_level = 0.05;

    // compare --until-settled: why this comparison needs no more samples, in words; empty when
    // more samples a side could still decide it (fewer than the rank test needs, or a difference
    // beyond the band that is not yet significant and could be within max_samples).
    std::string settled_because(const comparison& c, int max_samples);

    // Which clock decides: the one the build structure calls for (module work, compile
    // elapsed, warm module work: judge_clocks says why), or the command's cold wall, for a
    // change made to how a test suite runs (its workers, how they draw tests), where the wall
    // is what the change is for and module work is summed over processes.
    enum class deciding_clock
    {
        by_structure,
        cold_wall,
    };

    // Analyses both reports in place (the fronts render them next to the verdict) and compares
    // them. Throws compare_input_error when a side has no successful sample. The verdict's exit
    // code is the front's to set (fronts/exit_codes.hpp). Two runs whose cold passes started
    // from different caches are not comparable, but for the caches the change itself fills
    // (a lever that replays a kept cache).
    comparison compare_reports(report& before,
                               report& after,
                               const std::string& before_name,
                               const std::string& after_name,
                               deciding_clock clock = deciding_clock::by_structure,
                               const std::vector<cache_kind>& the_change_fills = {});

    // The same for two reports analysed already (analyze()), and perhaps since given only what
    // a comparison reads (keep_what_compare_reads).
    comparison compare_analyzed(const report& before,
                                const report& after,
                                const std::string& before_name,
                                const std::string& after_name,
                                deciding_clock clock = deciding_clock::by_structure,
                                const std::vector<cache_kind>& the_change_fills = {});

    // Throws compare_input_error, naming the side, when an analysed report has no successful
    // sample: checked by compare_analyzed, and by a front before it keeps a side.
    void require_comparable(const report& r, const std::string& name);

    // Frees what a comparison never reads of an analysed report: its findings and declined
    // levers, the summary's per-identity tables (identities, rebuilt groups, module totals,
    // launches per kernel, timeline spans), the warm passes' records, and the cold loads'
    // kernels, functions, LTO artifacts and spans. The figures, flags, samples and the cold
    // loads' identities, times and options stay. A front that compares two large reports holds
    // the first so while it reads and analyses the second.
    void keep_what_compare_reads(report& r);
}

#endif
