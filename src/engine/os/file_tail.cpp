#include "xwarp/engine/os/file_tail.hpp"

#include <fstream>

namespace xwarp
{
    std::string file_tail(const std::string& path, std::size_t max_bytes)
    {
        std::ifstream in(path, std::ios::binary | std::ios::ate);
        if (!in)
        {
            return {};
        }
        auto size = static_cast<std::size_t>(in.tellg());
        std::size_t start = size > max_bytes ? size - max_bytes : 0;
        in.seekg(static_cast<std::streamoff>(start));
        std::string data(size - start, '\0');
        in.read(data.data(), static_cast<std::streamsize>(data.size()));
        if (start > 0)
        {
            auto nl = data.find('\n');
            if (nl != std::string::npos && nl + 1 < data.size())
            {
                data = data.substr(nl + 1);
            }
        }
        return data;
    }
}
