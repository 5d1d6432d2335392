// A report analysed whole: what every front and job calls on a report it holds.
#ifndef XWARP_ANALYSIS_ANALYZE_HPP
#define XWARP_ANALYSIS_ANALYZE_HPP

#include "xwarp/model/report.hpp"

namespace xwarp
{
    // Runs every analysis step the report supports: the summary's figures, the diagnoses, the
    // build timeline, the what-if verdicts.
    void analyze(report& r);
}

#endif
