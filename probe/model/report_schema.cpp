// The report's field types, checked with valijson against the project's JSON Schema (its text
// is compiled in: report_schema_text.cpp is generated from probe/schema/report.schema.json).
#include <sstream>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

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
                s.erase("additionalProperties");
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

        struct compiled_schema
        {
            json document;
            valijson::Schema schema;

            // The whole report, or one of its $defs (a record the reader streams).
            explicit compiled_schema(const std::string& def = "")
            {
                document = json::parse(report_schema_text);
                leniently(document);
                if (!def.empty())
                {
                    document = json{{"$defs", document.at("$defs")}, {"$ref", "#/$defs/" + def}};
                }
                valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
                valijson::adapters::NlohmannJsonAdapter adapter(document);
                parser.populateSchema(adapter, schema);
            }
        };

        void check_against(const compiled_schema& compiled, const json& j, const std::string& at)
        {
            valijson::Validator validator(valijson::Validator::kWeakTypes);
            valijson::ValidationResults results;
            valijson::adapters::NlohmannJsonAdapter adapter(j);
            if (validator.validate(compiled.schema, adapter, &results))
            {
                return;
            }
            // The first error is the innermost: the field itself.
            valijson::ValidationResults::Error error;
            results.popError(error);
            std::string path = json_path(error.context);
            path = at + (path == "/" && !at.empty() ? "" : path);
            throw report_error(report_error::kind::shape, "malformed report: at " + path + ": " + error.description);
        }

    }

    void check_report_types(const json& j)
    {
        static const compiled_schema compiled;
        check_against(compiled, j, "");
    }

    void check_record_types(const json& record, record_kind kind, const std::string& at)
    {
        static const compiled_schema module_load_schema("module_load");
        static const compiled_schema launch_schema("launch_record");
        check_against(kind == record_kind::module_load ? module_load_schema : launch_schema, record, at);
    }
}
