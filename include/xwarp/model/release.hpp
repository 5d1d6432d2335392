// Giving a container's storage back while it is still in scope.
#ifndef XWARP_MODEL_RELEASE_HPP
#define XWARP_MODEL_RELEASE_HPP

#include <utility>

namespace xwarp
{
    // Empties c and frees what it held. `c = {}` does not: for a vector or a hash table it
    // assigns an empty initializer list, which keeps the capacity (a vector's whole buffer, a
    // table's bucket array).
    template <typename Container>
    void release(Container& c)
    {
        Container empty;
        std::swap(c, empty);
    }
}

#endif
