// A report is data, never a script. Replaying one (whatif, fix --verify, compare --until-settled
// and their magics) runs the command it holds, so that command runs without asking only when
// this user ran that very command here through xwarp before: a run of it in this user's history
// store, made on this machine by measure, a magic, whatif or fix (an imported or compared file
// is not one). Anything else is shown and needs --run, or a yes at a terminal. Decided here once
// for both fronts; render/text's what_a_replay_runs says what would run.
#ifndef XWARP_FRONTS_REPLAY_TRUST_HPP
#define XWARP_FRONTS_REPLAY_TRUST_HPP

#include <string>

#include "xwarp/model/report.hpp"

namespace xwarp::fronts
{
    struct replay_check
    {
        bool ran_here = false;  // true: it may run without asking
        std::string why;        // when not: why it counts as someone else's ("the history store is off", ...)
    };

    // `history_option` is the front's --history value ("" when not given). Never throws: a store
    // that cannot be read is a reason to ask, not an error.
    replay_check check_replay(const report& saved, const std::string& history_option);
}

#endif
