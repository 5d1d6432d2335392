// Reading a file the measured program could have planted: its records folder is the program's
// to write, so a name there may be a FIFO (an open would block forever), a link to /dev/zero (a
// read would never end) or a file of gigabytes. Opened without following a link and without
// blocking, read only when it is a regular file, and never past a cap.
#ifndef XWARP_OS_BOUNDED_READ_HPP
#define XWARP_OS_BOUNDED_READ_HPP

#include <cstddef>
#include <string>

namespace xwarp
{
    struct bounded_read
    {
        bool ok = false;         // a regular file, read whole
        std::string text;
        std::string why;         // when not ok: "a FIFO, not a regular file", "a symbolic link", "larger than 256 MiB", ...
    };

    // The whole of `path` when it is a regular file (a symbolic link is refused, not followed) of at
    // most max_bytes; otherwise why not, and nothing read.
    bounded_read read_regular_file(const std::string& path, std::size_t max_bytes);

    // True when `path` names a regular file, the link itself never followed.
    bool is_plain_file(const std::string& path);
}

#endif
