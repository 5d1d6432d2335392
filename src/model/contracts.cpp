// The shim's inputs, the fixer protocol, the warm-up file's targets and a recorded run's passes: their
// schema files, compiled in, checked here.
#include "xwarp/model/contracts.hpp"

#include <map>
#include <memory>
#include <mutex>

#include "schema_checker.hpp"

namespace xwarp
{
    extern const char* const shim_inputs_text;
    extern const char* const fixer_protocol_text;
    extern const char* const warmup_targets_text;
    extern const char* const recorded_run_text;

    namespace
    {
        using nlohmann::json;

        // Both are checked closed: these are inputs a warp-probe of this version writes and
        // reads itself, so a field either side does not know is a bug, not a newer writer.
        const json& document_of(contract which)
        {
            static const json shim = schema_parts::as_draft7(json::parse(shim_inputs_text), false);
            static const json fixer = schema_parts::as_draft7(json::parse(fixer_protocol_text), false);
            static const json warmup = schema_parts::as_draft7(json::parse(warmup_targets_text), false);
            static const json recorded = schema_parts::as_draft7(json::parse(recorded_run_text), false);
            if (which == contract::recorded_pass)
            {
                return recorded;
            }
            if (which == contract::warmup_plan || which == contract::warmup_config || which == contract::warmup_results)
            {
                return warmup;
            }
            return which == contract::fixer_request || which == contract::fixer_response ? fixer : shim;
        }

        const char* definition_of(contract which)
        {
            switch (which)
            {
                case contract::whatif_spec: return "whatif";
                case contract::shim_environment: return "environment";
                case contract::fixer_request: return "request";
                case contract::fixer_response: return "response";
                case contract::warmup_plan: return "";
                case contract::warmup_config: return "config";
                case contract::warmup_results: return "results";
                case contract::recorded_pass: return "pass";
            }
            return "";
        }

        const schema_parts::schema_checker& checker_of(contract which, const std::string& definition)
        {
            static std::mutex lock;
            static std::map<std::pair<contract, std::string>, std::unique_ptr<schema_parts::schema_checker>> compiled;
            std::lock_guard<std::mutex> hold(lock);
            auto& slot = compiled[{which, definition}];
            if (!slot)
            {
                slot = std::make_unique<schema_parts::schema_checker>(document_of(which), definition);
            }
            return *slot;
        }

        // The $defs entry of a lever's variant, or "".
        std::string lever_definition(const std::string& lever)
        {
            for (const auto& [name, def] : document_of(contract::whatif_spec).at("$defs").items())
            {
                if (def.contains("properties") && def["properties"].contains("lever")
                    && def["properties"]["lever"].value("const", "") == lever)
                {
                    return name;
                }
            }
            return {};
        }
    }

    std::string contract_violation(contract which, const json& value)
    {
        if (which == contract::whatif_spec && value.is_object() && value.contains("lever") && value["lever"].is_string())
        {
            // checked against its own lever's variant: "one of nine did not match" says nothing
            const std::string lever = value["lever"].get<std::string>();
            const std::string definition = lever_definition(lever);
            if (definition.empty())
            {
                return "lever '" + lever.substr(0, 60) + "' is not in the shim's inputs contract (version "
                       + std::to_string(shim_inputs_version()) + ")";
            }
            const std::string wrong = checker_of(which, definition).violation(value);
            return wrong.empty() ? wrong : lever + ": " + wrong;
        }
        return checker_of(which, definition_of(which)).violation(value);
    }

    int fixer_protocol_version()
    {
        return document_of(contract::fixer_request).at("x-protocol-version").get<int>();
    }

    int warmup_plan_version()
    {
        return document_of(contract::warmup_plan).at("x-contract-version").get<int>();
    }

    int shim_inputs_version()
    {
        return document_of(contract::whatif_spec).at("x-contract-version").get<int>();
    }

    std::vector<std::string> fixer_operations()
    {
        return document_of(contract::fixer_request).at("$defs").at("operation").at("properties").at("op").at("enum");
    }

    std::vector<std::string> contract_levers()
    {
        std::vector<std::string> out;
        for (const auto& variant : document_of(contract::whatif_spec).at("$defs").at("whatif").at("oneOf"))
        {
            const std::string ref = variant.at("$ref");
            out.push_back(document_of(contract::whatif_spec).at("$defs").at(ref.substr(ref.rfind('/') + 1))
                              .at("properties").at("lever").at("const"));
        }
        return out;
    }

    std::vector<std::string> contract_kept_caches(const std::string& lever)
    {
        const json& defs = document_of(contract::whatif_spec).at("$defs");
        for (const auto& [name, def] : defs.items())
        {
            if (def.contains("properties") && def["properties"].contains("lever")
                && def["properties"]["lever"].value("const", "") == lever)
            {
                return def.value("x-keeps", std::vector<std::string>{});
            }
        }
        return {};
    }

    std::vector<std::string> never_the_programs()
    {
        return document_of(contract::warmup_plan).at("x-never-the-programs");
    }

    nlohmann::json warmup_config_rule()
    {
        const json& def = document_of(contract::warmup_config).at("$defs").at("config");
        return {{"properties", def.at("properties")}, {"flag_patterns", def.at("x-flag-patterns")}};
    }

    std::vector<std::string> compiler_flag_patterns()
    {
        return document_of(contract::warmup_config).at("$defs").at("config").at("x-flag-patterns");
    }

    std::vector<std::string> contract_effects(const std::string& lever)
    {
        const json& defs = document_of(contract::whatif_spec).at("$defs");
        for (const auto& [name, def] : defs.items())
        {
            if (def.contains("properties") && def["properties"].contains("lever")
                && def["properties"]["lever"].value("const", "") == lever)
            {
                return def.value("x-effects", std::vector<std::string>{});
            }
        }
        return {};
    }
}
