// xwarp._xwarp, the extension module behind `%load_ext xwarp`: the same magics as the xwarp
// kernel, registered with a stock IPython shell and publishing through IPython.display.
#include <memory>
#include <string>

#include <pybind11/pybind11.h>

#include "xwarp/fronts/ipython/magic_bridge.hpp"
#include "xwarp/fronts/magics/magics.hpp"
#include "xwarp/version.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_xwarp, m)
{
    m.doc() = "The warp-probe magics (C++) for a stock IPython kernel; use %load_ext xwarp";
    m.attr("__version__") = XWARP_VERSION;
    m.def(
        "register_magics",
        [](py::object shell, const std::string& shim_dir, const std::string& guide_text, const std::string& exercises_text)
        {
            // One session per process, as in the xwarp kernel: %load_ext twice keeps the runs.
            static std::shared_ptr<xwarp::probe_session> session;
            static std::shared_ptr<xwarp::magic_registry> magics;
            if (!session)
            {
                session = std::make_shared<xwarp::probe_session>();
                session->shim_dir = shim_dir;
                session->guide_text = guide_text;
                session->exercises_text = exercises_text;
                magics = std::make_shared<xwarp::magic_registry>();
                xwarp::register_warp_magics(*magics, session);
            }
            xwarp::register_magics_with_ipython(shell, magics, xwarp::ipython_display_publisher());
        },
        py::arg("shell"),
        py::arg("shim_dir"),
        py::arg("guide_text"),
        py::arg("exercises_text") = std::string(),
        "Register %%warp_probe and the other warp magics with an IPython shell.");
}
