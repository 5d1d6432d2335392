// The C++ magics as IPython magic functions: one bridge for both hosts, the xwarp kernel (xeus
// publishes the displays) and `%load_ext xwarp` in a stock IPython kernel (IPython.display
// does). Only how a display is published differs; the magics, their bundles, progress and
// interrupt handling are the same code.
#ifndef XWARP_IPYTHON_MAGIC_BRIDGE_HPP
#define XWARP_IPYTHON_MAGIC_BRIDGE_HPP

#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>

#include "xwarp/fronts/magics/magics.hpp"

namespace xwarp
{
    // Publishes a display (update: replace the display with that id). Called from the thread
    // that runs the cell, without the GIL.
    using display_publisher = std::function<void(const nlohmann::json& bundle, const std::string& display_id, bool update)>;

    // Registers every magic of the registry with the IPython shell. Call with the GIL held.
    void register_magics_with_ipython(pybind11::object shell, std::shared_ptr<magic_registry> magics,
                                      display_publisher publish);

    // A publisher through IPython.display (display, update_display): for a stock kernel.
    display_publisher ipython_display_publisher();
}

#endif
