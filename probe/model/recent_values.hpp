// Values that records repeat word for word (a text, an option set, a list of types), held once:
// a new value equal to one of the last few made on this thread shares that one's copy. Records
// arrive module by module and a program repeats a handful of values, so a short memory finds
// nearly every repeat without a table that grows with the report. Private to probe/model/.
#ifndef XWARP_MODEL_RECENT_VALUES_HPP
#define XWARP_MODEL_RECENT_VALUES_HPP

#include <array>
#include <cstddef>
#include <memory>

namespace xwarp::detail
{
    template <typename T>
    std::shared_ptr<const T> share_recent(T value)
    {
        constexpr std::size_t remembered = 8;
        thread_local std::array<std::shared_ptr<const T>, remembered> recent;
        thread_local std::size_t next = 0;
        for (const auto& held : recent)
        {
            if (held && *held == value)
            {
                return held;
            }
        }
        auto made = std::make_shared<const T>(std::move(value));
        recent[next] = made;
        next = (next + 1) % remembered;
        return made;
    }
}

#endif
