// The JSON Schema plumbing every contract of the model shares (the report, the shim's records,
// the shim's inputs, the fixer protocol): a schema file as valijson reads it (draft 7), compiled
// once per definition, and a value checked against it, its first error as "at /PATH: WHY".
// Private to the model layer.
#ifndef XWARP_MODEL_SCHEMA_CHECKER_HPP
#define XWARP_MODEL_SCHEMA_CHECKER_HPP

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace xwarp::schema_parts
{
    // The schema files are written for draft 2020-12 (the Python side's jsonschema reads them
    // so); valijson reads draft 7: prefixItems becomes items, $schema goes. `open` also drops
    // additionalProperties: false (fields a reader does not know are for it to ignore; the
    // strictness is the writer's test's).
    nlohmann::json as_draft7(nlohmann::json document, bool open);

    // valijson's context ("<root>" "[args]" "[0]") as a JSON pointer ("/args/0").
    std::string json_path(const std::vector<std::string>& context);

    // One definition of a schema document (its $defs/NAME, or the whole document for ""),
    // compiled once.
    class schema_checker
    {
    public:
        // `document` as as_draft7 left it.
        schema_checker(const nlohmann::json& document, const std::string& definition, bool strong_types = true);
        ~schema_checker();
        schema_checker(const schema_checker&) = delete;
        schema_checker& operator=(const schema_checker&) = delete;

        // "" when the value is inside; else where and why, from the innermost error.
        std::string violation(const nlohmann::json& value) const;
        // The same, as the error's context (for a reader that words it itself); empty when inside.
        bool first_error(const nlohmann::json& value, std::vector<std::string>& context, std::string& description) const;

    private:
        struct compiled;
        std::unique_ptr<compiled> m_compiled;
        bool m_strong;
    };
}

#endif
