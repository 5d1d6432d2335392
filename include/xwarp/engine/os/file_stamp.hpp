// What tells a file read twice from one that changed between the two readings.
#ifndef XWARP_OS_FILE_STAMP_HPP
#define XWARP_OS_FILE_STAMP_HPP

#include <cstdint>
#include <optional>
#include <string>

namespace xwarp
{
    // A regular file's device, inode, size and modification time (to the nanosecond): a file
    // written in place changes its size or time, one renamed over it its inode.
    struct file_stamp
    {
        std::uint64_t device = 0;
        std::uint64_t inode = 0;
        std::int64_t size = 0;
        std::int64_t modified_ns = 0;
        friend bool operator==(const file_stamp& a, const file_stamp& b)
        {
            return a.device == b.device && a.inode == b.inode && a.size == b.size && a.modified_ns == b.modified_ns;
        }
        friend bool operator!=(const file_stamp& a, const file_stamp& b) { return !(a == b); }
    };

    // nullopt for what is not a regular file (standard input, a pipe, a device: what can be
    // read only once) or is not there.
    std::optional<file_stamp> stamp_regular_file(const std::string& path);
}

#endif
