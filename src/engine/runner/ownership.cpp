// Whose code each file a run names is (runner/ownership.hpp).
#include "xwarp/engine/runner/ownership.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "xwarp/engine/os/bounded_read.hpp"
#include "xwarp/model/values.hpp"

namespace xwarp
{
    namespace
    {
        namespace fs = std::filesystem;
        using json = nlohmann::json;

        // Bounds: a program names its files, and a hostile one may name many.
        constexpr std::size_t max_files = 20000;
        constexpr std::size_t max_import_path = 200;
        constexpr std::size_t max_distributions = 5000;
        constexpr std::size_t max_record_bytes = 16u << 20;

        // A path as the file system resolves it (links followed where the path exists): the
        // records name files as Python saw them, a RECORD as pip wrote it.
        std::string resolved(const std::string& path)
        {
            std::error_code ec;
            const fs::path p = fs::weakly_canonical(fs::path(path), ec);
            return ec ? fs::path(path).lexically_normal().string() : p.string();
        }

        bool under(const std::string& file, const std::string& folder)
        {
            if (folder.empty())
            {
                return false;
            }
            const std::string prefix = folder.back() == '/' ? folder : folder + "/";
            return file.compare(0, prefix.size(), prefix) == 0;
        }

        bool is_dir(const fs::path& p)
        {
            std::error_code ec;
            return fs::is_directory(p, ec);
        }

        bool present(const fs::path& p)
        {
            std::error_code ec;
            return fs::exists(fs::symlink_status(p, ec));
        }

        // A folder of installed packages, by the name Python's installers give it.
        bool site_folder(const std::string& folder)
        {
            const std::string name = fs::path(folder).filename().string();
            return name == "site-packages" || name == "dist-packages";
        }

        // The first field of a RECORD line (CSV: a path holding a comma is quoted, "" a quote).
        std::string first_csv_field(const std::string& line)
        {
            if (line.empty() || line[0] != '"')
            {
                return line.substr(0, line.find(','));
            }
            std::string out;
            for (std::size_t i = 1; i < line.size(); ++i)
            {
                if (line[i] == '"')
                {
                    if (i + 1 < line.size() && line[i + 1] == '"')
                    {
                        out += '"';
                        ++i;
                        continue;
                    }
                    break;
                }
                out += line[i];
            }
            return out;
        }

        // A metadata header's value ("Name: warp-lang"), from the first lines of METADATA/PKG-INFO.
        std::string header(const std::string& text, const std::string& key)
        {
            std::istringstream lines(text);
            std::string line;
            while (std::getline(lines, line) && !line.empty() && line != "\r")
            {
                if (line.compare(0, key.size() + 1, key + ":") == 0)
                {
                    std::string value = line.substr(key.size() + 1);
                    value.erase(0, value.find_first_not_of(" \t"));
                    while (!value.empty() && (value.back() == '\r' || value.back() == ' '))
                    {
                        value.pop_back();
                    }
                    return value;
                }
            }
            return {};
        }

        // pip's normalised name (PEP 503): warp_lang, Warp.Lang and warp-lang are one.
        std::string normalised(std::string name)
        {
            std::string out;
            for (char c : name)
            {
                c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                const bool sep = c == '-' || c == '_' || c == '.';
                if (sep && !out.empty() && out.back() == '-')
                {
                    continue;
                }
                out += sep ? '-' : c;
            }
            return out;
        }

        struct distribution
        {
            std::string name;
            std::string version;
            std::string record;  // the file that lists its files
        };

        // What the measured Python imports from, as its processes recorded it.
        struct import_system
        {
            std::vector<std::string> sys_path;  // resolved, in order, once each
            std::vector<std::string> sys_path_as_named;  // the same folders as the process named them
            std::vector<std::string> stdlib;
            std::vector<std::string> warp;
            std::string entry;       // the first process's __main__ file ("" none)
            std::string entry_root;  // the folder its top package imports from (-m)
        };

        import_system import_system_of(const sample& s, const std::string& cwd)
        {
            import_system out;
            const auto add = [](std::vector<std::string>& to, const json& value, std::size_t cap)
            {
                if (value.is_string() && !value.get<std::string>().empty() && value.get<std::string>()[0] == '/'
                    && to.size() < cap)
                {
                    const std::string p = resolved(value.get<std::string>());
                    if (std::find(to.begin(), to.end(), p) == to.end())
                    {
                        to.push_back(p);
                    }
                }
            };
            for (const auto& p : s.cold.processes)
            {
                for (const auto& c : p.calls)
                {
                    if (c.function != "entry" || !c.args.is_object())
                    {
                        continue;
                    }
                    for (const auto& e : field_or(c.args, "sys_path", json::array()))
                    {
                        const std::size_t before = out.sys_path.size();
                        add(out.sys_path, e, max_import_path);
                        if (out.sys_path.size() > before)
                        {
                            out.sys_path_as_named.push_back(fs::path(e.get<std::string>()).lexically_normal().string());
                        }
                    }
                    for (const auto& e : field_or(c.args, "stdlib", json::array()))
                    {
                        add(out.stdlib, e, 8);
                    }
                    add(out.warp, field_or(c.args, "warp", json()), 8);
                    const json file = field_or(c.args, "file", json());
                    if (out.entry.empty() && file.is_string() && !file.get<std::string>().empty())
                    {
                        const std::string f = file.get<std::string>();
                        out.entry = resolved(f[0] == '/' ? f : cwd + "/" + f);
                        const std::string root = field_or(c.args, "root", std::string());
                        out.entry_root = root.empty() || root[0] != '/' ? std::string() : resolved(root);
                    }
                }
            }
            return out;
        }

        // The installed distributions on the import path: which of the `wanted` files each
        // lists, and the editable installs' source folders.
        class distributions
        {
        public:
            distributions(const std::vector<std::string>& sys_path, const std::set<std::string>& wanted,
                          const std::vector<std::string>& as_named)
            {
                for (std::size_t i = 0; i < sys_path.size(); ++i)
                {
                    const std::string& folder = sys_path[i];
                    m_named_as = i < as_named.size() ? as_named[i] : folder;
                    std::error_code ec;
                    for (fs::directory_iterator it(folder, ec), end; !ec && it != end && m_seen < max_distributions;
                         it.increment(ec))
                    {
                        const std::string name = it->path().filename().string();
                        const auto ends = [&](const std::string& suffix)
                        { return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0; };
                        if (ends(".dist-info"))
                        {
                            read_dist_info(folder, it->path(), wanted);
                        }
                        else if (ends(".egg-info"))
                        {
                            read_egg_info(it->path(), wanted);
                        }
                        else if (ends(".egg-link"))
                        {
                            read_path_file(it->path(), "an editable install (" + name + ")", 1);
                        }
                        else if (ends(".pth") && (name.rfind("__editable__", 0) == 0 || name == "easy-install.pth"))
                        {
                            read_path_file(it->path(), "a path " + name + " adds (an editable install)", 50);
                        }
                    }
                }
            }

            const distribution* listing(const std::string& file) const
            {
                const auto at = m_listed.find(file);
                return at == m_listed.end() ? nullptr : &m_found[at->second];
            }

            const std::vector<project_root>& editable() const { return m_editable; }

        private:
            void read_dist_info(const std::string& folder, const fs::path& info, const std::set<std::string>& wanted)
            {
                ++m_seen;
                const bounded_read meta = read_regular_file((info / "METADATA").string(), 1u << 20);
                distribution d{header(meta.text, "Name"), header(meta.text, "Version"), (info / "RECORD").string()};
                if (const bounded_read direct = read_regular_file((info / "direct_url.json").string(), 1u << 16); direct.ok)
                {
                    const json j = json::parse(direct.text, nullptr, false);
                    const std::string url = j.is_object() ? field_or(j, "url", std::string()) : std::string();
                    const json dir_info = j.is_object() ? field_or(j, "dir_info", json::object()) : json::object();
                    if (field_or(dir_info, "editable", false) && url.rfind("file://", 0) == 0)
                    {
                        add_editable(url.substr(7), "an editable install of " + d.name + " " + d.version + " (direct_url.json)");
                    }
                }
                const bounded_read record = read_regular_file(d.record, max_record_bytes);
                list(record.text, folder, d, wanted);
                if (m_named_as != folder)
                {
                    list(record.text, m_named_as, d, wanted);
                }
            }

            void read_egg_info(const fs::path& info, const std::set<std::string>& wanted)
            {
                ++m_seen;
                const fs::path pkg_info = is_dir(info) ? info / "PKG-INFO" : info;
                const bounded_read meta = read_regular_file(pkg_info.string(), 1u << 20);
                distribution d{header(meta.text, "Name"), header(meta.text, "Version"), (info / "installed-files.txt").string()};
                if (is_dir(info))
                {
                    const bounded_read files = read_regular_file(d.record, max_record_bytes);
                    list(files.text, info.string(), d, wanted);
                }
            }

            // Each line of a RECORD (relative to the folder that holds the .dist-info) or of an
            // installed-files.txt (relative to the .egg-info), as one of the wanted files.
            void list(const std::string& text, const std::string& base, const distribution& d, const std::set<std::string>& wanted)
            {
                std::istringstream lines(text);
                std::string line;
                std::size_t index = std::string::npos;
                while (std::getline(lines, line))
                {
                    const std::string field = first_csv_field(line);
                    if (field.empty())
                    {
                        continue;
                    }
                    const std::string path = (fs::path(base) / field).lexically_normal().string();
                    if (wanted.count(path) != 0 && m_listed.count(path) == 0)
                    {
                        if (index == std::string::npos)
                        {
                            index = m_found.size();
                            m_found.push_back(d);
                        }
                        m_listed[path] = index;
                    }
                }
            }

            // A file whose lines are folders (an .egg-link's first, a .pth's each): folders
            // outside the import path's own folders are the user's source trees.
            void read_path_file(const fs::path& file, const std::string& why, int lines_read)
            {
                const bounded_read text = read_regular_file(file.string(), 1u << 16);
                std::istringstream lines(text.text);
                std::string line;
                for (int i = 0; i < lines_read && std::getline(lines, line); ++i)
                {
                    while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
                    {
                        line.pop_back();
                    }
                    if (!line.empty() && line[0] == '/' && is_dir(line))
                    {
                        add_editable(line, why);
                    }
                }
            }

            void add_editable(const std::string& path, const std::string& why)
            {
                std::string folder = path;
                // a file:// URL's percent-escapes (a space is %20)
                std::string plain;
                for (std::size_t i = 0; i < folder.size(); ++i)
                {
                    if (folder[i] == '%' && i + 2 < folder.size() && std::isxdigit(static_cast<unsigned char>(folder[i + 1]))
                        && std::isxdigit(static_cast<unsigned char>(folder[i + 2])))
                    {
                        plain += static_cast<char>(std::stoi(folder.substr(i + 1, 2), nullptr, 16));
                        i += 2;
                    }
                    else
                    {
                        plain += folder[i];
                    }
                }
                if (plain.empty() || plain[0] != '/' || !is_dir(plain))
                {
                    return;
                }
                const std::string root = resolved(plain);
                if (std::none_of(m_editable.begin(), m_editable.end(), [&](const project_root& r) { return r.path == root; }))
                {
                    m_editable.push_back({root, why});
                }
            }

            std::vector<distribution> m_found;
            std::map<std::string, std::size_t> m_listed;
            std::vector<project_root> m_editable;
            std::size_t m_seen = 0;
            std::string m_named_as;  // the folder being read, as the process named it
        };

        // The project `start` belongs to: the nearest folder at or above it with a project file
        // or a version-control folder.
        std::optional<project_root> marked_root(const std::string& start)
        {
            for (fs::path dir = start; !dir.empty(); dir = dir.parent_path())
            {
                for (const char* marker : {"pyproject.toml", "setup.cfg", "setup.py"})
                {
                    if (present(dir / marker))
                    {
                        return project_root{dir.string(), std::string(marker)};
                    }
                }
                for (const char* vcs : {".git", ".hg", ".svn"})
                {
                    if (present(dir / vcs))
                    {
                        return project_root{dir.string(), std::string(vcs) + " (version control)"};
                    }
                }
                if (dir == dir.parent_path())
                {
                    break;
                }
            }
            return std::nullopt;
        }

        void add_root(std::vector<project_root>& roots, project_root root)
        {
            if (std::none_of(roots.begin(), roots.end(), [&](const project_root& r) { return r.path == root.path; }))
            {
                roots.push_back(std::move(root));
            }
        }

        // Every file the sample names: what its records point at (calls, launch stacks, options
        // set, modules dirtied or created, factories) and its kernels' modules' files.
        std::set<std::string> files_named(const sample& s, std::map<std::string, std::string>& modules)
        {
            std::set<std::string> files;
            const auto add = [&files](const std::optional<std::string>& f)
            {
                if (f && !f->empty() && files.size() < max_files)
                {
                    files.insert(*f);
                }
            };
            for (const auto& p : s.cold.processes)
            {
                for (const auto& c : p.calls)
                {
                    add(c.file);
                    if (c.function == "launch")
                    {
                        for (const auto& frame : field_or(c.args, "stack", json::array()))
                        {
                            if (frame.is_array() && !frame.empty() && frame[0].is_string())
                            {
                                add(frame[0].get<std::string>());
                            }
                        }
                    }
                    else if (c.function == "module_files" && c.args.is_object())
                    {
                        for (const auto& [name, file] : c.args.items())
                        {
                            if (file.is_string() && modules.size() < max_files)
                            {
                                modules.emplace(name, file.get<std::string>());
                                add(file.get<std::string>());
                            }
                        }
                    }
                }
                for (const auto& c : p.config_sets)
                {
                    add(c.file);
                }
                for (const auto& d : p.dirty_events)
                {
                    add(d.file);
                }
                for (const auto& m : p.modules_created)
                {
                    add(m.file);
                }
            }
            for (const auto& l : s.cold.module_loads)
            {
                for (const auto& k : l.snapshot ? l.snapshot->kernels : std::vector<kernel_entry>{})
                {
                    if (k.factory.is_object())
                    {
                        const json file = field_or(k.factory, "file", json());
                        add(file.is_string() ? std::optional<std::string>(file.get<std::string>()) : std::nullopt);
                    }
                }
            }
            return files;
        }

        const sample* sample_of(const report& r)
        {
            if (const sample* good = r.first_good())
            {
                return good;
            }
            for (const auto& s : r.samples)
            {
                if (!s.cold.processes.empty())
                {
                    return &s;
                }
            }
            return nullptr;
        }

        std::string joined_roots(const std::vector<project_root>& roots)
        {
            std::string out;
            for (const auto& r : roots)
            {
                out += (out.empty() ? "" : ", ") + r.path;
            }
            return out.empty() ? std::string("no project folder") : out;
        }
    }

    std::optional<ownership> find_owners(const report& r)
    {
        const sample* s = sample_of(r);
        if (s == nullptr)
        {
            return std::nullopt;
        }
        ownership out;
        const std::string cwd = resolved(r.cwd.empty() ? fs::current_path().string() : r.cwd);
        const import_system system = import_system_of(*s, cwd);
        out.import_path = system.sys_path;
        std::set<std::string> named = files_named(*s, out.modules);
        if (!system.entry.empty())
        {
            named.insert(system.entry);
        }
        // the files as the file system resolves them (roots and folders are compared so), and as
        // Python named them: a RECORD lists a file under the import-path folder, whose own
        // subfolders may be links
        std::map<std::string, std::string> real;
        std::set<std::string> wanted;
        for (const auto& f : named)
        {
            if (!f.empty() && f[0] == '/')
            {
                real[f] = resolved(f);
                wanted.insert(real[f]);
                wanted.insert(fs::path(f).lexically_normal().string());
            }
        }
        const distributions installed(system.sys_path, wanted, system.sys_path_as_named);
        std::vector<std::string> sites;
        for (const auto& p : system.sys_path)
        {
            if (site_folder(p))
            {
                sites.push_back(p);
            }
        }

        // Whose a file is, by everything but the project (which needs the entry's owner first).
        const auto library_owner = [&](const std::string& file, const std::string& as_named) -> std::optional<file_owner>
        {
            const distribution* d = installed.listing(file);
            d = d != nullptr ? d : installed.listing(as_named);
            for (const auto& w : system.warp)
            {
                if (under(file, w))
                {
                    return file_owner{owner_kind::warp, d ? d->name : std::string(), d ? d->version : std::string(),
                                      "in Warp's package folder " + w};
                }
            }
            if (d != nullptr)
            {
                const owner_kind kind = normalised(d->name) == "warp-lang" ? owner_kind::warp : owner_kind::installed;
                return file_owner{kind, d->name, d->version, "listed in " + d->record};
            }
            const bool in_site = std::any_of(sites.begin(), sites.end(), [&](const std::string& p) { return under(file, p); });
            for (const auto& lib : system.stdlib)
            {
                if (under(file, lib) && !in_site)
                {
                    return file_owner{owner_kind::stdlib, "", "", "in the standard library's folder " + lib};
                }
            }
            for (const auto& site : sites)
            {
                if (under(file, site))
                {
                    return file_owner{owner_kind::installed, "", "",
                                      "in " + site + ", a folder of installed packages (no RECORD there lists it)"};
                }
            }
            return std::nullopt;
        };

        // The project: the entry's tree (unless the entry is installed: pytest, a console
        // script), the current directory's, the editable installs'.
        if (!system.entry.empty() && !library_owner(system.entry, system.entry))
        {
            const std::string start = fs::path(system.entry).parent_path().string();
            if (auto marked = marked_root(start))
            {
                marked->why += " above the command's entry";
                add_root(out.project, std::move(*marked));
            }
            else
            {
                add_root(out.project, {!system.entry_root.empty() ? system.entry_root : start, "the command's entry's folder"});
            }
        }
        if (auto marked = marked_root(cwd))
        {
            marked->why += " above the current directory";
            add_root(out.project, std::move(*marked));
        }
        else
        {
            add_root(out.project, {cwd, "the current directory"});
        }
        for (const auto& e : installed.editable())
        {
            add_root(out.project, e);
        }

        for (const auto& f : named)
        {
            if (f.empty() || f[0] != '/')
            {
                // a notebook cell ("<cell>"), or a path the report made relative to its project
                out.files[f] = {owner_kind::project, "", "", f[0] == '<' ? "the notebook cell" : "a path relative to the project"};
                continue;
            }
            const std::string& file = real[f];
            if (auto lib = library_owner(file, fs::path(f).lexically_normal().string()))
            {
                out.files[f] = *lib;
                continue;
            }
            const auto root = std::find_if(out.project.begin(), out.project.end(),
                                           [&](const project_root& p) { return under(file, p.path); });
            if (root != out.project.end())
            {
                out.files[f] = {owner_kind::project, "", "", root->path + ", " + root->why};
                continue;
            }
            out.files[f] = {owner_kind::elsewhere, "", "",
                            "not under the project (" + joined_roots(out.project) + "), and no RECORD on the import path ("
                                + std::to_string(system.sys_path.size()) + " folders) lists it"};
        }
        return out;
    }
}
