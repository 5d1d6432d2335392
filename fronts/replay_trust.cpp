#include "xwarp/fronts/replay_trust.hpp"

#include <filesystem>
#include <vector>

#include <sys/utsname.h>

#include "xwarp/store/run_store.hpp"

namespace xwarp::fronts
{
    namespace
    {
        std::string this_machine()
        {
            struct utsname u
            {
            };
            return ::uname(&u) == 0 ? std::string(u.nodename) : std::string("unknown host");
        }
    }

    replay_check check_replay(const report& saved, const std::string& history_option)
    {
        replay_check out;
        const store_location where = locate_store(history_option);
        if (where.off)
        {
            out.why = "the history store is off, so nothing shows that you ran it here";
            return out;
        }
        std::error_code ec;
        if (!std::filesystem::is_regular_file(where.path, ec))
        {
            out.why = "there is no history store at " + where.path + " that shows you ran it here";
            return out;
        }
        try
        {
            std::vector<std::string> notes;
            run_store store(where.path, &notes, store_access::read);
            out.ran_here = store.ran_here(saved, this_machine());
            if (!out.ran_here)
            {
                out.why = "no run of this command, in this folder, with this Python, is in your history at " + where.path
                          + " from this machine";
            }
        }
        catch (const std::exception& e)
        {
            out.why = std::string("the history store could not be read (") + e.what() + ")";
        }
        return out;
    }
}
