// The notebook magics, in C++ with neither Python nor xeus: %%warp_probe, %%warp_setup,
// %warp_probe, %warp_compare, %warp_history and %warp_export. A host (the kernel adapter in
// kernel/, or a test double) supplies the few things a magic needs from a notebook.
#ifndef XWARP_MAGICS_MAGICS_HPP
#define XWARP_MAGICS_MAGICS_HPP

#include <map>
#include <memory>
#include <stdexcept>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xwarp/fronts/magics/session.hpp"
#include "xwarp/model/report.hpp"

namespace xwarp
{
    // What a magic may ask of the notebook it runs in.
    class magic_host
    {
    public:
        virtual ~magic_host() = default;
        virtual std::string working_directory() = 0;  // the notebook's folder
        virtual std::string python_executable() = 0;  // the kernel's own Python
        virtual bool interrupt_requested() = 0;       // polled while a probe runs
        // Show a MIME bundle; with update, replace the output shown under display_id.
        virtual void show(const nlohmann::json& bundle, const std::string& display_id, bool update) = 0;
        // Put a report into the user's namespace (as an object with _repr_html_ and dict access).
        virtual void bind_variable(const std::string& name, const nlohmann::json& report, const std::string& html) = 0;
    };

    // A usage or input problem: shown to the user as one message, nothing else happens.
    class magic_error : public std::runtime_error
    {
    public:
        using std::runtime_error::runtime_error;
    };

    // --strict --expect: the run did not meet what the cell expected (an exercise not solved yet).
    class magic_expectation_not_met : public magic_error
    {
    public:
        using magic_error::magic_error;
    };

    // The probed program failed in every sample (raised, exited non-zero, crashed, timed out):
    // shown, then an error reply, so that Run All and nbclient stop there as the CLI's exit 1
    // would (--allow-fail keeps the cell going, for a lesson that fails on purpose).
    class magic_program_failed : public magic_error
    {
    public:
        using magic_error::magic_error;
    };

    // The user interrupted a probe; its processes are gone and its temporary files removed.
    class magic_interrupted : public std::runtime_error
    {
    public:
        using std::runtime_error::runtime_error;
    };

    class line_magic
    {
    public:
        virtual ~line_magic() = default;
        virtual void run(const std::string& line, magic_host& host) = 0;
    };

    class cell_magic
    {
    public:
        virtual ~cell_magic() = default;
        virtual void run(const std::string& line, const std::string& cell, magic_host& host) = 0;
    };

    // Name -> magic, for the host to register with its shell.
    class magic_registry
    {
    public:
        void add(const std::string& name, std::shared_ptr<line_magic> magic);
        void add(const std::string& name, std::shared_ptr<cell_magic> magic);
        const std::map<std::string, std::shared_ptr<line_magic>>& line_magics() const { return m_line; }
        const std::map<std::string, std::shared_ptr<cell_magic>>& cell_magics() const { return m_cell; }

    private:
        std::map<std::string, std::shared_ptr<line_magic>> m_line;
        std::map<std::string, std::shared_ptr<cell_magic>> m_cell;
    };

    // Registers every warp magic, sharing one session.
    void register_warp_magics(magic_registry& registry, std::shared_ptr<probe_session> session);
}

#endif
