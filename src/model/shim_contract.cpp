// The shim contract: one compiled schema per record type, made on first use.
#include "xwarp/model/shim_contract.hpp"

#include <map>
#include <memory>
#include <mutex>

#include "schema_checker.hpp"

namespace xwarp
{
    extern const char* const shim_contract_text;

    namespace
    {
        using nlohmann::json;

        const json& contract_document()
        {
            static const json document = schema_parts::as_draft7(json::parse(shim_contract_text), true);
            return document;
        }

        // The compiled schema of a record type, or nullptr for a type the contract does not list.
        const schema_parts::schema_checker* schema_of(const std::string& type)
        {
            static std::mutex lock;
            static std::map<std::string, std::unique_ptr<schema_parts::schema_checker>> compiled;
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
            return (compiled[type] = std::make_unique<schema_parts::schema_checker>(contract_document(), type)).get();
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
        const schema_parts::schema_checker* compiled = schema_of(name);
        if (!compiled)
        {
            return "record type '" + name.substr(0, 60) + "' is not in the shim contract (version "
                   + std::to_string(shim_contract_version()) + ")";
        }
        const std::string wrong = compiled->violation(record);
        return wrong.empty() ? wrong : name + " record: " + wrong;
    }
}
