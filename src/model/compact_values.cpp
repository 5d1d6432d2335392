// Values held compactly in the report model: a finding's cause as JSON text and the texts that
// findings repeat, held once (see report.hpp).
#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <ostream>

#include "recent_values.hpp"
#include "xwarp/model/report.hpp"

namespace xwarp
{
    const detail::counted_text* detail::counted_text::empty()
    {
        static const counted_text none{forever_tag{}};  // never counted, never deleted
        return &none;
    }

    // the recent memory's reading of a held text (found by argument lookup)
    const std::string& value_of(const shared_text& held)
    {
        return held.str();
    }

    shared_text::shared_text(std::string text) : shared_text()
    {
        if (text.empty())
        {
            return;
        }
        // findings are made mechanism by mechanism
        *this = detail::share_recent<shared_text>(std::move(text),
                                                  [](std::string&& t)
                                                  { return shared_text(new detail::counted_text(std::move(t))); });
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

    namespace
    {
        const std::shared_ptr<const std::vector<shared_text>>& empty_list()
        {
            static const auto empty = std::make_shared<const std::vector<shared_text>>();
            return empty;
        }
    }

    shared_text_list::shared_text_list() : m_items(empty_list()) {}

    shared_text_list::shared_text_list(std::vector<shared_text> items)
    {
        if (items.empty())
        {
            m_items = empty_list();
            return;
        }
        m_items = detail::share_recent(std::move(items));  // a program's launches repeat a handful of signatures
    }

    void to_json(nlohmann::json& j, const shared_text_list& l)
    {
        j = l.items();
    }

    void from_json(const nlohmann::json& j, shared_text_list& l)
    {
        l = shared_text_list(j.get<std::vector<shared_text>>());
    }

    function_hashes::function_hashes(std::initializer_list<entry> entries)
    {
        for (const auto& [key, hash] : entries)
        {
            (*this)[key] = hash;
        }
    }

    std::string& function_hashes::operator[](const std::string& key)
    {
        auto at = std::lower_bound(m_entries.begin(), m_entries.end(), key,
                                   [](const entry& e, const std::string& k) { return e.first < k; });
        if (at == m_entries.end() || at->first != key)
        {
            at = m_entries.insert(at, entry(key, std::string()));
        }
        return at->second;
    }

    function_hashes::const_iterator function_hashes::find(const std::string& key) const
    {
        const auto at = std::lower_bound(m_entries.begin(), m_entries.end(), key,
                                         [](const entry& e, const std::string& k) { return e.first < k; });
        return at != m_entries.end() && at->first == key ? at : m_entries.end();
    }

    void to_json(nlohmann::json& j, const function_hashes& f)
    {
        j = nlohmann::json::object();
        for (const auto& [key, hash] : f)
        {
            j[key] = hash;
        }
    }

    void from_json(const nlohmann::json& j, function_hashes& f)
    {
        f.clear();
        for (const auto& [key, hash] : j.get<std::map<std::string, std::string>>())
        {
            f[key] = hash;
        }
    }

    void to_json(nlohmann::json& j, const short_text& t)
    {
        j = t.str();
    }

    void from_json(const nlohmann::json& j, short_text& t)
    {
        t = short_text(j.get<std::string>());
    }

    void append_json_string(std::string& out, std::string_view s)
    {
        for (const char c : s)
        {
            if (static_cast<unsigned char>(c) >= 0x80)
            {
                // Beyond ASCII (and any invalid UTF-8 in it, replaced): dump() itself.
                out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
                return;
            }
        }
        out += '"';
        for (const char c : s)
        {
            switch (c)
            {
                case '"': out += "\\\""; break;
                case '\\': out += "\\\\"; break;
                case '\b': out += "\\b"; break;
                case '\f': out += "\\f"; break;
                case '\n': out += "\\n"; break;
                case '\r': out += "\\r"; break;
                case '\t': out += "\\t"; break;
                default:
                    if (static_cast<unsigned char>(c) < 0x20)
                    {
                        std::array<char, 8> code{};
                        std::snprintf(code.data(), code.size(), "\\u%04x", static_cast<unsigned>(c));
                        out += code.data();
                    }
                    else
                    {
                        out += c;
                    }
            }
        }
        out += '"';
    }

    std::string json_string_array(const std::vector<std::string_view>& names)
    {
        std::size_t size = 2;
        for (const auto n : names)
        {
            size += n.size() + 3;
        }
        std::string out;
        out.reserve(size);
        out += '[';
        for (std::size_t i = 0; i < names.size(); ++i)
        {
            if (i != 0)
            {
                out += ',';
            }
            append_json_string(out, names[i]);
        }
        out += ']';
        return out;
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
