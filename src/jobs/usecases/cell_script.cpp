#include "xwarp/jobs/usecases/cell_script.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>

#include "xwarp/jobs/usecases/use_cases.hpp"

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

        using place_fn = std::function<void(std::optional<std::string>& file, std::optional<int>& line)>;

        // A place a record keeps in JSON ({"file", "line"}), visited as the typed places are;
        // written back only when it moved.
        void visit_json_place(nlohmann::json& holder, const char* key, const place_fn& fn)
        {
            if (!holder.is_object() || !holder.contains(key) || !holder[key].is_object())
            {
                return;
            }
            std::optional<std::string> file = holder[key].value("file", "");
            std::optional<int> line = holder[key].value("line", 0);
            const auto before = std::make_pair(file, line);
            fn(file, line);
            if (std::make_pair(file, line) != before)
            {
                holder[key]["file"] = *file;
                holder[key]["line"] = *line;
            }
        }

        // Every place the records of a report's passes hold: dirty events (and the factory
        // caller they name), config assignments, module creations, calls (and a factory's
        // default and caller in their arguments).
        void visit_places(report& r, const place_fn& fn, const std::function<void(process_record&)>& per_process = {})
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
                        for (auto& e : p.dirty_events)
                        {
                            fn(e.file, e.line);
                            visit_json_place(e.detail, "called_from", fn);
                        }
                        for (auto& e : p.config_sets)
                        {
                            fn(e.file, e.line);
                        }
                        for (auto& e : p.modules_created)
                        {
                            fn(e.file, e.line);
                        }
                        for (auto& e : p.calls)
                        {
                            fn(e.file, e.line);
                            visit_json_place(e.args, "default", fn);      // a factory's default
                            visit_json_place(e.args, "called_from", fn);  // the factory's caller
                        }
                        if (per_process)
                        {
                            per_process(p);
                        }
                    }
                }
            }
        }
    }

    void unrelabel_cell_locations(report& r, const std::string& script, int setup_lines)
    {
        visit_places(
            r, [&](std::optional<std::string>& file, std::optional<int>& line) { into_script(file, line, script, setup_lines); },
            [&](process_record& p)
            {
                if (!p.argv.empty())
                {
                    p.argv[0] = script;
                }
            });
    }

    void relabel_cell_locations(report& r, const std::string& script, int setup_lines)
    {
        visit_places(r, [&](std::optional<std::string>& file, std::optional<int>& line)
                     { relabel_place(file, line, script, setup_lines); });
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
