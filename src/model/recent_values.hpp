// Values that records repeat word for word (a text, an option set, a list of types), held once:
// a new value equal to one of the last few made on this thread shares that one's copy. Records
// arrive module by module and a program repeats a handful of values, so a short memory finds
// nearly every repeat without a table that grows with the report. Private to src/model/.
#ifndef XWARP_MODEL_RECENT_VALUES_HPP
#define XWARP_MODEL_RECENT_VALUES_HPP

#include <array>
#include <cstddef>
#include <memory>
#include <optional>

namespace xwarp::detail
{
    template <typename T>
    const T& value_of(const std::shared_ptr<const T>& held)
    {
        return *held;
    }

    // Held: what shares a value (value_of(held) reads it; found by argument lookup for a
    // handle of another namespace); make(value) holds a new one.
    template <typename Held, typename T, typename Make>
    Held share_recent(T value, Make make)
    {
        constexpr std::size_t remembered = 8;
        thread_local std::array<std::optional<Held>, remembered> recent;
        thread_local std::size_t next = 0;
        for (const auto& held : recent)
        {
            if (held && value_of(*held) == value)
            {
                return *held;
            }
        }
        Held made = make(std::move(value));
        recent[next] = made;
        next = (next + 1) % remembered;
        return made;
    }

    template <typename T>
    std::shared_ptr<const T> share_recent(T value)
    {
        return share_recent<std::shared_ptr<const T>>(std::move(value),
                                                      [](T&& v) { return std::make_shared<const T>(std::move(v)); });
    }
}

#endif
