// warp-probe warmup, the analysis half: the identities of a measured run as loads a warm-up
// file can repeat, and why the others cannot be repeated ahead of the program.
#include "xwarp/analysis/warmup_plan.hpp"

#include <algorithm>
#include <map>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "xwarp/analysis/fixes.hpp"
#include "xwarp/model/contracts.hpp"

namespace xwarp
{
    namespace
    {
        using json = nlohmann::json;

        // A type Warp's namespace holds (scalars, vectors, matrices, quaternions, transforms):
        // the only ones a file that imports nothing but Warp can name. vec_t, mat_t, quat_t...
        // are the class names of shapes it has no name for.
        bool warp_type_name(const std::string& name)
        {
            if (name.size() > 2 && name.compare(name.size() - 2, 2, "_t") == 0)
            {
                return false;
            }
            static const std::regex known(
                "(bool|int|float|u?int(8|16|32|64)|float(16|32|64)|vec\\w*|mat\\w*|quat\\w*|transform\\w*|"
                "spatial_vector\\w*|spatial_matrix\\w*|spatial_transform\\w*)");
            return std::regex_match(name, known);
        }

        bool dotted_identifier(const std::string& name)
        {
            static const std::regex dotted("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*");
            return std::regex_match(name, dotted);
        }

        std::string top_package(const std::string& module)
        {
            return module.substr(0, module.find('.'));
        }

        // A recorded argument type (the shim's {type}, {type, struct}, {array, dtype, ndim} or
        // {type, shape, scalar}) as the data the file builds it from, checked and cut to what the
        // file reads; null when the file cannot name it. A @wp.struct must be of the kernel's own
        // package (the worker that builds with it imports it).
        json type_spec(const json& spec, const std::string& package)
        {
            if (!spec.is_object())
            {
                return nullptr;
            }
            if (spec.contains("array"))
            {
                json dtype = type_spec(spec.value("dtype", json::object()), package);
                const json kind = spec["array"];
                const json ndim = spec.value("ndim", json(1));
                if (dtype.is_null() || !kind.is_string() || !ndim.is_number_integer() || ndim.get<int>() < 1 || ndim.get<int>() > 4
                    || !std::regex_match(kind.get<std::string>(), std::regex("[A-Za-z_][A-Za-z0-9_]*")))
                {
                    return nullptr;
                }
                const std::string k = kind.get<std::string>()[0] == '_' ? "array" : kind.get<std::string>();
                static const std::set<std::string> arrays{"array", "indexedarray", "fabricarray", "indexedfabricarray"};
                if (!arrays.count(k))
                {
                    return nullptr;
                }
                return {{"array", k}, {"dtype", std::move(dtype)}, {"ndim", ndim.get<int>()}};
            }
            if (const json ref = spec.value("struct", json()); ref.is_string())
            {
                const std::string r = ref.get<std::string>();
                const auto colon = r.find(':');
                if (colon == std::string::npos || !dotted_identifier(r.substr(0, colon)) || !dotted_identifier(r.substr(colon + 1))
                    || top_package(r.substr(0, colon)) != package)
                {
                    return nullptr;
                }
                return {{"struct", r}};
            }
            if (const json shape = spec.value("shape", json()); shape.is_array() && spec.contains("scalar"))
            {
                json scalar = type_spec(spec["scalar"], package);
                if (scalar.is_null() || shape.empty() || shape.size() > 2
                    || !std::all_of(shape.begin(), shape.end(),
                                    [](const json& n) { return n.is_number_integer() && n.get<int>() > 0 && n.get<int>() <= 64; }))
                {
                    return nullptr;
                }
                return {{"shape", shape}, {"scalar", std::move(scalar)}};
            }
            const json name = spec.value("type", json());
            if (!name.is_string())
            {
                return nullptr;
            }
            const std::string n = name.get<std::string>();
            return n == "float" || n == "int" || n == "bool" || warp_type_name(n) ? json{{"type", n}} : json(nullptr);
        }

        std::string joined(const std::vector<std::string>& argv)
        {
            std::string out;
            for (const auto& a : argv)
            {
                out += (out.empty() ? "" : " ") + a;
            }
            return out;
        }

        // What a load of a module was made of, part by part: its plain kernels and their contents,
        // its generic instances, the functions its kernels call.
        std::set<std::string> content_parts(const content_snapshot& s)
        {
            std::set<std::string> parts;
            for (const auto& k : s.kernels)
            {
                parts.insert(k.generic ? "instance " + k.key + " " + k.sig.str() : "kernel " + k.key + " " + k.hash.str());
            }
            for (const auto& [key, hash] : s.functions)
            {
                parts.insert("function " + key + " " + hash);
            }
            return parts;
        }

        // A kernel the module gets when it is imported: a plain kernel no factory or closure made.
        bool import_time(const kernel_entry& k)
        {
            return !k.generic && !k.factory.is_object() && k.qualname.str().find("<locals>") == std::string::npos;
        }

        // A recorded factory argument the file can rebuild as data, "" when it can; else why not.
        // Only literals, tuples and lists of them, and references to Warp's types or to names in
        // the factory's own package reach the file: nothing a report says becomes code.
        std::string unplain(const json& tagged, const std::string& package, int depth = 0)
        {
            if (tagged.is_object() && tagged.size() == 2 && tagged.contains("enum") && tagged.contains("value"))
            {
                // a combination of flags: its class by reference, its value an integer
                return tagged["value"].is_number_integer() ? unplain({{"ref", tagged["enum"]}}, package, depth + 1)
                                                           : "is not an integer flag value";
            }
            if (!tagged.is_object() || tagged.size() != 1 || depth > 4)
            {
                return "is not recorded as data";
            }
            // (the object's own key and value: a structured binding of items() would hold a temporary's)
            const std::string& kind = tagged.begin().key();
            const json& v = tagged.begin().value();
            if (kind == "lit")
            {
                return v.is_null() || v.is_boolean() || v.is_number_integer() || v.is_string() ? "" : "is not a literal";
            }
            if (kind == "float")
            {
                static const std::regex number("-?([0-9]+\\.?[0-9]*(e[-+]?[0-9]+)?|inf|nan)");
                return v.is_string() && std::regex_match(v.get<std::string>(), number) ? "" : "is not a float";
            }
            if (kind == "tuple" || kind == "list")
            {
                if (!v.is_array())
                {
                    return "is not a sequence";
                }
                for (const auto& x : v)
                {
                    if (const std::string why = unplain(x, package, depth + 1); !why.empty())
                    {
                        return why;
                    }
                }
                return {};
            }
            if (kind == "ref" && v.is_string())
            {
                const std::string ref = v.get<std::string>();
                const auto colon = ref.find(':');
                const std::string module = ref.substr(0, colon);
                if (colon == std::string::npos || !dotted_identifier(module) || !dotted_identifier(ref.substr(colon + 1)))
                {
                    return "names no importable object";
                }
                return module == "warp" || top_package(module) == package
                           ? ""
                           : "refers to " + module + ", outside Warp and the factory's package";
            }
            if (kind == "object" && v.is_string())
            {
                return "is a " + v.get<std::string>() + " object: the file cannot re-create it";
            }
            return "is not recorded as data";
        }

        // Why a factory-made kernel cannot be made again by calling its factory, "" when it can.
        std::string factory_unreachable(const kernel_entry& k, bool cell, const ownership* owners)
        {
            const json& f = k.factory;
            const std::string where = k.defined_in.str() + "." + k.qualname.str();
            if (!f.is_object())
            {
                return "kernel " + k.key + " is made at run time by a factory or closure (" + where
                       + ") and the run recorded no call that made it (made with wp.Kernel(...) directly, wp.kernel applied "
                         "after the function that defined it returned, or measured by an older xwarp)";
            }
            const std::string module = field_or(f, "module", std::string());
            const std::string qualname = field_or(f, "qualname", std::string());
            // Whose the factory is (the run's ownership): the file calls factories of the program
            // and of installed packages, never Warp's own (its tests and examples included)
            const file_owner* owner = owners != nullptr ? owners->of(field_or(f, "file", std::string())) : nullptr;
            if (warps_own_module(module) || (owner != nullptr && owner->kind == owner_kind::warp))
            {
                return "kernel " + k.key + " is made by " + module + "." + qualname
                       + ", a factory of Warp's own code: the warm-up calls factories of your project and of installed "
                         "packages only";
            }
            if (owner != nullptr && (owner->kind == owner_kind::stdlib || owner->kind == owner_kind::elsewhere))
            {
                return "kernel " + k.key + " is made by " + module + "." + qualname + ", whose file is "
                       + owner_phrase(*owner) + ": the warm-up calls factories of your project and of installed packages only";
            }
            if (cell && module == "__main__")
            {
                return "kernel " + k.key + " is made by " + qualname + ", a factory defined in the notebook cell: the file "
                       "calls only factories in files on disk in the program's folder (move it into a module)";
            }
            if (!dotted_identifier(module) || !dotted_identifier(qualname) || module != k.defined_in.str()
                || k.qualname.str().rfind(qualname + ".<locals>.", 0) != 0)
            {
                return "kernel " + k.key + " is made by " + (qualname.empty() ? where : qualname)
                       + ", which the file cannot call by name (a closure inside another function, or a lambda)";
            }
            for (const auto& a : field_or(f, "args", json::array()))
            {
                if (!a.is_array() || a.size() != 3 || !a[0].is_string() || !a[1].is_string())
                {
                    return "kernel " + k.key + ": the factory's arguments are not recorded as data";
                }
                const std::string kind = a[1].get<std::string>();
                if (!dotted_identifier(a[0].get<std::string>()) || (kind != "pos" && kind != "kw" && kind != "star"))
                {
                    return "kernel " + k.key + ": the factory's arguments are not recorded as data";
                }
                if (const std::string why = unplain(a[2], top_package(module)); !why.empty())
                {
                    return "kernel " + k.key + " is made by " + module + "." + qualname + " and its argument "
                           + a[0].get<std::string>() + " " + why;
                }
            }
            return {};
        }

        // Why the file cannot import `module` for a target, "" when it can: the run's ownership
        // says its file is the standard library's or in neither the project nor an installed
        // distribution (the file refuses those too, and says where it looked).
        std::string module_refused(const std::string& module, const ownership* owners)
        {
            const file_owner* owner = owners != nullptr ? owners->of_module(module) : nullptr;
            if (owner == nullptr || (owner->kind != owner_kind::stdlib && owner->kind != owner_kind::elsewhere))
            {
                return {};
            }
            return "its kernels' module " + module + " is " + owner_phrase(*owner) + " (" + owner->evidence
                   + "): the warm-up imports only your project's modules and installed packages'";
        }

        // Why the warm-up cannot build this identity by importing its module, "" when it can.
        std::string unreachable(const content_snapshot& s, bool has_entry, bool cell, const ownership* owners)
        {
            if (s.kernels.empty())
            {
                return "its snapshot holds no kernel to reach the module by";
            }
            for (const auto& k : s.kernels)
            {
                if (k.defined_in.empty() || k.qualname.empty())
                {
                    return "the report does not say where kernel " + k.key
                           + " is defined (recorded by an older xwarp, or from Warp's log)";
                }
                const std::string qualname = k.qualname.str();
                if (!dotted_identifier(k.defined_in.str())
                    || (!dotted_identifier(qualname) && qualname.find("<locals>") == std::string::npos))
                {
                    return "the report names kernel " + k.key + " by something that is not a Python name: the file "
                           "resolves only names";
                }
                if (k.qualname.str().find("<locals>") != std::string::npos)
                {
                    // the file calls its factory with the recorded arguments, when it can
                    if (std::string why = factory_unreachable(k, cell, owners); !why.empty())
                    {
                        return why;
                    }
                }
                if (k.defined_in.str() == "__main__" && !has_entry)
                {
                    return "kernel " + k.key
                           + " is defined in __main__ with no script to read it from (python -c, or stdin): move the "
                             "kernels into a module the program imports";
                }
            }
            return {};
        }

        // The folder the entry script's modules are imported from, and the entry script's file
        // name in it ("" when the command runs no script file: a notebook cell, python -c).
        std::pair<std::string, std::string> entry_of(const report& r)
        {
            const program_files files = program_files_of(r);
            if (files.entry.empty() || r.cell_code)
            {
                return {r.cwd, ""};
            }
            // python -m pkg: the file is pkg/__main__.py under the folder pkg imports from
            const std::string& root = files.import_root;
            if (!root.empty() && files.entry.size() > root.size() + 1 && files.entry.compare(0, root.size(), root) == 0
                && files.entry[root.size()] == '/')
            {
                return {root, files.entry.substr(root.size() + 1)};
            }
            const auto slash = files.entry.rfind('/');
            std::string dir = slash == std::string::npos ? r.cwd : files.entry.substr(0, slash);
            std::string name = slash == std::string::npos ? files.entry : files.entry.substr(slash + 1);
            return {dir.empty() ? "/" : dir, name};
        }

        // Why a cpu_compiler_flags string cannot go into a warm-up file, or "": every word must be a
        // code-generation flag of the contract's patterns (-mllvm's option may be the next word). A
        // flag that writes a file (-dependency-file, -MT) or runs a program matches none of them.
        std::string flags_refused(const std::string& flags)
        {
            static const std::vector<std::regex> patterns = []
            {
                std::vector<std::regex> out;
                for (const auto& p : compiler_flag_patterns())
                {
                    out.emplace_back(p);
                }
                return out;
            }();
            std::istringstream words(flags);
            std::string word;
            while (words >> word)
            {
                std::string flag = word;
                if (word == "-mllvm")
                {
                    std::string option;
                    if (!(words >> option))
                    {
                        return "-mllvm with no option";
                    }
                    flag = "-mllvm=" + option;
                }
                if (std::none_of(patterns.begin(), patterns.end(), [&](const std::regex& p) { return std::regex_match(flag, p); }))
                {
                    return "'" + flag.substr(0, 80) + "' is not a code-generation flag the warm-up file may pass";
                }
            }
            return {};
        }

        // wp.config values the program set before its first module load (the last of each): only
        // those that change a module's identity, each of its type and range (the warm-up file's
        // CONFIG contract); the cache's location is the warm-up's own. A report is data: any other
        // key, or a value outside its range, is not written, and the notes say so.
        json config_before_first_load(const run_result& cold, std::vector<std::string>& notes)
        {
            json out = json::object();
            for (const auto& p : cold.processes)
            {
                std::int64_t first_load = std::numeric_limits<std::int64_t>::max();
                for (const auto& l : cold.module_loads)
                {
                    if (l.pid == p.pid)
                    {
                        first_load = std::min(first_load, l.seq);
                    }
                }
                for (const auto& c : p.config_sets)
                {
                    if (c.seq > first_load || c.key.find("cache") != std::string::npos || c.key == "log_level"
                        || c.key == "verbose" || c.key == "quiet")
                    {
                        continue;
                    }
                    const json one = {{c.key, c.new_value}};
                    std::string wrong = contract_violation(contract::warmup_config, one);
                    if (wrong.empty() && c.key == "cpu_compiler_flags" && c.new_value.is_string())
                    {
                        wrong = flags_refused(c.new_value.get<std::string>());
                    }
                    if (wrong.empty())
                    {
                        out[c.key] = c.new_value;
                    }
                    else
                    {
                        notes.push_back("wp.config." + c.key.substr(0, 60) + " is not written into the file (" + wrong.substr(0, 200)
                                        + "): set it as the program does before running the warm-up, if it is the program's");
                    }
                }
                if (!out.empty())
                {
                    break;  // the first process that set any: the program's own
                }
            }
            return out;
        }

        // A load's form: what it was made of and its options but block_dim (one form built at two
        // block_dims is one stage).
        std::string form_of(const module_load& l)
        {
            if (!l.snapshot)
            {
                return {};
            }
            std::string form;
            for (const auto& part : content_parts(*l.snapshot))
            {
                form += part + ";";
            }
            json options = *l.snapshot->options;
            if (options.is_object())
            {
                options.erase("block_dim");
            }
            return form + options.dump();
        }

        // The folders the run imported the kernels' modules from (its module_files record), those
        // outside the import root: a test module pytest put on sys.path, a script's sibling.
        // The modules a reference in recorded data names ("module:qualname"), the factories'
        // arguments and the instances' types included.
        void referenced_modules(const json& data, std::set<std::string>& out, int depth = 0)
        {
            if (depth > 12)
            {
                return;
            }
            if (data.is_object())
            {
                for (const auto& [key, value] : data.items())
                {
                    if ((key == "ref" || key == "struct" || key == "enum") && value.is_string())
                    {
                        const std::string ref = value.get<std::string>();
                        out.insert(ref.substr(0, ref.find(':')));
                    }
                    referenced_modules(value, out, depth + 1);
                }
            }
            else if (data.is_array())
            {
                for (const auto& x : data)
                {
                    referenced_modules(x, out, depth + 1);
                }
            }
        }

        // Every Python module the file imports for the covered targets: where their kernels live,
        // the factories', and those the recorded data refers to.
        std::set<std::string> modules_named(const std::vector<warmup_target>& targets)
        {
            std::set<std::string> names;
            for (const auto& t : targets)
            {
                if (!t.covered)
                {
                    continue;
                }
                names.insert(t.import_from);
                for (const auto& o : t.overloads)
                {
                    names.insert(o.module);
                    referenced_modules(o.types, names);
                }
                for (const auto& f : t.factories)
                {
                    names.insert(field_or(f, "module", std::string()));
                    referenced_modules(f.value("args", json::array()), names);
                }
            }
            for (const char* not_imported : {"", "__main__", "warp"})
            {
                names.erase(not_imported);
            }
            return names;
        }

        // Where the run imported each module that defined a loaded kernel from (its module_files record).
        std::map<std::string, std::string> module_files_of(const run_result& cold)
        {
            std::map<std::string, std::string> files;
            for (const auto& p : cold.processes)
            {
                for (const auto& c : p.calls)
                {
                    if (c.function != "module_files" || !c.args.is_object())
                    {
                        continue;
                    }
                    for (const auto& [name, file] : c.args.items())
                    {
                        if (file.is_string() && dotted_identifier(name))
                        {
                            files.emplace(name, file.get<std::string>());
                        }
                    }
                }
            }
            return files;
        }

        std::vector<std::string> import_paths_of(const run_result& cold, const std::vector<warmup_target>& targets,
                                                 const std::string& import_root)
        {
            const std::set<std::string> wanted = modules_named(targets);
            std::vector<std::string> out;
            for (const auto& p : cold.processes)
            {
                for (const auto& c : p.calls)
                {
                    if (c.function != "module_files" || !c.args.is_object())
                    {
                        continue;
                    }
                    for (const auto& [name, file] : c.args.items())
                    {
                        if (!wanted.count(name) || !file.is_string() || !dotted_identifier(name))
                        {
                            continue;
                        }
                        // pkg.sub lives in ROOT/pkg/sub.py or ROOT/pkg/sub/__init__.py
                        std::string root = file.get<std::string>();
                        const bool package = root.size() > 12 && root.compare(root.size() - 12, 12, "/__init__.py") == 0;
                        const int up = 1 + static_cast<int>(std::count(name.begin(), name.end(), '.')) + (package ? 1 : 0);
                        for (int i = 0; i < up && !root.empty(); ++i)
                        {
                            root = root.substr(0, root.rfind('/'));
                        }
                        if (root.empty() || root[0] != '/' || root == import_root
                            || std::find(out.begin(), out.end(), root) != out.end())
                        {
                            continue;
                        }
                        out.push_back(root);
                    }
                }
            }
            return out;
        }

        bool cache_turned_off(const run_result& cold)
        {
            for (const auto& p : cold.processes)
            {
                for (const auto& c : p.config_sets)
                {
                    if (c.key == "cache_kernels" && c.new_value.is_boolean() && !c.new_value.get<bool>())
                    {
                        return true;
                    }
                }
            }
            return false;

        }
        // What the file does for a covered identity: where its kernels come from, the generic
        // instances it held, its options; the reason it cannot, when an instance's type cannot
        // be written.
        std::string fill_recipe(warmup_target& t, const content_snapshot& s)
        {
            std::string why;
            t.import_from = s.kernels.front().defined_in.str();
            t.kernel = s.kernels.front().qualname.str();
            for (const auto& k : s.kernels)
            {
                if (!k.factory.is_object() || k.qualname.str().find("<locals>") == std::string::npos)
                {
                    continue;
                }
                // the factory's call re-creates the kernel; the module is found by its name
                json call = {{"module", k.factory["module"]}, {"qualname", k.factory["qualname"]}, {"args", k.factory["args"]}};
                if (std::find(t.factories.begin(), t.factories.end(), call) == t.factories.end())
                {
                    t.factories.push_back(std::move(call));
                }
            }
            if (!t.factories.empty())
            {
                t.kernel.clear();  // a factory's kernel has no name to import it by
                for (const auto& k : s.kernels)
                {
                    if (k.qualname.str().find("<locals>") == std::string::npos)
                    {
                        t.import_from = k.defined_in.str();
                        t.kernel = k.qualname.str();
                        break;
                    }
                }
            }
            for (const auto& k : s.kernels)
            {
                if (!k.generic)
                {
                    continue;
                }
                warmup_overload o;
                o.kernel = k.qualname.str();
                o.key = k.key;
                o.signature = k.sig.str();
                for (const auto& spec : k.types.is_array() ? k.types : json::array())
                {
                    o.types.push_back(type_spec(spec, top_package(k.defined_in.str())));
                    if (o.types.back().is_null())
                    {
                        why = "generic instance " + k.key + "[" + k.sig.str() + "] takes a type that is neither Warp's nor a "
                              "@wp.struct of its own package defined at a module's top level (" + spec.dump()
                              + "): the file cannot name it";
                    }
                }
                if (!k.types.is_array())
                {
                    why = "generic instance " + k.key + "[" + k.sig.str() + "] has no recorded argument types";
                }
                if (o.kernel.find("<locals>") != std::string::npos)
                {
                    o.kernel.clear();  // a factory made it: the file finds it by its key among what the factory made
                }
                if (k.defined_in.str() != t.import_from)
                {
                    o.module = k.defined_in.str();  // another module's kernel: the worker imports it
                }
                t.overloads.push_back(std::move(o));
            }
            for (const auto& [key, value] : s.options->items())
            {
                if (key != "block_dim")
                {
                    t.options[key] = value;
                }
            }
            return why;
        }

        // Each worker process of the file imports a module once and registers on it, form after
        // form, what each form it builds held (factory calls, generic instances): it reaches any
        // form that holds the module's import-time kernels and functions as importing gives them
        // now, that is, as the run's newest load of the module held them. An older form without
        // one, or with an older content of one, is refused here.
        void refuse_unreachable_forms(std::vector<warmup_target>& targets, const std::vector<const module_load*>& loads)
        {
            std::map<std::string, std::vector<std::size_t>> families;  // a process holds one copy of a module, whatever the device
            for (std::size_t i = 0; i < targets.size(); ++i)
            {
                families[targets[i].module].push_back(i);
            }
            for (const auto& [module, members] : families)
            {
                std::map<std::string, std::string> kernels, functions;  // key -> newest content
                for (const std::size_t i : members)
                {
                    if (!loads[i]->snapshot)
                    {
                        continue;
                    }
                    for (const auto& k : loads[i]->snapshot->kernels)
                    {
                        if (import_time(k))
                        {
                            kernels[k.key] = k.hash.str();
                        }
                    }
                    for (const auto& [key, hash] : loads[i]->snapshot->functions)
                    {
                        functions[key] = hash;
                    }
                }
                for (const std::size_t i : members)
                {
                    warmup_target& t = targets[i];
                    if (!t.why_not.empty() || !loads[i]->snapshot)
                    {
                        continue;
                    }
                    const auto parts = content_parts(*loads[i]->snapshot);
                    for (const auto& [key, hash] : kernels)
                    {
                        if (parts.count("kernel " + key + " " + hash) == 0)
                        {
                            const auto& held = loads[i]->snapshot->kernels;
                            const bool older = std::any_of(held.begin(), held.end(),
                                                           [&](const kernel_entry& k) { return import_time(k) && k.key == key; });
                            t.why_not = "an earlier form of the module: kernel " + key
                                        + (older ? " changed after this load" : ", defined when its module is imported, joined it only after this load")
                                        + " (see its hash churn): importing gives the module as its newest load held it";
                            break;
                        }
                    }
                    for (const auto& [key, hash] : loads[i]->snapshot->functions)
                    {
                        if (t.why_not.empty() && functions[key] != hash)
                        {
                            t.why_not = "an earlier form of the module: function " + key
                                        + " changed after this load (see its hash churn): importing gives only its newest content";
                        }
                    }
                }
            }
        }

        // The stage of each identity the file builds: the order of its form among the forms of its
        // module the file builds; and the stages a worker may have built before it (each form whose
        // content it holds whole: registering this one's on top gives this one).
        void number_stages(std::vector<warmup_target>& targets, const std::vector<const module_load*>& loads)
        {
            struct built_form
            {
                std::string form;
                std::set<std::string> parts;
            };
            std::map<std::string, std::vector<built_form>> forms;  // by module: a process holds one copy of it
            for (std::size_t i = 0; i < targets.size(); ++i)
            {
                warmup_target& t = targets[i];
                if (!t.why_not.empty())
                {
                    continue;
                }
                auto& seen = forms[t.module];
                const std::string form = form_of(*loads[i]);
                auto at = std::find_if(seen.begin(), seen.end(), [&](const built_form& f) { return f.form == form; });
                if (at == seen.end())
                {
                    at = seen.insert(seen.end(), {form, content_parts(*loads[i]->snapshot)});
                }
                t.stage = static_cast<int>(at - seen.begin()) + 1;
            }
            for (std::size_t i = 0; i < targets.size(); ++i)
            {
                warmup_target& t = targets[i];
                if (!t.why_not.empty())
                {
                    continue;
                }
                const auto& family = forms[t.module];
                const auto& mine = family[static_cast<std::size_t>(t.stage - 1)].parts;
                for (std::size_t f = 0; f < family.size(); ++f)
                {
                    const auto& theirs = family[f].parts;
                    if (static_cast<int>(f) + 1 != t.stage
                        && std::includes(mine.begin(), mine.end(), theirs.begin(), theirs.end()))
                    {
                        t.follows.push_back(static_cast<int>(f) + 1);
                    }
                }
            }
        }

        // The top-level packages the file imports from, and those of them found in the import
        // root (the program's own: the file finds the program by them). Without a record of where
        // a package was imported from, it is the program's when the run imported from nowhere else.
        void packages_of(warmup_plan& plan, const run_result& cold)
        {
            const std::map<std::string, std::string> files = module_files_of(cold);
            std::set<std::string> tops;
            for (const auto& m : modules_named(plan.targets))
            {
                tops.insert(top_package(m));
            }
            const std::string root = plan.import_root + "/";
            for (const auto& top : tops)
            {
                plan.packages.push_back(top);
                bool seen = false;
                bool under_root = false;
                for (const auto& [name, file] : files)
                {
                    if (top_package(name) == top)
                    {
                        seen = true;
                        under_root = under_root || file.compare(0, root.size(), root) == 0;
                    }
                }
                if (under_root || (!seen && plan.import_paths.empty()))
                {
                    plan.root_packages.push_back(top);
                }
            }
        }

        // What the identities the file leaves cost the program: their measured builds, plus the
        // precompiled header the first CPU one writes (the largest the run wrote: Warp writes one
        // per thread, outside the kernel cache, and a primed program's thread has none yet).
        void estimate_left(warmup_plan& plan, const run_result& cold)
        {
            for (const auto& l : cold.module_loads)
            {
                if (l.pch_ms && l.device.str().rfind("cpu", 0) == 0)
                {
                    plan.header_ms = std::max(plan.header_ms, *l.pch_ms);
                }
            }
            bool cpu_left = false;
            bool header_counted = false;  // a left identity the run built first on its thread holds one already
            for (const auto& t : plan.targets)
            {
                if (t.covered)
                {
                    continue;
                }
                plan.left_estimate_ms += t.build_ms;
                cpu_left = cpu_left || t.device.rfind("cpu", 0) == 0;
                for (const auto& l : cold.module_loads)
                {
                    if (l.module.str() == t.module && l.hash.str() == t.hash && l.device.str() == t.device && l.pch_ms)
                    {
                        header_counted = true;
                    }
                }
            }
            if (cpu_left && !header_counted)
            {
                plan.left_estimate_ms += plan.header_ms;
            }
        }

        // Each identity once, with the first load that built it, in load order.
        std::vector<const module_load*> identities_in_load_order(const run_result& cold)
        {
            std::vector<const module_load*> loads;
            std::set<std::tuple<std::string, std::string, std::string, int>> seen;
            for (const auto& l : cold.module_loads)
            {
                if ((l.status == load_status::compiled || l.status == load_status::cached)
                    && seen.insert({l.module.str(), l.hash.str(), l.device.str(), l.block_dim.value_or(-1)}).second)
                {
                    loads.push_back(&l);
                }
            }
            return loads;
        }
    }

    void settle_warmup_plan(warmup_plan& plan, const report& analysed)
    {
        const auto good = std::find_if(analysed.samples.begin(), analysed.samples.end(), [](const sample& s) { return s.ok(); });
        if (good == analysed.samples.end())
        {
            return;
        }
        const run_result& cold = good->cold;
        plan.covered = plan.uncovered = 0;
        plan.covered_ms = plan.total_ms = plan.left_estimate_ms = plan.header_ms = 0.0;
        plan.packages.clear();
        plan.root_packages.clear();
        for (auto& t : plan.targets)
        {
            t.covered = t.why_not.empty();
            plan.total_ms += t.build_ms;
            if (t.covered)
            {
                plan.covered_ms += t.build_ms;
                ++plan.covered;
            }
            else
            {
                t.import_from.clear();
                t.kernel.clear();
                t.factories = json::array();
                t.overloads.clear();
                t.options = json::object();
                t.follows.clear();
                ++plan.uncovered;
            }
        }
        plan.import_paths = import_paths_of(cold, plan.targets, plan.import_root);
        packages_of(plan, cold);
        estimate_left(plan, cold);
    }

    warmup_plan plan_warmup(const report& analysed, const warmup_request& request, const std::string& source)
    {
        const auto good = std::find_if(analysed.samples.begin(), analysed.samples.end(), [](const sample& s) { return s.ok(); });
        if (good == analysed.samples.end())
        {
            throw std::invalid_argument("the report has no good sample: there is no run to warm up for");
        }
        const run_result& cold = good->cold;
        warmup_plan plan;
        plan.source = source;
        plan.project = analysed.cwd;
        plan.command = analysed.cell_code ? "notebook cell " + analysed.label : joined(analysed.command);
        plan.warp_version = analysed.env.warp_version;
        plan.device = request.device;
        plan.arch = request.arch;
        plan.workers = request.workers > 0 ? request.workers : std::clamp(analysed.env.cpu_count, 1, 16);
        const auto [root, entry_module] = entry_of(analysed);
        plan.import_root = root;
        plan.entry_script = entry_module;
        plan.config = config_before_first_load(cold, plan.notes);
        const bool no_cache = cache_turned_off(cold);
        if (analysed.cell_code)
        {
            // the cell is the program's script: warp-probe writes it beside the plan, never into it
            plan.cell = true;
            plan.cell_code = (analysed.setup_code ? *analysed.setup_code + "\n" : std::string()) + *analysed.cell_code;
        }

        const std::vector<const module_load*> loads = identities_in_load_order(cold);
        if (loads.empty())
        {
            throw std::invalid_argument("the run built no module: there is nothing to warm up");
        }
        for (const auto* l : loads)
        {
            warmup_target t;
            t.module = l->module.str();
            t.hash = l->hash.str();
            t.device = l->device.str();
            t.block_dim = l->block_dim;
            t.build_ms = l->work_ms();
            for (const auto& other : cold.module_loads)
            {
                if (other.status == load_status::compiled && other.module.str() == t.module && other.hash.str() == t.hash
                    && other.device.str() == t.device && other.block_dim == t.block_dim
                    && std::find(t.tests.begin(), t.tests.end(), other.test.str()) == t.tests.end())
                {
                    t.tests.push_back(other.test.str());
                }
            }
            for (const auto& id : analysed.result.identities)
            {
                if (id.module.str() == t.module && id.hash.str() == t.hash && id.device.str() == t.device
                    && id.block_dim == t.block_dim)
                {
                    // the identity's time is summed over the processes that built it (a suite's
                    // workers each build it); the warm-up builds it once: one build's time
                    t.build_ms = id.ms / std::max(1, id.builds);
                }
            }
            std::string why;
            static const std::regex device_name("[A-Za-z0-9_:]+");
            static const std::regex hex("[0-9A-Za-z]+");  // Warp writes hex: nothing but letters and digits reaches the file
            if (!std::regex_match(t.device, device_name) || !std::regex_match(t.hash, hex))
            {
                why = "the report's device or hash is not one Warp writes: the file builds only what Warp names";
            }
            else if (no_cache)
            {
                why = "the program sets wp.config.cache_kernels = False: it never reads the cache a warm-up fills (CS-2)";
            }
            else if (!l->snapshot)
            {
                why = "the report recorded no content for it (Warp's log only): its kernels are unknown";
            }
            else
            {
                why = unreachable(*l->snapshot, !plan.entry_script.empty() || plan.cell, plan.cell,
                                  analysed.ownership ? &*analysed.ownership : nullptr);
            }
            if (why.empty())
            {
                why = fill_recipe(t, *l->snapshot);
            }
            const ownership* owners = analysed.ownership ? &*analysed.ownership : nullptr;
            for (const auto& k : why.empty() && l->snapshot ? l->snapshot->kernels : std::vector<kernel_entry>{})
            {
                why = why.empty() ? module_refused(k.defined_in.str(), owners) : why;
            }
            t.why_not = why;
            plan.targets.push_back(std::move(t));
        }
        refuse_unreachable_forms(plan.targets, loads);
        number_stages(plan.targets, loads);
        settle_warmup_plan(plan, analysed);
        if (!plan.arch.empty()
            && std::none_of(plan.targets.begin(), plan.targets.end(), [](const warmup_target& t)
                            { return t.covered && t.device.rfind("cuda", 0) == 0; }))
        {
            plan.notes.push_back("--arch: the run built no CUDA module the warm-up covers: nothing to build ahead of time");
        }
        return plan;
    }
}