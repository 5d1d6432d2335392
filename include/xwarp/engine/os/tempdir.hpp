// A private temporary directory that is removed when it goes out of scope.
#ifndef XWARP_OS_TEMPDIR_HPP
#define XWARP_OS_TEMPDIR_HPP

#include <string>

namespace xwarp
{
    // $TMPDIR (or /tmp), read once per process.
    const std::string& temp_base();

    class scoped_temp_dir
    {
    public:
        // Created under $TMPDIR (or /tmp) as <prefix>XXXXXX with mode 0700, with a file
        // `.xwarp-owner` naming this process, so a later probe can remove it if this one is
        // killed before its destructor runs (clean_after_dead_probes).
        explicit scoped_temp_dir(const std::string& prefix);
        ~scoped_temp_dir();
        scoped_temp_dir(const scoped_temp_dir&) = delete;
        scoped_temp_dir& operator=(const scoped_temp_dir&) = delete;

        const std::string& path() const { return m_path; }
        std::string sub(const std::string& name) const;  // creates path()/name

    private:
        std::string m_path;
    };
}

#endif
