// The value types the model is made of: a load's status, reading JSON the model keeps raw, and
// the compact texts that let a report of 100,000 identities fit (shared, inline, JSON as text).
#ifndef XWARP_MODEL_VALUES_HPP
#define XWARP_MODEL_VALUES_HPP

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace xwarp
{
    enum class load_status
    {
        compiled,
        cached,
        error,
        unknown
    };

    std::string to_string(load_status s);

    // Its words in the JSON, declared where the type is: every source that puts a load_status
    // into JSON (the trace's spans too) must see this, or nlohmann writes the enum's number there,
    // and two sources disagreeing on one template is an ODR violation the linker settles at random.
    NLOHMANN_JSON_SERIALIZE_ENUM(load_status,
                                 {{load_status::unknown, "unknown"},
                                  {load_status::compiled, "compiled"},
                                  {load_status::cached, "cached"},
                                  {load_status::error, "error"}})

    // j[key] as T when j is an object holding a T there, else `fallback`. Never throws: the JSON
    // kept raw in the model (options, call arguments, hooks) comes from report files too.
    template <class T>
    T field_or(const nlohmann::json& j, const char* key, T fallback)
    {
        if (!j.is_object())
        {
            return fallback;
        }
        const auto it = j.find(key);
        if (it == j.end())
        {
            return fallback;
        }
        try
        {
            return it->template get<T>();
        }
        catch (const nlohmann::json::exception&)
        {
            return fallback;
        }
    }

    inline std::string field_or(const nlohmann::json& j, const char* key, const char* fallback)
    {
        return field_or<std::string>(j, key, std::string(fallback));
    }

    // An optional number as JSON: the number, or null.
    inline nlohmann::json nullable(const std::optional<double>& v)
    {
        return v ? nlohmann::json(*v) : nlohmann::json();
    }

    namespace detail
    {
        // An immutable text with its own count of holders: a shared_text is one pointer to it
        // (a std::shared_ptr is two), and a report of 100,000 identities holds a few million
        // of them (eight in a load, six in a span, three in an identity...).
        class counted_text
        {
        public:
            explicit counted_text(std::string text) : m_text(std::move(text)) {}
            const std::string& str() const noexcept { return m_text; }
            void hold() const noexcept
            {
                if (!m_forever)
                {
                    m_holders.fetch_add(1, std::memory_order_relaxed);
                }
            }
            // The last holder deletes it. The one empty text is not counted: every default and
            // moved-from shared_text holds it, and counting it cost two atomic operations a move.
            void let_go() const noexcept
            {
                if (!m_forever && m_holders.fetch_sub(1, std::memory_order_acq_rel) == 1)
                {
                    delete this;
                }
            }
            static const counted_text* empty();

        private:
            struct forever_tag
            {
            };
            counted_text(forever_tag) : m_forever(true) {}

            mutable std::atomic<std::uint32_t> m_holders{1};
            const bool m_forever = false;
            const std::string m_text;
        };
    }

    // Text that many findings or spans repeat word for word (a mechanism's title, a
    // recommendation, a thread's name), held once: 50,000 churn findings of a 100,000-identity report carried 50,000 copies of one
    // 416-character recommendation. A text equal to one of the last few made on this thread
    // shares that one's copy. Read-only: a new text is a new value; a moved-from one is "".
    class shared_text
    {
    public:
        shared_text() noexcept : m_text(detail::counted_text::empty()) { m_text->hold(); }
        shared_text(std::string text);  // implicit, as the std::string it replaces
        shared_text(const char* text) : shared_text(std::string(text)) {}
        shared_text(const shared_text& other) noexcept : m_text(other.m_text) { m_text->hold(); }
        shared_text(shared_text&& other) noexcept : m_text(other.m_text)
        {
            other.m_text = detail::counted_text::empty();
            other.m_text->hold();
        }
        shared_text& operator=(const shared_text& other) noexcept
        {
            other.m_text->hold();  // first: other may be this
            m_text->let_go();
            m_text = other.m_text;
            return *this;
        }
        shared_text& operator=(shared_text&& other) noexcept
        {
            if (this != &other)
            {
                m_text->let_go();
                m_text = other.m_text;
                other.m_text = detail::counted_text::empty();
                other.m_text->hold();
            }
            return *this;
        }
        ~shared_text() { m_text->let_go(); }

        const std::string& str() const { return m_text->str(); }
        operator const std::string&() const { return m_text->str(); }
        operator std::string_view() const noexcept { return m_text->str(); }  // for keys of views
        bool empty() const { return str().empty(); }
        std::size_t size() const { return str().size(); }
        std::string::const_iterator begin() const { return str().begin(); }
        std::string::const_iterator end() const { return str().end(); }
        std::size_t find(const std::string& what) const { return str().find(what); }
        std::string substr(std::size_t pos, std::size_t n = std::string::npos) const { return str().substr(pos, n); }

        // Friends found only through a shared_text argument: JSON converts to anything with a
        // from_json, and free operators would make its comparisons with strings ambiguous.
        friend bool operator==(const shared_text& a, const std::string& b) { return a.str() == b; }
        friend bool operator==(const shared_text& a, const char* b) { return a.str() == b; }
        friend bool operator!=(const shared_text& a, const std::string& b) { return a.str() != b; }
        friend bool operator!=(const shared_text& a, const char* b) { return a.str() != b; }
        friend std::string operator+(const std::string& a, const shared_text& b) { return a + b.str(); }
        friend std::ostream& operator<<(std::ostream& o, const shared_text& t);

    private:
        // Takes over a text made with one holder (the recent memory's maker).
        explicit shared_text(const detail::counted_text* made) noexcept : m_text(made) {}

        const detail::counted_text* m_text;  // held: never null
    };
    void to_json(nlohmann::json& j, const shared_text& t);
    void from_json(const nlohmann::json& j, shared_text& t);

    // A list of texts that record after record repeats whole (a launch's argument types), held
    // once like a shared_text: each launch record held a vector of its own, an allocation per
    // record for the same one or two types. Read-only: a new list is a new value.
    class shared_text_list
    {
    public:
        shared_text_list();  // empty
        shared_text_list(std::vector<shared_text> items);  // implicit, as the vector it replaces
        const std::vector<shared_text>& items() const { return *m_items; }
        std::vector<shared_text>::const_iterator begin() const { return m_items->begin(); }
        std::vector<shared_text>::const_iterator end() const { return m_items->end(); }
        std::size_t size() const { return m_items->size(); }
        bool empty() const { return m_items->empty(); }
        const shared_text& operator[](std::size_t i) const { return (*m_items)[i]; }
        friend bool operator==(const shared_text_list& a, const shared_text_list& b)
        {
            return a.m_items == b.m_items || *a.m_items == *b.m_items;
        }
        friend bool operator!=(const shared_text_list& a, const shared_text_list& b) { return !(a == b); }

    private:
        std::shared_ptr<const std::vector<shared_text>> m_items;
    };
    void to_json(nlohmann::json& j, const shared_text_list& l);
    void from_json(const nlohmann::json& j, shared_text_list& l);

    // A JSON value held as its compact text and parsed when read. A finding's cause is made
    // once and read rarely (the what-if planner, a few detectors), and as a tree each one took
    // about ten times its text: 5,000 churn findings of a 10,000-identity report held 12 MB of
    // trees against 1.2 MB of text. Text that is not valid UTF-8 is kept with U+FFFD in its
    // place, as the report writer would write it anyway.
    class json_text
    {
    public:
        json_text() = default;  // {}
        explicit json_text(const nlohmann::json& value);
        // Text already as the constructor would make it (compact, members sorted, valid UTF-8),
        // put together by the caller from dumped parts; not checked.
        static json_text of_compact_text(std::string text);
        nlohmann::json value() const;
        const std::string& text() const { return m_text; }
        bool is_empty_object() const { return m_text == "{}"; }

    private:
        std::string m_text = "{}";
    };
    void to_json(nlohmann::json& j, const json_text& t);
    void from_json(const nlohmann::json& j, json_text& t);

    // Appends a string as json_text writes it (quoted, escaped as dump() escapes), for causes put
    // together from parts: a cause listing 50,000 module names was a tree of 50,000 copies
    // dumped once.
    void append_json_string(std::string& out, std::string_view s);
    // ["a","b",...] from names, as above.
    std::string json_string_array(const std::vector<std::string_view>& names);

    // A text held inline up to 23 characters, on the heap past that. A kernel's content hash is
    // 16 hex characters, one past std::string's 15 inline: a report of 10,000 identities held
    // 15,000 of them, each a 32-byte allocation beside its 32-byte string.
    class short_text
    {
    public:
        short_text() = default;
        short_text(std::string_view text) { assign(text); }  // implicit, as the std::string it replaces
        short_text(const std::string& text) : short_text(std::string_view(text)) {}
        short_text(const char* text) : short_text(std::string_view(text)) {}
        short_text(const short_text& other) { assign(other); }
        short_text(short_text&& other) noexcept { take(other); }
        short_text& operator=(const short_text& other)
        {
            if (this != &other)
            {
                assign(other);
            }
            return *this;
        }
        short_text& operator=(short_text&& other) noexcept
        {
            if (this != &other)
            {
                take(other);
            }
            return *this;
        }
        operator std::string_view() const noexcept
        {
            return m_long ? std::string_view(*m_long) : std::string_view(m_inline.data(), m_size);
        }
        std::string str() const { return std::string(std::string_view(*this)); }
        bool empty() const noexcept { return std::string_view(*this).empty(); }
        friend bool operator==(const short_text& a, std::string_view b) { return std::string_view(a) == b; }
        friend bool operator!=(const short_text& a, std::string_view b) { return std::string_view(a) != b; }
        friend std::string operator+(const std::string& a, const short_text& b) { return a + b.str(); }

    private:
        void assign(std::string_view text)
        {
            if (text.size() <= m_inline.size())
            {
                std::array<char, 23> copied{};  // the text may be this one's own
                std::copy(text.begin(), text.end(), copied.begin());
                m_inline = copied;
                m_size = static_cast<std::uint8_t>(text.size());
                m_long.reset();
                return;
            }
            m_long = std::make_unique<std::string>(text);
            m_size = 0;
        }
        void take(short_text& other) noexcept
        {
            m_inline = other.m_inline;
            m_size = other.m_size;
            m_long = std::move(other.m_long);
            other.m_size = 0;
        }

        std::array<char, 23> m_inline{};
        std::uint8_t m_size = 0;
        std::unique_ptr<std::string> m_long;
    };
    void to_json(nlohmann::json& j, const short_text& t);
    void from_json(const nlohmann::json& j, short_text& t);
}

#endif
