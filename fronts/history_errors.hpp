// The history store's refusals in the fronts' terms: one mapping for every job that reads it.
#ifndef XWARP_FRONTS_HISTORY_ERRORS_HPP
#define XWARP_FRONTS_HISTORY_ERRORS_HPP

#include "xwarp/fronts/use_cases.hpp"
#include "xwarp/history/store.hpp"

namespace xwarp::fronts
{
    inline job_error from_history_error(const history_error& e)
    {
        const auto k = e.which();
        return job_error(k == history_error::kind::missing      ? job_error::kind::no_input
                         : k == history_error::kind::unreadable ? job_error::kind::bad_input
                                                                : job_error::kind::cannot_write,
                         e.what());
    }

    // A step that reads or writes the store, its history_error turned into job_error.
    template <typename F>
    auto reading_history(F&& step) -> decltype(step())
    {
        try
        {
            return step();
        }
        catch (const history_error& e)
        {
            throw from_history_error(e);
        }
    }
}

#endif
