// A report is data, never a script. Replaying one (whatif, fix --verify, compare --until-settled,
// warmup and their magics) runs the command it holds and, for a warm-up file, what its records
// name; so a report runs without asking only when it is this user's own, and that is decided by
// its content, never by its resemblance to a run: a report file is the user's own when the SHA-256
// of its bytes is one this probe recorded in the user's run store when it wrote the file; a stored
// run (@ID, a label) when this machine's probe stored it from a measurement (measure, a probed
// cell), not from an import or a compare; a run of this notebook when this kernel measured it.
// Anything else (a copy edited by one byte included) is foreign: it is shown and needs --run, or a
// yes at a terminal. Decided here once for every front; render/text's what_a_replay_runs says what
// would run.
#ifndef XWARP_FRONTS_REPLAY_TRUST_HPP
#define XWARP_FRONTS_REPLAY_TRUST_HPP

#include <cstdint>
#include <string>

#include "xwarp/model/report.hpp"

namespace xwarp::fronts
{
    struct replay_check
    {
        bool ran_here = false;  // true: the user's own, it may run without asking
        std::string why;        // when not: why it counts as someone else's
    };

    // `history_option` is the front's --history value ("" when not given). Never throws: a store
    // that cannot be read is a reason to ask, not an error.
    replay_check check_report_file(const std::string& path, const std::string& history_option);
    replay_check check_stored_run(std::int64_t run_id, const std::string& history_option);

    // Writes a report this probe made to `path` (pretty JSON, beside it and renamed over it) and
    // records the SHA-256 of the bytes written in the run store, so that the file reads back as
    // the user's own. Throws what writing throws; a store that cannot record it is said in
    // `notes` (the file is written, and will read back as foreign).
    void write_own_report(const std::string& path, const report& r, const std::string& history_option,
                          std::vector<std::string>& notes);
}

#endif
