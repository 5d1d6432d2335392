// The shim contract, checked with valijson: one compiled schema per record type, made on first use.
#include "xwarp/model/shim_contract.hpp"

#include <map>
#include <memory>
#include <mutex>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

namespace xwarp
{
    extern const char* const shim_contract_text;

    namespace
    {
        using nlohmann::json;

        // Fields the contract does not name are the reader's to ignore: the strictness is the
        // shim's test's (additionalProperties stays in the file for it).
        void without_closed_objects(json& s)
        {
            if (s.is_object())
            {
                s.erase("additionalProperties");
                for (auto& [k, v] : s.items())
                {
                    without_closed_objects(v);
                }
            }
            else if (s.is_array())
            {
                for (auto& v : s)
                {
                    without_closed_objects(v);
                }
            }
        }

        // Draft 7 (valijson's newest) writes a fixed-length array as "items": [...]: the file's
        // prefixItems (2020-12, which the Python side reads) becomes that here.
        void as_draft7(json& s)
        {
            if (s.is_object())
            {
                if (auto p = s.find("prefixItems"); p != s.end())
                {
                    s["items"] = *p;
                    s.erase("prefixItems");
                }
                for (auto& [k, v] : s.items())
                {
                    as_draft7(v);
                }
            }
            else if (s.is_array())
            {
                for (auto& v : s)
                {
                    as_draft7(v);
                }
            }
        }

        const json& contract_document()
        {
            static const json document = []
            {
                json d = json::parse(shim_contract_text);
                d.erase("$schema");
                without_closed_objects(d);
                as_draft7(d);
                return d;
            }();
            return document;
        }

        // "<root>" "[args]" "[0]" ... -> "/args/0"
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

        struct record_schema
        {
            valijson::Schema schema;
            explicit record_schema(const std::string& type)
            {
                const json doc = {{"$defs", contract_document().at("$defs")}, {"$ref", "#/$defs/" + type}};
                valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
                valijson::adapters::NlohmannJsonAdapter adapter(doc);
                parser.populateSchema(adapter, schema);
            }
        };

        // The compiled schema of a record type, or nullptr for a type the contract does not list.
        const record_schema* schema_of(const std::string& type)
        {
            static std::mutex lock;
            static std::map<std::string, std::unique_ptr<record_schema>> compiled;
            std::lock_guard<std::mutex> hold(lock);
            if (auto it = compiled.find(type); it != compiled.end())
            {
                return it->second.get();
            }
            const json& types = contract_document().at("properties").at("type").at("enum");
            if (std::find(types.begin(), types.end(), type) == types.end())
            {
                return nullptr;
            }
            return (compiled[type] = std::make_unique<record_schema>(type)).get();
        }
    }

    int shim_contract_version()
    {
        return contract_document().at("x-contract-version").get<int>();
    }

    std::string shim_record_violation(const json& record)
    {
        const auto type = record.find("type");
        if (type == record.end() || !type->is_string())
        {
            return "a record without a type (a string) is not in the shim contract";
        }
        const std::string name = type->get<std::string>();
        const record_schema* compiled = schema_of(name);
        if (!compiled)
        {
            return "record type '" + name.substr(0, 60) + "' is not in the shim contract (version "
                   + std::to_string(shim_contract_version()) + ")";
        }
        valijson::Validator validator;
        valijson::ValidationResults results;
        valijson::adapters::NlohmannJsonAdapter adapter(record);
        if (validator.validate(compiled->schema, adapter, &results))
        {
            return {};
        }
        valijson::ValidationResults::Error error;
        results.popError(error);
        return name + " record: at " + json_path(error.context) + ": " + error.description;
    }
}
