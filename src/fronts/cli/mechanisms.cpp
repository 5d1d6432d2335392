// warp-probe mechanisms [--json]: the mechanism registry and the lever registry.
#include <iostream>

#include "command.hpp"
#include "xwarp/jobs/usecases/exit_codes.hpp"
#include "xwarp/jobs/usecases/use_cases.hpp"

namespace xwarp::cli
{
    namespace
    {
        std::string padded(std::string s, std::size_t width)
        {
            s.resize(std::max(s.size() + 1, width), ' ');
            return s;
        }

        class mechanisms_cmd : public subcommand
        {
        public:
            CLI::App* add(CLI::App& app) override
            {
                auto* sub = app.add_subcommand("mechanisms",
                                               "List every mechanism the diagnoses can name (its id, kind, guide section "
                                               "and the what-if lever that would fix it, or why none can) and every "
                                               "lever (what it changes at run time)");
                sub->add_flag("--json", m_json, "print both registries as JSON: {mechanisms: [...], levers: [...]}");
                return sub;
            }

            int run() override
            {
                const nlohmann::json registries = fronts::registries();
                if (m_json)
                {
                    std::cout << registries.dump(2) << "\n";
                    return exit_code::ok;
                }
                const auto text = [](const nlohmann::json& j, const char* key)
                { return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string(); };
                std::cout << "Mechanisms (references/mechanisms.md has a section for each)\n";
                for (const auto& m : registries["mechanisms"])
                {
                    std::string kind = text(m, "kind");
                    kind.resize(10, ' ');
                    const std::string lever = text(m, "lever");
                    std::cout << "  " << padded(text(m, "id"), 21) << kind << padded(lever.empty() ? "-" : lever, 22)
                              << text(m, "title") << "\n";
                }
                std::cout << "\nA lever is what `--whatif` would apply at run time; '-' has none:\n";
                for (const auto& m : registries["mechanisms"])
                {
                    if (text(m, "lever").empty())
                    {
                        std::cout << "  " << text(m, "id") << ": " << text(m, "no_lever") << "\n";
                    }
                }
                std::cout << "\nLevers (src/analysis/levers/ and the shim's xwarp_shim/levers.py)\n";
                for (const auto& l : registries["levers"])
                {
                    std::cout << "  " << padded(text(l, "name"), 22) << text(l, "changes") << "\n";
                }
                return exit_code::ok;
            }

        private:
            bool m_json = false;
        };
    }

    std::unique_ptr<subcommand> mechanisms_command()
    {
        return std::make_unique<mechanisms_cmd>();
    }
}
