// The xeus adapter: xwarp's interpreter is xeus-python's, plus the warp magics, a SIGINT
// window around each cell, and its own kernel_info. Every xeus call of the project is here.
#include "xwarp/fronts/kernel/xadapter.hpp"

#include <csignal>
#include <cstdlib>
#include <ctime>

#include <pthread.h>

#include <xeus/xinterpreter.hpp>
#include <xeus/xkernel.hpp>
#include <xeus/xkernel_configuration.hpp>
#include <xeus/xserver_shell_main.hpp>
#include <xeus-python/xinterpreter.hpp>

#include "xwarp/fronts/ipython/magic_bridge.hpp"
#include "xwarp/version.hpp"

namespace nl = nlohmann;
namespace py = pybind11;

namespace xwarp
{
    namespace
    {
        // main() blocks SIGINT in every thread. A cell's thread accepts it only while the cell
        // runs: an interrupt then raises KeyboardInterrupt (in Python code, or in a probe's
        // wait loop), an interrupt while idle stays pending and is dropped before the next
        // cell, and xeus' own threads never see it (cppzmq would throw on EINTR).
        class sigint_window
        {
        public:
            sigint_window()
            {
                sigemptyset(&m_set);
                sigaddset(&m_set, SIGINT);
                timespec zero{0, 0};
                while (sigtimedwait(&m_set, nullptr, &zero) == SIGINT)
                {
                }
                pthread_sigmask(SIG_UNBLOCK, &m_set, nullptr);
            }

            ~sigint_window()
            {
                pthread_sigmask(SIG_BLOCK, &m_set, nullptr);
            }

            sigint_window(const sigint_window&) = delete;
            sigint_window& operator=(const sigint_window&) = delete;

        private:
            sigset_t m_set;
        };

        class interpreter : public xpyt::interpreter
        {
        public:
            explicit interpreter(std::shared_ptr<magic_registry> magics) : m_magics(std::move(magics)) {}

        protected:
            void configure_impl() override
            {
                xpyt::interpreter::configure_impl();
                py::gil_scoped_acquire gil;
                register_magics_with_ipython(m_ipython_shell, m_magics, publish_display);
            }

            nl::json execute_request_impl(int execution_counter,
                                          const std::string& code,
                                          bool silent,
                                          bool store_history,
                                          nl::json user_expressions,
                                          bool allow_stdin) override
            {
                sigint_window window;
                return xpyt::interpreter::execute_request_impl(
                    execution_counter, code, silent, store_history, std::move(user_expressions), allow_stdin);
            }

            nl::json kernel_info_request_impl() override
            {
                nl::json info = xpyt::interpreter::kernel_info_request_impl();
                info["implementation"] = "xwarp";
                info["implementation_version"] = XWARP_VERSION;
                info["banner"] = "xwarp " XWARP_VERSION
                                 ": Python (xeus-python) with %%warp_probe, %%warp_setup, %warp_probe, %warp_compare, "
                                 "%warp_history and %warp_export";
                info["debugger"] = false;  // no debugger is wired: never offer one
                return info;
            }

        private:
            std::shared_ptr<magic_registry> m_magics;
        };
    }

    void publish_display(const nl::json& bundle, const std::string& display_id, bool update)
    {
        nl::json transient = display_id.empty() ? nl::json::object() : nl::json{{"display_id", display_id}};
        auto& target = xeus::get_interpreter();
        if (update)
        {
            target.update_display_data(bundle, nl::json::object(), transient);
        }
        else
        {
            target.display_data(bundle, nl::json::object(), transient);
        }
    }

    void run_kernel(const std::string& connection_file, std::shared_ptr<magic_registry> magics)
    {
        xeus::xconfiguration config = xeus::load_configuration(connection_file);
        auto context = xeus::make_context<zmq::context_t>();
        auto interp = std::make_unique<interpreter>(std::move(magics));
        xeus::xkernel kernel(config,
                             xeus::get_user_name(),
                             std::move(context),
                             std::move(interp),
                             xeus::make_xserver_shell_main);
        kernel.start();  // xeus 2.4 ends the process at shutdown; this is not reached
        std::exit(0);
    }
}
