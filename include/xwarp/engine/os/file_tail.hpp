// The end of a file: what a pass's captured output ends with.
#ifndef XWARP_OS_FILE_TAIL_HPP
#define XWARP_OS_FILE_TAIL_HPP

#include <cstddef>
#include <string>

namespace xwarp
{
    // The last max_bytes of a file, cut at a line start when possible; empty when it cannot be read.
    std::string file_tail(const std::string& path, std::size_t max_bytes);
}

#endif
