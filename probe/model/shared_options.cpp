// Module options shared between the loads that carry equal ones (see report.hpp).
#include <array>
#include <cstddef>

#include "xwarp/model/report.hpp"

namespace xwarp
{
    namespace
    {
        // The last distinct option sets made on this thread: a report's loads come module by
        // module, and a program has a handful of option sets, so a short memory finds nearly
        // every repeat without a table that grows with the report.
        constexpr std::size_t remembered = 8;

        struct recent_options
        {
            std::array<std::shared_ptr<const nlohmann::json>, remembered> values;
            std::size_t next = 0;
        };

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
        thread_local recent_options recent;
        for (const auto& v : recent.values)
        {
            if (v && *v == value)
            {
                m_value = v;
                return;
            }
        }
        m_value = std::make_shared<const nlohmann::json>(std::move(value));
        recent.values[recent.next] = m_value;
        recent.next = (recent.next + 1) % remembered;
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
