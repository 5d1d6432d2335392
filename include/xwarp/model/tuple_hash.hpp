// One hash for the lookup tables the analysis and the renderers key by tuples (or pairs) of
// views of a report's strings and integers: ordered maps of copied names compared long shared
// module-name prefixes at every step, more of them the larger the report.
#ifndef XWARP_MODEL_TUPLE_HASH_HPP
#define XWARP_MODEL_TUPLE_HASH_HPP

#include <cstddef>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

namespace xwarp
{
    // Not noexcept, on purpose: libstdc++ then keeps each entry's hash beside it, where it would
    // otherwise hash the neighbouring entries' strings again on every lookup and rehash (7 % of
    // the 100k report's run).
    struct tuple_hash
    {
        template <typename Tuple>
        std::size_t operator()(const Tuple& key) const
        {
            std::size_t seed = 0;
            std::apply(
                [&](const auto&... part)
                {
                    ((seed ^= std::hash<std::decay_t<decltype(part)>>{}(part) + 0x9e3779b97f4a7c15ULL + (seed << 6)
                              + (seed >> 2)),
                     ...);
                },
                key);
            return seed;
        }
    };
}

#endif
