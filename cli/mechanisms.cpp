// warp-probe mechanisms [--json]: the mechanism registry and the lever registry.
#include <iostream>

#include "command.hpp"
#include "xwarp/analysis/levers.hpp"
#include "xwarp/analysis/mechanisms.hpp"
#include "xwarp/fronts/exit_codes.hpp"

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
                if (m_json)
                {
                    std::cout << nlohmann::json{{"mechanisms", mechanisms_to_json()}, {"levers", levers_to_json()}}.dump(2)
                              << "\n";
                    return exit_code::ok;
                }
                std::cout << "Mechanisms (references/mechanisms.md has a section for each)\n";
                for (const auto& m : mechanism_registry())
                {
                    std::string kind = m.kind;
                    kind.resize(10, ' ');
                    std::cout << "  " << padded(m.id, 21) << kind << padded(m.lever.empty() ? "-" : m.lever, 22) << m.title
                              << "\n";
                }
                std::cout << "\nA lever is what `--whatif` would apply at run time; '-' has none:\n";
                for (const auto& m : mechanism_registry())
                {
                    if (m.lever.empty())
                    {
                        std::cout << "  " << m.id << ": " << m.no_lever << "\n";
                    }
                }
                std::cout << "\nLevers (probe/analysis/levers/ and the shim's xwarp_levers.py)\n";
                for (const auto& l : lever_registry())
                {
                    std::cout << "  " << padded(l.name, 22) << l.changes << "\n";
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
