// The report's field types, checked with valijson against the project's JSON Schema (its text
// is compiled in: report_schema_text.cpp is generated from contracts/report.schema.json).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cctype>
#include <map>
#include <optional>
#include <sstream>

#include "schema_checker.hpp"

#include "xwarp/model/json_io.hpp"

namespace xwarp
{
    extern const char* const report_schema_text;

    namespace
    {
        using nlohmann::json;

        // The schema as a type check: fields may be missing (a report of an older version,
        // or a partial one) and extra ones are ignored, but a field that is there must have
        // the schema's type. schema_version is checked by the reader itself.
        void leniently(json& s)
        {
            if (s.is_object())
            {
                s.erase("required");
                // a closed object (false) opens; a map's value type ({"type": "string"}) is kept
                if (auto extra = s.find("additionalProperties"); extra != s.end() && !extra->is_object())
                {
                    s.erase(extra);
                }
                s.erase("$schema");
                if (auto props = s.find("properties"); props != s.end() && props->is_object())
                {
                    if (auto v = props->find("schema_version"); v != props->end())
                    {
                        *v = json{{"type", "integer"}};
                    }
                }
                for (auto& [k, v] : s.items())
                {
                    leniently(v);
                }
            }
            else if (s.is_array())
            {
                for (auto& v : s)
                {
                    leniently(v);
                }
            }
        }

        // "<root>" "[samples]" "[0]" ... -> "/samples/0/..."
        // A quick pass over a record, checking only the keywords this file's records use (type,
        // properties, items, $ref, anyOf, enum, minimum, maximum), with exact JSON types and nothing
        // allocated. It is stricter than valijson (weak types, integral floats): when it accepts,
        // valijson would too, so valijson runs only for a record it does not accept, to decide
        // and word the error. A keyword it does not know makes its node never accept. Valijson
        // builds a context path and a set of matched names for every object it visits, which was
        // a sixth of loading a large report.
        class quick_type_check
        {
        public:
            explicit quick_type_check(const json& document) : m_document(document)
            {
                m_root = compile(document);
            }

            bool accepts(const json& j) const { return accepts(m_root, j); }

        private:
            enum type_bit : unsigned
            {
                t_null = 1,
                t_boolean = 2,
                t_integer = 4,
                t_number = 8,
                t_string = 16,
                t_array = 32,
                t_object = 64,
            };
            struct node
            {
                bool understood = true;
                unsigned types = 0;  // 0: any type
                std::vector<std::pair<std::string, std::size_t>> properties;
                std::optional<std::size_t> other_properties;  // additionalProperties: a map's values
                std::optional<std::size_t> items;
                std::vector<std::size_t> any_of;
                const json* enum_values = nullptr;
                std::optional<double> minimum;
                std::optional<double> maximum;
            };
            const json& m_document;
            std::vector<node> m_nodes;
            std::map<std::string, std::size_t> m_defs;  // compiled $defs, by reference text
            std::size_t m_root = 0;

            static unsigned type_bits(const std::string& name)
            {
                static const std::map<std::string, unsigned> bits{
                    {"null", t_null},       {"boolean", t_boolean}, {"integer", t_integer}, {"number", t_number},
                    {"string", t_string},   {"array", t_array},     {"object", t_object}};
                auto it = bits.find(name);
                return it == bits.end() ? 0 : it->second;
            }

            static unsigned type_of(const json& j)
            {
                switch (j.type())
                {
                    case json::value_t::null: return t_null;
                    case json::value_t::boolean: return t_boolean;
                    case json::value_t::number_integer:
                    case json::value_t::number_unsigned: return t_integer | t_number;
                    case json::value_t::number_float: return t_number;
                    case json::value_t::string: return t_string;
                    case json::value_t::array: return t_array;
                    case json::value_t::object: return t_object;
                    default: return 0;  // binary, discarded: valijson decides
                }
            }

            std::size_t compile(const json& s)
            {
                const std::size_t at = m_nodes.size();
                m_nodes.emplace_back();
                node n;
                if (!s.is_object())
                {
                    n.understood = false;
                    m_nodes[at] = std::move(n);
                    return at;
                }
                if (auto ref = s.find("$ref"); ref != s.end())
                {
                    // held as an anyOf of the one referenced node; draft 7 ignores a $ref's siblings
                    const std::string text = ref->is_string() ? ref->get<std::string>() : "";
                    if (auto known = m_defs.find(text); known != m_defs.end())
                    {
                        n.any_of.push_back(known->second);
                    }
                    else if (text.rfind("#/$defs/", 0) == 0 && m_document.contains("$defs")
                             && m_document["$defs"].contains(text.substr(8)))
                    {
                        m_defs[text] = m_nodes.size();  // before compiling it: a def may refer to itself
                        n.any_of.push_back(compile(m_document["$defs"][text.substr(8)]));
                    }
                    else
                    {
                        n.understood = false;
                    }
                    m_nodes[at] = std::move(n);
                    return at;
                }
                for (const auto& [keyword, value] : s.items())
                {
                    if (keyword == "description" || keyword == "title" || keyword == "$defs" || keyword == "default")
                    {
                        continue;
                    }
                    if (keyword == "type")
                    {
                        for (const auto& t : value.is_array() ? value : json::array({value}))
                        {
                            const unsigned bit = t.is_string() ? type_bits(t.get<std::string>()) : 0;
                            n.understood = n.understood && bit != 0;
                            n.types |= bit == t_number ? (t_number | t_integer) : bit;
                        }
                    }
                    else if (keyword == "properties" && value.is_object())
                    {
                        for (const auto& [name, sub] : value.items())
                        {
                            n.properties.emplace_back(name, compile(sub));
                        }
                        std::sort(n.properties.begin(), n.properties.end());
                    }
                    else if (keyword == "items" && value.is_object())
                    {
                        n.items = compile(value);
                    }
                    else if (keyword == "additionalProperties" && value.is_object())
                    {
                        n.other_properties = compile(value);
                    }
                    else if (keyword == "anyOf" && value.is_array() && !value.empty() && n.any_of.empty())
                    {
                        for (const auto& sub : value)
                        {
                            n.any_of.push_back(compile(sub));
                        }
                    }
                    else if (keyword == "enum" && value.is_array())
                    {
                        n.enum_values = &value;
                    }
                    else if (keyword == "minimum" && value.is_number())
                    {
                        n.minimum = value.get<double>();
                    }
                    else if (keyword == "maximum" && value.is_number())
                    {
                        n.maximum = value.get<double>();
                    }
                    else
                    {
                        n.understood = false;
                    }
                }
                m_nodes[at] = std::move(n);
                return at;
            }

            bool accepts(std::size_t at, const json& j) const
            {
                const node& n = m_nodes[at];
                if (!n.understood)
                {
                    return false;
                }
                const unsigned type = type_of(j);
                if (type == 0 || (n.types != 0 && (n.types & type) == 0))
                {
                    return false;
                }
                if (n.enum_values && std::find(n.enum_values->begin(), n.enum_values->end(), j) == n.enum_values->end())
                {
                    return false;
                }
                if (n.minimum && j.is_number() && j.get<double>() < *n.minimum)
                {
                    return false;
                }
                if (n.maximum && j.is_number() && j.get<double>() > *n.maximum)
                {
                    return false;
                }
                if (j.is_object() && (!n.properties.empty() || n.other_properties))
                {
                    // both sorted by name (a JSON object is a std::map): one walk, no lookups
                    auto property = n.properties.begin();
                    for (const auto& [name, value] : j.items())
                    {
                        while (property != n.properties.end() && property->first < name)
                        {
                            ++property;
                        }
                        const bool named = property != n.properties.end() && property->first == name;
                        if (named ? !accepts(property->second, value)
                                  : n.other_properties && !accepts(*n.other_properties, value))
                        {
                            return false;
                        }
                        if (property == n.properties.end() && !n.other_properties)
                        {
                            break;
                        }
                    }
                }
                if (n.items && j.is_array())
                {
                    for (const auto& element : j)
                    {
                        if (!accepts(*n.items, element))
                        {
                            return false;
                        }
                    }
                }
                if (!n.any_of.empty()
                    && std::none_of(n.any_of.begin(), n.any_of.end(), [&](std::size_t sub) { return accepts(sub, j); }))
                {
                    return false;
                }
                return true;
            }
        };

        // "a number or null", from a schema node's type (through $ref and anyOf), for a message.
        std::string type_words(const json& root, const json& node, int depth = 0)
        {
            if (depth > 16 || !node.is_object())
            {
                return {};
            }
            if (auto ref = node.find("$ref"); ref != node.end() && ref->is_string() && ref->get<std::string>().rfind("#/$defs/", 0) == 0)
            {
                const std::string def = ref->get<std::string>().substr(8);
                return root.contains("$defs") && root["$defs"].contains(def) ? type_words(root, root["$defs"][def], depth + 1) : "";
            }
            std::vector<std::string> words;
            if (auto t = node.find("type"); t != node.end())
            {
                for (const auto& one : t->is_array() ? *t : json::array({*t}))
                {
                    const std::string name = one.is_string() ? one.get<std::string>() : "";
                    words.push_back(name == "integer" ? "a whole number" : name == "null" ? "null"
                                    : name == "array" ? "a list" : name == "object" ? "an object" : "a " + name);
                }
            }
            if (auto e = node.find("enum"); e != node.end())
            {
                words.push_back("one of " + e->dump());
            }
            // a number out of range reads "a number from 0 to 1e+12", not a type mismatch
            const auto bound = [&](const char* key) {
                auto b = node.find(key);
                if (b == node.end() || !b->is_number())
                {
                    return std::string();
                }
                const double v = b->get<double>();
                char text[32];
                std::snprintf(text, sizeof text, v == std::floor(v) && std::fabs(v) < 1e7 ? "%.0f" : "%g", v);
                return std::string(text);
            };
            if (const std::string low = bound("minimum"), high = bound("maximum"); !words.empty() && (!low.empty() || !high.empty()))
            {
                const std::string range = !low.empty() && !high.empty() ? " from " + low + " to " + high
                                          : !low.empty()                ? " of at least " + low
                                                                        : " of at most " + high;
                for (auto& w : words)
                {
                    if (w == "a number" || w == "a whole number")
                    {
                        w += range;
                    }
                }
            }
            for (const auto& sub : node.value("anyOf", json::array()))
            {
                const std::string w = type_words(root, sub, depth + 1);
                if (!w.empty())
                {
                    words.push_back(w);
                }
            }
            std::string out;
            for (std::size_t i = 0; i < words.size(); ++i)
            {
                out += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
            }
            return out;
        }

        // The schema node a path leads to (properties, a map's values, a list's items; through
        // $ref, and the first branch of an anyOf that has the next step), or null.
        const json* node_at(const json& root, const json* node, const std::string& step, int depth = 0)
        {
            if (!node || !node->is_object() || depth > 16)
            {
                return nullptr;
            }
            if (auto ref = node->find("$ref"); ref != node->end() && ref->is_string())
            {
                const std::string def = ref->get<std::string>().substr(std::min<std::size_t>(8, ref->get<std::string>().size()));
                return root.contains("$defs") && root["$defs"].contains(def) ? node_at(root, &root["$defs"][def], step, depth + 1)
                                                                             : nullptr;
            }
            if (auto props = node->find("properties"); props != node->end() && props->contains(step))
            {
                return &(*props)[step];
            }
            if (auto extra = node->find("additionalProperties"); extra != node->end() && extra->is_object())
            {
                return &*extra;
            }
            if (auto items = node->find("items"); items != node->end() && items->is_object()
                                                 && !step.empty() && std::isdigit(static_cast<unsigned char>(step[0])))
            {
                return &*items;
            }
            if (auto any = node->find("anyOf"); any != node->end() && any->is_array())
            {
                for (const auto& sub : *any)  // the document's own branches: a pointer into them is returned
                {
                    if (const json* found = node_at(root, &sub, step, depth + 1))
                    {
                        return found;
                    }
                }
            }
            return nullptr;
        }

        std::string type_of_value(const json& v)
        {
            switch (v.type())
            {
                case json::value_t::null: return "null";
                case json::value_t::boolean: return "a boolean";
                case json::value_t::number_integer:
                case json::value_t::number_unsigned: return "the whole number " + v.dump();
                case json::value_t::number_float: return "the number " + v.dump();
                case json::value_t::string: return "a string";
                case json::value_t::array: return "a list";
                case json::value_t::object: return "an object";
                default: return "something else";
            }
        }

        // "expected a number or null, got a string" for the field a validation error names.
        std::string expected_at(const json& document, const std::vector<std::string>& context, const json& value_root)
        {
            const json* node = &document;
            const json* value = &value_root;
            for (const auto& c : context)
            {
                if (c.size() < 2 || c.front() != '[' || c.back() != ']')
                {
                    continue;
                }
                std::string key = c.substr(1, c.size() - 2);
                if (key.size() >= 2 && key.front() == '"' && key.back() == '"')
                {
                    key = key.substr(1, key.size() - 2);
                }
                node = node_at(document, node, key);
                if (value && value->is_object() && value->contains(key))
                {
                    value = &(*value)[key];
                }
                else if (value && value->is_array() && !key.empty() && std::isdigit(static_cast<unsigned char>(key[0]))
                         && std::stoul(key) < value->size())
                {
                    value = &(*value)[std::stoul(key)];
                }
                else
                {
                    value = nullptr;
                }
            }
            const std::string words = node ? type_words(document, *node) : std::string();
            if (words.empty())
            {
                return {};
            }
            return "expected " + words + (value ? ", got " + type_of_value(*value) : std::string());
        }

        struct compiled_schema
        {
            json document;
            std::unique_ptr<schema_parts::schema_checker> checker;
            std::optional<quick_type_check> quick;  // records only: the whole report is checked once

            // The whole report, or one of its $defs (a record the reader streams).
            explicit compiled_schema(const std::string& def = "")
            {
                document = json::parse(report_schema_text);
                leniently(document);
                document = schema_parts::as_draft7(std::move(document), true);
                checker = std::make_unique<schema_parts::schema_checker>(document, def);
                if (!def.empty())
                {
                    document = json{{"$defs", document.at("$defs")}, {"$ref", "#/$defs/" + def}};
                    quick.emplace(document);
                }
            }
        };

        void check_against(const compiled_schema& compiled, const json& j, const std::string& at)
        {
            std::vector<std::string> context;
            std::string description;
            if (!compiled.checker->first_error(j, context, description))
            {
                return;
            }
            std::string path = schema_parts::json_path(context);
            const std::string expected = expected_at(compiled.document, context, j);
            path = at + (path == "/" && !at.empty() ? "" : path);
            throw report_error(report_error::kind::shape,
                               "malformed report: at " + path + ": " + (expected.empty() ? description : expected));
        }
    }

    void check_report_types(const json& j)
    {
        static const compiled_schema compiled;
        check_against(compiled, j, "");
    }

    namespace
    {
        const compiled_schema& record_schema(record_kind kind)
        {
            static const compiled_schema module_load_schema("module_load");
            static const compiled_schema launch_schema("launch_record");
            return kind == record_kind::module_load ? module_load_schema : launch_schema;
        }
    }

    void check_record_types(const json& record, record_kind kind, const std::string& at)
    {
        if (record_types_pass_quickly(record, kind))
        {
            return;
        }
        check_record_types_by_schema(record, kind, at);
    }

    bool record_types_pass_quickly(const json& record, record_kind kind)
    {
        return record_schema(kind).quick->accepts(record);
    }

    void check_record_types_by_schema(const json& record, record_kind kind, const std::string& at)
    {
        check_against(record_schema(kind), record, at);
    }
}
