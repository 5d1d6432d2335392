// Module options shared between the loads that carry equal ones (see report.hpp).
#include "recent_values.hpp"
#include "xwarp/model/report.hpp"

namespace xwarp
{
    namespace
    {
        const std::shared_ptr<const nlohmann::json>& empty_object()
        {
            static const auto empty = std::make_shared<const nlohmann::json>(nlohmann::json::object());
            return empty;
        }
    }

    shared_options::shared_options() : m_value(empty_object()) {}

    shared_options::shared_options(nlohmann::json value)
    {
        if (value.is_object() && value.empty())
        {
            m_value = empty_object();
            return;
        }
        m_value = detail::share_recent(std::move(value));  // a program has a handful of option sets
    }

    void to_json(nlohmann::json& j, const shared_options& o)
    {
        j = *o;
    }

    void from_json(const nlohmann::json& j, shared_options& o)
    {
        o = shared_options(j);
    }
}
