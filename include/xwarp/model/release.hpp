// Giving memory back: a container's storage while it is still in scope, and the heap's free
// pages to the system.
#ifndef XWARP_MODEL_RELEASE_HPP
#define XWARP_MODEL_RELEASE_HPP

#include <utility>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

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

    // Hands the heap's wholly free pages back to the system. glibc keeps the holes a freed
    // step leaves resident, and the next step grows the heap past them: after analysing a
    // report of 100,000 identities 43 of the 378 MB held were such holes. Takes a few ms.
    inline void give_back_freed_pages()
    {
#if defined(__GLIBC__)
        malloc_trim(0);
#endif
    }

    // Keeps every block of 128 KiB or more (a pass's records, a comparison's text) in a mapping
    // of its own, which goes back to the system when freed. glibc starts there, but each time
    // such a block is freed it raises the bar to that block's size: once the first report's
    // vectors were freed, the next report's were carved from the heap, and the copies their
    // growth left behind stayed resident beside what is kept. For a process that reads one
    // report after another (compare); the process's allocations are all affected.
    inline void keep_large_blocks_mapped()
    {
#if defined(__GLIBC__)
        mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
    }
}

#endif
