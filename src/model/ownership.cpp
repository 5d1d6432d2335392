// A file's owner in words (model/ownership.hpp).
#include "xwarp/model/ownership.hpp"

namespace xwarp
{
    bool warps_own_module(const std::string& module)
    {
        constexpr std::string_view package = "warp";
        return module.compare(0, package.size(), package) == 0
               && (module.size() == package.size() || module[package.size()] == '.');
    }

    std::string owner_phrase(const file_owner& owner)
    {
        switch (owner.kind)
        {
        case owner_kind::project:
            return "your project" + (owner.evidence.empty() ? std::string() : " (" + owner.evidence + ")");
        case owner_kind::installed:
            return owner.distribution.empty() ? "an installed package"
                                              : "the installed package " + owner.distribution
                                                    + (owner.version.empty() ? std::string() : " " + owner.version);
        case owner_kind::stdlib:
            return "Python's standard library";
        case owner_kind::warp:
            return "Warp itself" + (owner.version.empty() ? std::string() : " (" + owner.distribution + " " + owner.version + ")");
        case owner_kind::elsewhere:
            break;
        }
        return "not in an installed package and not in this project";
    }
}
