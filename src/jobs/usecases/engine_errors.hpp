// The engine's refusals in the fronts' terms: one mapping, for every job of the use-case layer
// (the runner's, a lever's, fix's, warm-up's, compare's and the history store's).
#ifndef XWARP_FRONTS_ENGINE_ERRORS_HPP
#define XWARP_FRONTS_ENGINE_ERRORS_HPP

#include "xwarp/analysis/compare.hpp"
#include "xwarp/analysis/replay_plans.hpp"
#include "xwarp/jobs/fix/fix.hpp"
#include "xwarp/jobs/usecases/use_cases.hpp"
#include "xwarp/store/run_store.hpp"
#include "xwarp/engine/runner/runner.hpp"
#include "xwarp/jobs/warmup/warmup_job.hpp"

namespace xwarp::fronts
{
    inline job_error from_probe_error(const probe_error& e)
    {
        using kind = job_error::kind;
        switch (e.which())
        {
            case probe_error::kind::command_not_found: return job_error(kind::command_not_found, e.what());
            case probe_error::kind::not_executable: return job_error(kind::not_executable, e.what());
            case probe_error::kind::cwd_missing: return job_error(kind::no_input, e.what());
            case probe_error::kind::usage: return job_error(kind::usage, e.what());
            case probe_error::kind::io: return job_error(kind::cannot_write, e.what());  // --keep-records' folder
            default: return job_error(kind::software, e.what());
        }
    }

    inline job_error from_history_error(const store_error& e)
    {
        using kind = job_error::kind;
        const auto k = e.which();
        return job_error(k == store_error::kind::missing      ? kind::no_input
                         : k == store_error::kind::unreadable ? kind::bad_input
                                                                : kind::cannot_write,
                         e.what());
    }

    // Runs a step of the engine, its refusals turned into job_error.
    template <typename F>
    auto engine(F&& step) -> decltype(step())
    {
        using kind = job_error::kind;
        try
        {
            return step();
        }
        catch (const probe_error& e)
        {
            throw from_probe_error(e);
        }
        catch (const unknown_lever& e)
        {
            throw job_error(kind::usage, e.what());
        }
        catch (const fix_write_error& e)
        {
            throw job_error(kind::cannot_write, e.what());
        }
        catch (const fix_error& e)
        {
            throw job_error(kind::usage, e.what());
        }
        catch (const warmup_error& e)
        {
            throw job_error(e.cannot_write ? kind::cannot_write : kind::usage, e.what());
        }
        catch (const compare_input_error& e)
        {
            throw job_error(kind::bad_input, e.what());
        }
        catch (const store_error& e)
        {
            throw from_history_error(e);
        }
    }
}

#endif
