#include "fixer_client.hpp"

#include <filesystem>

#include "helper_tools.hpp"
#include "xwarp/engine/install/layout.hpp"
#include "xwarp/model/contracts.hpp"
#include "xwarp/engine/os/tempdir.hpp"

namespace xwarp::fix_parts
{
    namespace fs = std::filesystem;
    using nlohmann::json;

    std::string fixer_python(const measure_options& rerun)
    {
        if (!rerun.python.empty())
        {
            return rerun.python;
        }
        if (!rerun.command.empty())
        {
            const std::string name = fs::path(rerun.command[0]).filename().string();
            if (name.rfind("python", 0) == 0)
            {
                const fs::path p = fs::path(rerun.command[0]);
                return p.is_relative() && rerun.command[0].find('/') != std::string::npos
                           ? (fs::path(rerun.cwd.empty() ? "." : rerun.cwd) / p).string()
                           : rerun.command[0];
            }
        }
        return "python3";
    }

    namespace
    {
        std::string installed_fixer(std::string fixer)
        {
            if (fixer.empty())
            {
                const std::string shim = default_shim_dir();
                fixer = shim.empty() ? std::string() : (fs::path(shim).parent_path() / "fixer" / "xwarp_fix.py").string();
            }
            std::error_code ec;
            if (fixer.empty() || !fs::exists(fixer, ec))
            {
                throw fix_error("the fixer (share/xwarp/fixer/xwarp_fix.py) is not installed beside warp-probe");
            }
            return fixer;
        }
    }

    json run_fixer(const std::vector<fix_plan>& plans, const report& analysed, const std::string& root,
                   const std::string& python, const std::string& fixer, const cancel_check& cancelled)
    {
        const program_files files = program_files_of(analysed);
        json fixes = json::array();
        for (const auto& p : plans)
        {
            if (!p.ops.empty())
            {
                fixes.push_back({{"id", p.id}, {"ops", p.ops}});
            }
        }
        if (fixes.empty())
        {
            return {{"fixes", json::array()}};
        }
        const std::string script = installed_fixer(fixer);
        const json request_json = {{"protocol", fixer_protocol_version()},
                                   {"root", root},
                                   {"entry", files.entry},
                                   {"kernel_modules", files.kernel_modules},
                                   {"launch_sites", files.launch_sites},
                                   {"fixes", fixes}};
        // an operation the analysis planned outside the protocol is this program's bug, caught
        // here rather than as a fixer that finds no handler
        if (const std::string wrong = contract_violation(contract::fixer_request, request_json); !wrong.empty())
        {
            throw fix_error("internal: the fixer request is outside the protocol: " + wrong);
        }
        scoped_temp_dir tmp("xwarp-fix-");
        write_file(tmp.path() + "/request.json", request_json.dump());
        const tool_run r = run_tool(python, {script, tmp.path() + "/request.json", tmp.path() + "/response.json"}, root,
                                    cancelled);
        const json answer = json::parse(read_file(tmp.path() + "/response.json"), nullptr, false);
        if (!r.ok || answer.is_discarded() || !answer.is_object())
        {
            throw fix_error("the fixer could not run with " + python + ": " + r.err.substr(0, 2000));
        }
        if (const std::string wrong = contract_violation(contract::fixer_response, answer); !wrong.empty())
        {
            throw fix_error("the fixer (" + fixer + ") answered outside the protocol: " + wrong);
        }
        return answer;
    }

    fix_result result_of(const fix_plan& p, const json& answer)
    {
        fix_result f;
        f.finding = p.finding_name();
        f.mechanism = p.mechanism;
        f.lever = p.lever;
        f.module = p.module;
        f.verdict = fix_verdict::no_patch;
        f.reason = p.no_form;
        for (const auto& a : answer.value("fixes", json::array()))
        {
            if (a.value("id", "") != p.id)
            {
                continue;
            }
            f.patch = a.value("patch", "");
            f.files = a.value("files", std::vector<std::string>{});
            f.notes = a.value("notes", std::vector<std::string>{});
            f.reason = f.patch.empty() ? a.value("reason", std::string("the fixer wrote no patch")) : "";
            f.verdict = f.patch.empty() ? fix_verdict::no_patch : fix_verdict::not_verified;
        }
        return f;
    }

    std::string combined_patch(const std::vector<const fix_plan*>& plans, const report& analysed, const std::string& root,
                               const std::string& python, const std::string& fixer, const cancel_check& cancelled,
                               std::string& why)
    {
        fix_plan together;
        together.id = "together";
        for (const auto* p : plans)
        {
            for (const auto& op : p->ops)
            {
                together.ops.push_back(op);
            }
        }
        const json answer = run_fixer({together}, analysed, root, python, fixer, cancelled);
        for (const auto& a : answer.value("fixes", json::array()))
        {
            why = a.value("reason", std::string());
            return a.value("patch", std::string());
        }
        why = "the fixer wrote nothing";
        return {};
    }
}
