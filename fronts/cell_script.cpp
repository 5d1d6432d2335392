#include "xwarp/fronts/cell_script.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "xwarp/fronts/use_cases.hpp"

namespace xwarp::fronts
{
    namespace
    {
        void relabel_place(std::optional<std::string>& file, std::optional<int>& line, const std::string& script,
                           int setup_lines)
        {
            if (!file || *file != script || !line)
            {
                return;
            }
            if (*line <= setup_lines + 1)
            {
                file = "<%%warp_setup>";
                *line -= 1;
            }
            else
            {
                file = "<cell>";
                *line -= setup_lines + 2;
            }
        }

        void relabel_process(process_record& p, const std::string& script, int setup_lines)
        {
            const auto fix = [&](std::optional<std::string>& file, std::optional<int>& line)
            { relabel_place(file, line, script, setup_lines); };
            for (auto& e : p.dirty_events)
            {
                fix(e.file, e.line);
                if (e.detail.contains("called_from") && e.detail["called_from"].value("file", "") == script)
                {
                    std::optional<std::string> f = script;
                    std::optional<int> l = e.detail["called_from"].value("line", 0);
                    fix(f, l);
                    e.detail["called_from"] = {{"file", *f}, {"line", *l}};
                }
            }
            for (auto& e : p.config_sets)
            {
                fix(e.file, e.line);
            }
            for (auto& e : p.modules_created)
            {
                fix(e.file, e.line);
            }
            for (auto& e : p.calls)
            {
                fix(e.file, e.line);
                for (const char* key : {"default", "called_from"})  // a factory's default, the factory's caller
                {
                    if (e.args.is_object() && e.args.contains(key) && e.args[key].is_object()
                        && e.args[key].value("file", "") == script)
                    {
                        std::optional<std::string> f = script;
                        std::optional<int> l = e.args[key].value("line", 0);
                        fix(f, l);
                        e.args[key]["file"] = *f;
                        e.args[key]["line"] = *l;
                    }
                }
            }
        }
    }

    namespace
    {
        // A place the notebook shows (<cell>, <%%warp_setup>) as the script's line.
        void into_script(std::optional<std::string>& file, std::optional<int>& line, const std::string& script, int setup_lines)
        {
            if (!file || !line)
            {
                return;
            }
            if (*file == "<cell>")
            {
                file = script;
                *line += setup_lines + 2;
            }
            else if (*file == "<%%warp_setup>")
            {
                file = script;
                *line += 1;
            }
            else if (file->find("/xwarp-cell-") != std::string::npos && file->size() > 8
                     && file->compare(file->size() - 8, 8, "/cell.py") == 0)
            {
                file = script;  // a place the shim kept in a call's arguments: the probe's script of the same cell
            }
        }

        // The places a call's arguments hold (a factory's default, the factory's caller).
        void args_into_script(nlohmann::json& args, const std::string& script, int setup_lines)
        {
            for (const char* key : {"default", "called_from"})
            {
                if (!args.is_object() || !args.contains(key) || !args[key].is_object())
                {
                    continue;
                }
                std::optional<std::string> f = args[key].value("file", "");
                std::optional<int> l = args[key].value("line", 0);
                into_script(f, l, script, setup_lines);
                args[key]["file"] = *f;
                args[key]["line"] = *l;
            }
        }
    }

    void unrelabel_cell_locations(report& r, const std::string& script, int setup_lines)
    {
        const auto fix = [&](std::optional<std::string>& file, std::optional<int>& line)
        { into_script(file, line, script, setup_lines); };
        for (auto& s : r.samples)
        {
            for (auto* run : {&s.cold, s.warm ? &*s.warm : nullptr})
            {
                if (!run)
                {
                    continue;
                }
                for (auto& p : run->processes)
                {
                    for (auto& e : p.dirty_events)
                    {
                        fix(e.file, e.line);
                        if (e.detail.contains("called_from") && e.detail["called_from"].is_object())
                        {
                            std::optional<std::string> f = e.detail["called_from"].value("file", "");
                            std::optional<int> l = e.detail["called_from"].value("line", 0);
                            fix(f, l);
                            e.detail["called_from"] = {{"file", *f}, {"line", *l}};
                        }
                    }
                    for (auto& e : p.config_sets)
                    {
                        fix(e.file, e.line);
                    }
                    for (auto& e : p.modules_created)
                    {
                        fix(e.file, e.line);
                    }
                    for (auto& e : p.calls)
                    {
                        fix(e.file, e.line);
                        args_into_script(e.args, script, setup_lines);
                    }
                    if (!p.argv.empty())
                    {
                        p.argv[0] = script;
                    }
                }
            }
        }
    }

    void relabel_cell_locations(report& r, const std::string& script, int setup_lines)
    {
        for (auto& s : r.samples)
        {
            for (auto* run : {&s.cold, s.warm ? &*s.warm : nullptr})
            {
                if (!run)
                {
                    continue;
                }
                for (auto& p : run->processes)
                {
                    relabel_process(p, script, setup_lines);
                }
            }
        }
    }

    std::pair<std::string, int> write_cell_script(const std::string& folder, const std::string& setup, const std::string& cell)
    {
        const std::string script = folder + "/cell.py";
        const int setup_lines = setup.empty() ? 0 : static_cast<int>(std::count(setup.begin(), setup.end(), '\n')) + 1;
        std::ofstream out(script);
        out << "# %%warp_setup\n" << setup << (setup.empty() || setup.back() == '\n' ? "" : "\n") << "# %%warp_probe cell\n"
            << cell << "\n";
        if (!out)
        {
            throw job_error(job_error::kind::cannot_write, "cannot write the cell script " + script);
        }
        return {script, setup_lines};
    }
    measure_options cell_command(const std::string& script, const std::string& python, const std::string& folder)
    {
        measure_options mo;
        mo.command = {python, script};
        mo.extra_env["XWARP_RESULTS"] = "1";  // the arrays the cell leaves, for --expect results=same
        const char* inherited = std::getenv("PYTHONPATH");
        mo.extra_env["PYTHONPATH"] = folder + (inherited && *inherited ? std::string(":") + inherited : "");
        return mo;
    }
}
