#include "xwarp/engine/os/bounded_read.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace xwarp
{
    namespace
    {
        std::string kind_of(mode_t mode)
        {
            if (S_ISFIFO(mode))
            {
                return "a FIFO";
            }
            if (S_ISCHR(mode) || S_ISBLK(mode))
            {
                return "a device";
            }
            if (S_ISSOCK(mode))
            {
                return "a socket";
            }
            if (S_ISDIR(mode))
            {
                return "a folder";
            }
            if (S_ISLNK(mode))
            {
                return "a symbolic link";
            }
            return "not a regular file";
        }

        std::string size_words(std::size_t bytes)
        {
            return bytes >= (1u << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes) + " bytes";
        }
    }

    bool is_plain_file(const std::string& path)
    {
        struct stat st{};
        return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    }

    bounded_read read_regular_file(const std::string& path, std::size_t max_bytes)
    {
        bounded_read out;
        struct stat st{};
        if (::lstat(path.c_str(), &st) != 0)
        {
            out.why = std::strerror(errno);
            return out;
        }
        if (!S_ISREG(st.st_mode))
        {
            out.why = kind_of(st.st_mode) + ", not a regular file";
            return out;
        }
        // O_NONBLOCK: a FIFO swapped in after the lstat opens without waiting for a writer;
        // O_NOFOLLOW: a link swapped in is refused
        const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
        {
            out.why = errno == ELOOP ? "a symbolic link, not a regular file" : std::strerror(errno);
            return out;
        }
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        {
            out.why = kind_of(st.st_mode) + ", not a regular file";
            ::close(fd);
            return out;
        }
        if (static_cast<std::size_t>(st.st_size) > max_bytes)
        {
            out.why = size_words(static_cast<std::size_t>(st.st_size)) + ", larger than the " + size_words(max_bytes)
                      + " read of one file";
            ::close(fd);
            return out;
        }
        out.text.resize(static_cast<std::size_t>(st.st_size));
        std::size_t got = 0;
        while (got < out.text.size())
        {
            const ssize_t n = ::read(fd, out.text.data() + got, out.text.size() - got);
            if (n < 0 && errno == EINTR)
            {
                continue;
            }
            if (n <= 0)
            {
                break;
            }
            got += static_cast<std::size_t>(n);
        }
        // a file that grew while it was read is read up to its size when it was opened; one that
        // shrank is what was there
        out.text.resize(got);
        ::close(fd);
        out.ok = true;
        return out;
    }
}
