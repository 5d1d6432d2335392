#include "xwarp/engine/os/file_stamp.hpp"

#include <sys/stat.h>

namespace xwarp
{
    std::optional<file_stamp> stamp_regular_file(const std::string& path)
    {
        struct ::stat st{};
        if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        {
            return std::nullopt;
        }
        file_stamp stamp;
        stamp.device = static_cast<std::uint64_t>(st.st_dev);
        stamp.inode = static_cast<std::uint64_t>(st.st_ino);
        stamp.size = static_cast<std::int64_t>(st.st_size);
        stamp.modified_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
        return stamp;
    }
}
