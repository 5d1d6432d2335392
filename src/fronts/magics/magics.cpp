// The warp magics, one file each beside this one, registered here one line each (as xeus-cling
// registers its magics), sharing one session.
#include "xwarp/fronts/magics/magics.hpp"

namespace xwarp
{
    std::shared_ptr<cell_magic> make_warp_probe_cell(std::shared_ptr<probe_session> session);
    std::shared_ptr<line_magic> make_warp_probe_line(std::shared_ptr<probe_session> session);
    std::shared_ptr<cell_magic> make_warp_setup(std::shared_ptr<probe_session> session);
    std::shared_ptr<line_magic> make_warp_compare(std::shared_ptr<probe_session> session);
    std::shared_ptr<line_magic> make_warp_whatif(std::shared_ptr<probe_session> session);
    std::shared_ptr<line_magic> make_warp_history(std::shared_ptr<probe_session> session);
    std::shared_ptr<line_magic> make_warp_export(std::shared_ptr<probe_session> session);
    std::shared_ptr<line_magic> make_warp_fix(std::shared_ptr<probe_session> session);
    std::shared_ptr<line_magic> make_warp_warmup(std::shared_ptr<probe_session> session);
    std::shared_ptr<line_magic> make_warp_report(std::shared_ptr<probe_session> session);

    void magic_registry::add(const std::string& name, std::shared_ptr<line_magic> magic)
    {
        m_line[name] = std::move(magic);
    }

    void magic_registry::add(const std::string& name, std::shared_ptr<cell_magic> magic)
    {
        m_cell[name] = std::move(magic);
    }

    void register_warp_magics(magic_registry& registry, std::shared_ptr<probe_session> session)
    {
        registry.add("warp_probe", make_warp_probe_cell(session));
        registry.add("warp_probe", make_warp_probe_line(session));
        registry.add("warp_setup", make_warp_setup(session));
        registry.add("warp_compare", make_warp_compare(session));
        registry.add("warp_whatif", make_warp_whatif(session));
        registry.add("warp_history", make_warp_history(session));
        registry.add("warp_report", make_warp_report(session));
        registry.add("warp_export", make_warp_export(session));
        registry.add("warp_fix", make_warp_fix(session));
        registry.add("warp_warmup", make_warp_warmup(session));
    }
}
