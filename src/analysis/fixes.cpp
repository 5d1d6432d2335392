// warp-probe fix, the analysis half: each finding's code form, from its lever's file or, for a
// mechanism without a lever, from its detector's; or why there is none.
#include "xwarp/analysis/fixes.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "levers/lever.hpp"
#include "mechanisms/detector.hpp"

namespace xwarp
{
    using nlohmann::json;

    namespace
    {
        bool selected(std::size_t index, const finding& f, const std::string& which, const std::string& lever)
        {
            if (!lever.empty() && f.lever != lever)
            {
                return false;
            }
            if (which.empty())
            {
                return true;
            }
            const bool number = std::all_of(which.begin(), which.end(), [](unsigned char c) { return std::isdigit(c); });
            return number ? std::to_string(index) == which : f.mechanism == which;
        }

        std::string lowered(std::string s)
        {
            std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            std::replace(s.begin(), s.end(), '_', '-');
            return s;
        }

        void code_form_of(fix_plan& p, const finding& f, const fix_input& in)
        {
            if (f.library)
            {
                p.no_form = "the place that caused it is library code (" + (f.location ? f.location->file : std::string("?"))
                            + (f.owner ? ", " + owner_phrase(*f.owner) : std::string())
                            + "): not the program's own file to edit; the finding says what you can do from your side";
                return;
            }
            if (f.owner && f.owner->kind == owner_kind::elsewhere)
            {
                p.no_form = "the place that caused it (" + (f.location ? f.location->file : std::string("?"))
                            + ") is not in an installed package and not in this project (" + f.owner->evidence
                            + "): fix patches only the project's files";
                return;
            }
            if (const auto* lever = f.lever.empty() ? nullptr : levers::find(f.lever))
            {
                p.lever = lever->info.name;
                if (lever->code_form)
                {
                    lever->code_form(p, in);
                }
                else
                {
                    p.no_form = lever->no_code_form ? lever->no_code_form : "its lever has no code form";
                }
                return;
            }
            const auto* d = detect::find_detector(f.mechanism);
            if (d && d->code_form)
            {
                d->code_form(p, in);
                p.lever = p.ops.empty() ? "code" : lowered(p.ops[0].value("op", "code"));
                return;
            }
            p.no_form = d && !d->info.no_lever.empty() ? d->info.no_lever : "no mechanical form is known for it";
        }
    }

    std::vector<fix_plan> plan_fixes(const report& analysed, const std::string& finding_filter, const std::string& lever)
    {
        std::vector<fix_plan> plans;
        const auto good = std::find_if(analysed.samples.begin(), analysed.samples.end(), [](const sample& s) { return s.ok(); });
        if (good == analysed.samples.end())
        {
            return plans;
        }
        std::set<std::string> ids;
        for (std::size_t i = 0; i < analysed.findings.size(); ++i)
        {
            const finding& f = analysed.findings[i];
            if (!selected(i + 1, f, finding_filter, lever))
            {
                continue;
            }
            fix_plan p;
            p.index = i + 1;
            p.mechanism = f.mechanism;
            p.module = f.module;
            code_form_of(p, f, fix_input{analysed, f, good->cold});
            p.id = lowered(p.mechanism) + "-" + (p.lever.empty() ? "none" : p.lever);
            if (!ids.insert(p.id).second)
            {
                p.id += "-" + std::to_string(p.index);
            }
            plans.push_back(std::move(p));
        }
        return plans;
    }

    program_files program_files_of(const report& r)
    {
        program_files out;
        const auto good = std::find_if(r.samples.begin(), r.samples.end(), [](const sample& s) { return s.ok(); });
        if (good == r.samples.end())
        {
            return out;
        }
        // The entry the shim saw run as __main__ (python -m pkg: pkg/__main__.py), else the
        // script the first process's argv names (a report from before the shim recorded it).
        for (const auto& p : good->cold.processes)
        {
            for (const auto& c : p.calls)
            {
                if (c.function == "entry" && c.args.is_object() && field_or(c.args, "file", json()).is_string())
                {
                    out.entry = c.args["file"].get<std::string>();
                    out.import_root = field_or(c.args, "root", std::string());
                }
            }
            if (!out.entry.empty())
            {
                break;
            }
        }
        for (const auto& p : good->cold.processes)
        {
            if (!out.entry.empty())
            {
                break;
            }
            if (!p.argv.empty() && !p.argv[0].empty() && p.argv[0] != "-c" && p.argv[0] != "-m")
            {
                out.entry = p.argv[0][0] == '/' || r.cwd.empty() ? p.argv[0] : r.cwd + "/" + p.argv[0];
                break;
            }
        }
        std::set<std::pair<std::string, int>> sites;
        for (const auto& p : good->cold.processes)
        {
            for (const auto& c : p.calls)
            {
                for (const auto& frame : c.function == "launch" ? field_or(c.args, "stack", json::array()) : json::array())
                {
                    if (frame.is_array() && frame.size() >= 2 && frame[0].is_string() && frame[1].is_number_integer()
                        && sites.insert({frame[0].get<std::string>(), frame[1].get<int>()}).second)
                    {
                        out.launch_sites.push_back({{"file", frame[0]}, {"line", frame[1]}});
                    }
                }
            }
        }
        for (const auto& l : good->cold.module_loads)
        {
            // the Python modules that define its kernels (a module="unique" one is named after its
            // kernel, not after its Python module), and its own name
            std::vector<std::string> names{l.module.str()};
            if (l.snapshot)
            {
                for (const auto& k : l.snapshot->kernels)
                {
                    names.push_back(k.defined_in.str());
                }
            }
            for (const auto& m : names)
            {
                if (!m.empty() && !warps_own_module(m)
                    && std::find(out.kernel_modules.begin(), out.kernel_modules.end(), m) == out.kernel_modules.end())
                {
                    out.kernel_modules.push_back(m);
                }
            }
        }
        return out;
    }

    std::string module_file(const run_result& cold, const std::string& module)
    {
        for (const auto& p : cold.processes)
        {
            for (const auto& c : p.calls)
            {
                if (c.function == "kernel" && c.file && field_or(c.args, "module", std::string()) == module)
                {
                    return *c.file;
                }
            }
            for (const auto& m : p.modules_created)
            {
                if (m.module == module && m.file)
                {
                    return *m.file;
                }
            }
        }
        return {};
    }
}
