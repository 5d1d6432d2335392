// warp-probe doctor: what a measurement here would see. Changes nothing.
#include <iostream>

#include "command.hpp"
#include "shared.hpp"
#include "xwarp/jobs/doctor/doctor.hpp"
#include "xwarp/jobs/usecases/exit_codes.hpp"
#include "xwarp/engine/install/layout.hpp"

namespace xwarp::cli
{
    namespace
    {
        class doctor_cmd : public subcommand
        {
        public:
            CLI::App* add(CLI::App& app) override
            {
                auto* sub = app.add_subcommand("doctor",
                                               "What a measurement here would see: OS, CPU, Python, Warp and where its "
                                               "cache would go, the CUDA toolkit (NVRTC, cudart), devices and driver. "
                                               "Changes nothing.");
                sub->add_option("--python", m_python, "the interpreter to ask about Warp (default: python3 on PATH)");
                sub->add_option("--json", m_json, "also write the facts as JSON");
                sub->add_option("--timeout", m_timeout, "seconds the interpreter has to answer (default 60)")
                    ->check(CLI::PositiveNumber);
                return sub;
            }

            int run() override
            {
                const view facts = doctor_view(run_doctor(m_python, default_shim_dir(), m_timeout));
                if (int rc = write_view_files(facts, m_json, ""))
                {
                    return rc;
                }
                write_view(std::cout, facts, view_part::text);
                return exit_code::ok;
            }

        private:
            std::string m_python = "python3";
            std::string m_json;
            double m_timeout = 60.0;
        };
    }

    std::unique_ptr<subcommand> doctor_command()
    {
        return std::make_unique<doctor_cmd>();
    }
}
