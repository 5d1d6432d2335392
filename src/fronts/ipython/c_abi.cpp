// The magics behind a C interface (include/xwarp/fronts/ipython/c_abi.h): the same registry and
// session the xwarp kernel uses, with the notebook reached through the host's callbacks. No
// Python header is included here: the library serves every CPython 3 through ctypes.
#include "xwarp/fronts/ipython/c_abi.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include <nlohmann/json.hpp>

#include "xwarp/fronts/magics/magics.hpp"
#include "xwarp/version.hpp"

namespace
{
    // One session per process, as in the xwarp kernel: %load_ext twice keeps the runs.
    struct engine
    {
        std::shared_ptr<xwarp::probe_session> session;
        xwarp::magic_registry magics;
    };

    std::mutex engine_mutex;
    std::unique_ptr<engine> the_engine;

    engine* current()
    {
        std::lock_guard<std::mutex> lock(engine_mutex);
        return the_engine.get();
    }

    char* copy_out(const std::string& text)
    {
        char* out = static_cast<char*>(std::malloc(text.size() + 1));
        if (out)
        {
            std::memcpy(out, text.data(), text.size());
            out[text.size()] = '\0';
        }
        return out;
    }

    std::string dumped(const nlohmann::json& j)
    {
        // a bundle may hold text a program printed: invalid UTF-8 is replaced, never thrown on
        return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }

    class callback_host : public xwarp::magic_host
    {
    public:
        explicit callback_host(const xwarp_host& h) : m_host(h) {}

        std::string working_directory() override { return m_host.working_directory ? m_host.working_directory : "."; }
        std::string python_executable() override { return m_host.python_executable ? m_host.python_executable : ""; }
        bool interrupt_requested() override
        {
            return m_host.interrupt_requested && m_host.interrupt_requested(m_host.context) != 0;
        }
        void show(const nlohmann::json& bundle, const std::string& display_id, bool update) override
        {
            if (m_host.show)
            {
                m_host.show(m_host.context, dumped(bundle).c_str(), display_id.c_str(), update ? 1 : 0);
            }
        }
        void bind_variable(const std::string& name, const nlohmann::json& report, const std::string& html) override
        {
            if (m_host.bind_variable)
            {
                m_host.bind_variable(m_host.context, name.c_str(), dumped(report).c_str(), html.c_str());
            }
        }

    private:
        xwarp_host m_host;
    };

    int finish(int status, const std::string& text, char** message)
    {
        if (message)
        {
            *message = status == XWARP_MAGIC_OK ? nullptr : copy_out(text);
        }
        return status;
    }
}

extern "C"
{
    int xwarp_c_abi_version(void) { return XWARP_C_ABI_VERSION; }

    const char* xwarp_version(void) { return XWARP_VERSION; }

    int xwarp_start_session(const char* shim_dir, const char* guide_text, const char* exercises_text)
    {
        std::lock_guard<std::mutex> lock(engine_mutex);
        if (the_engine)
        {
            return 0;
        }
        try
        {
            auto made = std::make_unique<engine>();
            made->session = std::make_shared<xwarp::probe_session>();
            made->session->shim_dir = shim_dir ? shim_dir : "";
            made->session->guide_text = guide_text ? guide_text : "";
            made->session->exercises_text = exercises_text ? exercises_text : "";
            xwarp::register_warp_magics(made->magics, made->session);
            the_engine = std::move(made);
            return 0;
        }
        catch (...)
        {
            return XWARP_MAGIC_INTERNAL_ERROR;
        }
    }

    char* xwarp_magic_names(void)
    {
        engine* e = current();
        nlohmann::json names = nlohmann::json::array();
        if (e)
        {
            const auto& lines = e->magics.line_magics();
            const auto& cells = e->magics.cell_magics();
            std::map<std::string, std::string> kinds;
            for (const auto& [name, m] : lines)
            {
                kinds[name] = "line";
            }
            for (const auto& [name, m] : cells)
            {
                kinds[name] = kinds.count(name) ? "line_cell" : "cell";
            }
            for (const auto& [name, kind] : kinds)
            {
                names.push_back({{"name", name}, {"kind", kind}});
            }
        }
        return copy_out(names.dump());
    }

    int xwarp_run_magic(const char* name, const char* line, const char* cell, const xwarp_host* host, char** message)
    {
        if (message)
        {
            *message = nullptr;
        }
        engine* e = current();
        if (!e || !name || !host)
        {
            return finish(XWARP_MAGIC_NO_SESSION, "xwarp: no session (xwarp_start_session was not called)", message);
        }
        const std::string magic = name;
        const std::string args = line ? line : "";
        callback_host notebook(*host);
        try
        {
            const auto as_cell = e->magics.cell_magics().find(magic);
            const auto as_line = e->magics.line_magics().find(magic);
            if (cell && as_cell != e->magics.cell_magics().end())
            {
                as_cell->second->run(args, cell, notebook);
            }
            else if (as_line != e->magics.line_magics().end())
            {
                as_line->second->run(args, notebook);
            }
            else if (as_cell != e->magics.cell_magics().end())
            {
                return finish(XWARP_MAGIC_USAGE_ERROR, "%%" + magic + " is a cell magic", message);
            }
            else
            {
                return finish(XWARP_MAGIC_NO_SESSION, "no magic named " + magic, message);
            }
            return XWARP_MAGIC_OK;
        }
        catch (const xwarp::magic_interrupted& error)
        {
            return finish(XWARP_MAGIC_INTERRUPTED, error.what(), message);
        }
        catch (const xwarp::magic_program_failed& error)
        {
            return finish(XWARP_MAGIC_PROGRAM_FAILED, error.what(), message);
        }
        catch (const xwarp::magic_expectation_not_met& error)
        {
            return finish(XWARP_MAGIC_EXPECTATION_NOT_MET, error.what(), message);
        }
        catch (const xwarp::magic_error& error)
        {
            return finish(XWARP_MAGIC_USAGE_ERROR, error.what(), message);
        }
        catch (const std::bad_alloc&)
        {
            return finish(XWARP_MAGIC_INTERNAL_ERROR, "xwarp: out of memory", message);
        }
        catch (const std::exception& error)
        {
            return finish(XWARP_MAGIC_INTERNAL_ERROR, std::string("xwarp: internal error: ") + error.what(), message);
        }
        catch (...)
        {
            return finish(XWARP_MAGIC_INTERNAL_ERROR, "xwarp: internal error", message);
        }
    }

    void xwarp_free(char* text) { std::free(text); }
}
