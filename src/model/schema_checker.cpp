#include "schema_checker.hpp"

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

namespace xwarp::schema_parts
{
    using nlohmann::json;

    namespace
    {
        void rewrite(json& s, bool open)
        {
            if (s.is_object())
            {
                if (open)
                {
                    if (auto extra = s.find("additionalProperties"); extra != s.end() && !extra->is_object())
                    {
                        s.erase(extra);
                    }
                }
                if (auto p = s.find("prefixItems"); p != s.end())
                {
                    s["items"] = *p;
                    s.erase("prefixItems");
                }
                for (auto& [k, v] : s.items())
                {
                    rewrite(v, open);
                }
            }
            else if (s.is_array())
            {
                for (auto& v : s)
                {
                    rewrite(v, open);
                }
            }
        }
    }

    json as_draft7(json document, bool open)
    {
        document.erase("$schema");
        rewrite(document, open);
        return document;
    }

    std::string json_path(const std::vector<std::string>& context)
    {
        std::string path;
        for (const auto& c : context)
        {
            if (c.size() >= 2 && c.front() == '[' && c.back() == ']')
            {
                std::string key = c.substr(1, c.size() - 2);
                if (key.size() >= 2 && key.front() == '"' && key.back() == '"')
                {
                    key = key.substr(1, key.size() - 2);
                }
                path += "/" + key;
            }
        }
        return path.empty() ? "/" : path;
    }

    struct schema_checker::compiled
    {
        valijson::Schema schema;
    };

    schema_checker::schema_checker(const json& document, const std::string& definition, bool strong_types)
        : m_compiled(std::make_unique<compiled>()), m_strong(strong_types)
    {
        const json doc = definition.empty() ? document
                                            : json{{"$defs", document.at("$defs")}, {"$ref", "#/$defs/" + definition}};
        valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
        valijson::adapters::NlohmannJsonAdapter adapter(doc);
        parser.populateSchema(adapter, m_compiled->schema);
    }

    schema_checker::~schema_checker() = default;

    bool schema_checker::first_error(const json& value, std::vector<std::string>& context, std::string& description) const
    {
        valijson::Validator validator(m_strong ? valijson::Validator::kStrongTypes : valijson::Validator::kWeakTypes);
        valijson::ValidationResults results;
        valijson::adapters::NlohmannJsonAdapter adapter(value);
        if (validator.validate(m_compiled->schema, adapter, &results))
        {
            return false;
        }
        // The first error is the innermost: the field itself.
        valijson::ValidationResults::Error error;
        results.popError(error);
        context = error.context;
        description = error.description;
        return true;
    }

    std::string schema_checker::violation(const json& value) const
    {
        std::vector<std::string> context;
        std::string description;
        if (!first_error(value, context, description))
        {
            return {};
        }
        return "at " + json_path(context) + ": " + description;
    }
}
