// Registering the C++ magics with IPython (pybind11): the host a magic sees inside the kernel.
#ifndef XWARP_KERNEL_XMAGIC_BRIDGE_HPP
#define XWARP_KERNEL_XMAGIC_BRIDGE_HPP

#include <memory>

#include <pybind11/pybind11.h>

#include "xwarp/magics/magics.hpp"

namespace xwarp
{
    // Registers every magic of the registry with the IPython shell. Call with the GIL held.
    void register_magics_with_ipython(pybind11::object shell, std::shared_ptr<magic_registry> magics);
}

#endif
