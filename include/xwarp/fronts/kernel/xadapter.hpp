// The one place that talks to xeus and xeus-python (2.4 / 0.14 APIs). A later xeus upgrade
// (asynchronous execute replies, interrupt_request_impl, xeus-zmq servers) changes this file
// and xadapter.cpp only.
#ifndef XWARP_KERNEL_XADAPTER_HPP
#define XWARP_KERNEL_XADAPTER_HPP

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "xwarp/fronts/magics/magics.hpp"

namespace xwarp
{
    // Publish a display_data (or update_display_data when update is true) on IOPub.
    // Call from the thread that runs the cell.
    void publish_display(const nlohmann::json& bundle, const std::string& display_id, bool update);

    // Builds the kernel around an interpreter that is xeus-python's plus the warp magics, and
    // serves the connection file until shutdown. Python must already be initialized.
    [[noreturn]] void run_kernel(const std::string& connection_file, std::shared_ptr<magic_registry> magics);
}

#endif
