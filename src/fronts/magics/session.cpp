// A notebook's runs by name: the newest of a name is the one a magic finds.
#include "xwarp/fronts/magics/session.hpp"

namespace xwarp
{
    const report* probe_session::find(const std::string& name) const
    {
        for (auto it = named_runs.rbegin(); it != named_runs.rend(); ++it)
        {
            if (it->first == name)
            {
                return &it->second;
            }
        }
        return nullptr;
    }

    void probe_session::store(const std::string& name, const report& r)
    {
        shown.erase(name);
        for (auto& [n, rep] : named_runs)
        {
            if (n == name)
            {
                rep = r;
                return;
            }
        }
        named_runs.emplace_back(name, r);
    }
}
