#include "xwarp/engine/os/tempdir.hpp"

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <fstream>
#include <vector>

#include "xwarp/engine/os/process.hpp"

namespace fs = std::filesystem;

namespace xwarp
{
    const std::string& temp_base()
    {
        // Read once: the environment changes while the host facts are gathered (the driver's
        // private CUDA_CACHE_PATH), and $TMPDIR must stay where the first directory went.
        static const std::string base = []
        {
            const char* v = std::getenv("TMPDIR");
            return std::string((v && *v) ? v : "/tmp");
        }();
        return base;
    }

    scoped_temp_dir::scoped_temp_dir(const std::string& prefix)
    {
        const std::string& dir = temp_base();
        std::string templ = dir + "/" + prefix + "XXXXXX";
        std::vector<char> buf(templ.begin(), templ.end());
        buf.push_back('\0');
        if (::mkdtemp(buf.data()) == nullptr)
        {
            throw std::system_error(errno, std::generic_category(), "cannot create a temporary directory in " + dir);
        }
        m_path = buf.data();
        std::ofstream(m_path + "/.xwarp-owner") << owner_id() << "\n";
    }

    scoped_temp_dir::~scoped_temp_dir()
    {
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }

    std::string scoped_temp_dir::sub(const std::string& name) const
    {
        std::string p = m_path + "/" + name;
        fs::create_directories(p);
        return p;
    }
}
