// Values held compactly in the report model: a finding's cause as JSON text and the texts that
// findings repeat, held once (see report.hpp).
#include <array>
#include <ostream>

#include "xwarp/model/report.hpp"

namespace xwarp
{
    namespace
    {
        // The last distinct texts made on this thread: findings are made mechanism by
        // mechanism, so a short memory finds the repeats without a table that grows.
        constexpr std::size_t remembered_texts = 8;

        const std::shared_ptr<const std::string>& empty_text()
        {
            static const auto empty = std::make_shared<const std::string>();
            return empty;
        }
    }

    shared_text::shared_text() : m_text(empty_text()) {}

    shared_text::shared_text(std::string text)
    {
        if (text.empty())
        {
            m_text = empty_text();
            return;
        }
        thread_local std::array<std::shared_ptr<const std::string>, remembered_texts> recent;
        thread_local std::size_t next = 0;
        for (const auto& r : recent)
        {
            if (r && *r == text)
            {
                m_text = r;
                return;
            }
        }
        m_text = std::make_shared<const std::string>(std::move(text));
        recent[next] = m_text;
        next = (next + 1) % remembered_texts;
    }

    std::ostream& operator<<(std::ostream& o, const shared_text& t)
    {
        return o << t.str();
    }

    void to_json(nlohmann::json& j, const shared_text& t)
    {
        j = t.str();
    }

    void from_json(const nlohmann::json& j, shared_text& t)
    {
        t = shared_text(j.get<std::string>());
    }

    json_text::json_text(const nlohmann::json& value)
        : m_text(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
    {
        m_text.shrink_to_fit();  // grown by doubling as it was written
    }

    json_text json_text::of_compact_text(std::string text)
    {
        json_text t;
        t.m_text = std::move(text);
        t.m_text.shrink_to_fit();
        return t;
    }

    nlohmann::json json_text::value() const
    {
        return nlohmann::json::parse(m_text);
    }

    void to_json(nlohmann::json& j, const json_text& t)
    {
        j = t.value();
    }

    void from_json(const nlohmann::json& j, json_text& t)
    {
        t = json_text(j);
    }
}  // namespace xwarp
