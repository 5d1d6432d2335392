#include "xwarp/engine/runner/records.hpp"

#include "xwarp/model/shim_contract.hpp"
#include "xwarp/engine/os/bounded_read.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <cctype>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using nlohmann::json;

namespace xwarp
{
    namespace
    {
        // Records are written by our own shim, but a killed process or a foreign file must
        // never stop the probe: every field is read defensively.
        template <class T>
        std::optional<T> opt(const json& j, const char* key)
        {
            auto it = j.find(key);
            if (it == j.end() || it->is_null())
            {
                return std::nullopt;
            }
            try
            {
                return it->get<T>();
            }
            catch (const json::exception&)
            {
                return std::nullopt;
            }
        }

        template <class T>
        T val(const json& j, const char* key, T fallback)
        {
            return opt<T>(j, key).value_or(fallback);
        }

        load_status status_from(const std::string& s)
        {
            if (s == "compiled")
            {
                return load_status::compiled;
            }
            if (s == "cached")
            {
                return load_status::cached;
            }
            if (s == "error")
            {
                return load_status::error;
            }
            return load_status::unknown;
        }

        content_snapshot snapshot_from(const json& j)
        {
            content_snapshot s;
            if (auto it = j.find("kernels"); it != j.end() && it->is_array())
            {
                for (const auto& k : *it)
                {
                    if (!k.is_object())
                    {
                        continue;
                    }
                    s.kernels.push_back({val<std::string>(k, "key", ""),
                                         val<std::string>(k, "hash", ""),
                                         val<std::string>(k, "sig", ""),
                                         val<bool>(k, "generic", false),
                                         k.value("types", json()),
                                         k.contains("enable_backward") && k["enable_backward"].is_boolean()
                                             ? std::optional<bool>(k["enable_backward"].get<bool>())
                                             : std::nullopt,
                                         shared_text(val<std::string>(k, "qualname", "")),
                                         shared_text(val<std::string>(k, "defined_in", "")),
                                         k.contains("factory") && k["factory"].is_object() ? k["factory"] : json()});
                }
            }
            if (auto it = j.find("functions"); it != j.end() && it->is_object())
            {
                for (const auto& [key, h] : it->items())
                {
                    if (h.is_string())
                    {
                        s.functions[key] = h.get<std::string>();
                    }
                }
            }
            if (auto it = j.find("options"); it != j.end() && it->is_object())
            {
                s.options = shared_options(*it);
            }
            s.options_source = val<std::string>(j, "options_source", "");
            return s;
        }

        module_load load_from(const json& j, std::int64_t pid)
        {
            module_load l;
            l.module = val<std::string>(j, "module", "");
            l.hash = val<std::string>(j, "hash", "");
            l.device = val<std::string>(j, "device", "");
            l.block_dim = opt<int>(j, "block_dim");
            l.status = status_from(val<std::string>(j, "status", ""));
            l.warp_ms = opt<double>(j, "warp_ms");
            l.total_ms = opt<double>(j, "total_ms");
            l.native_ms = opt<double>(j, "native_ms");
            l.native_kind = val<std::string>(j, "native_kind", "");
            l.codegen_ms = opt<double>(j, "codegen_ms");
            l.source_bytes = opt<std::int64_t>(j, "source_bytes");
            l.output_suffix = val<std::string>(j, "output_suffix", "");
            l.ltoir_inputs = val<int>(j, "ltoir_inputs", 0);
            if (auto it = j.find("lto"); it != j.end() && it->is_array())
            {
                for (const auto& a : *it)
                {
                    if (a.is_object())
                    {
                        l.lto.push_back({val<std::string>(a, "symbol", ""),
                                         val<bool>(a, "built", false),
                                         val<double>(a, "ms", 0.0)});
                    }
                }
            }
            l.thread = val<std::string>(j, "thread", "");
            l.pid = pid;
            l.t_start_ms = val<double>(j, "t_start_ms", 0.0);
            l.seq = val<std::int64_t>(j, "seq", 0);
            l.source = figure_source::hook;
            l.error = opt<std::string>(j, "error");
            if (auto it = j.find("snapshot"); it != j.end() && it->is_object())
            {
                l.snapshot = snapshot_from(*it);
            }
            if (auto it = j.find("config_mismatch"); it != j.end() && it->is_object())
            {
                l.config_mismatch = json_text(*it);
            }
            l.via_preload = val<bool>(j, "via_preload", false);
            l.first_in_thread = val<bool>(j, "first_in_thread", false);
            l.pch_ms = opt<double>(j, "pch_ms");
            l.cpu_ms = opt<double>(j, "cpu_ms");
            l.cpu_wait_ms = opt<double>(j, "cpu_wait_ms");
            l.instructions = opt<std::int64_t>(j, "instructions");
            if (auto it = j.find("phases"); it != j.end() && it->is_array())
            {
                for (const auto& p : *it)
                {
                    if (p.is_array() && p.size() == 3 && p[0].is_string() && p[1].is_number() && p[2].is_number())
                    {
                        l.phases.push_back({p[0].get<std::string>(), p[1].get<double>(), p[2].get<double>()});
                    }
                }
            }
            l.triggered_by = val<std::string>(j, "triggered_by", "");
            l.test = val<std::string>(j, "test", "");
            return l;
        }

        std::optional<std::string> opt_file(const json& j)
        {
            return opt<std::string>(j, "file");
        }
    }

    namespace
    {
        // One process's stream as it is read: the process record and its launches so far.
        struct stream_state
        {
            process_record proc;
            bool have_proc = false;
            std::vector<launch_record> launches;
        };

        template <class Event>
        Event placed(const json& j)
        {
            Event e;
            e.file = opt_file(j);
            e.line = opt<int>(j, "line");
            e.seq = val<std::int64_t>(j, "seq", 0);
            e.t_ms = val<double>(j, "t_ms", 0.0);
            return e;
        }

        void read_process(const json& j, stream_state& st)
        {
            auto& proc = st.proc;
            st.have_proc = true;
            proc.pid = val<std::int64_t>(j, "pid", 0);
            proc.ppid = val<std::int64_t>(j, "ppid", 0);
            proc.argv = val<std::vector<std::string>>(j, "argv", {});
            proc.executable = val<std::string>(j, "executable", "");
            proc.python = val<std::string>(j, "python", "");
            proc.started_unix = val<double>(j, "started_unix", 0.0);
        }

        void read_warp(const json& j, stream_state& st)
        {
            st.proc.warp_version = val<std::string>(j, "version", "");
            if (auto it = j.find("hooks"); it != j.end() && it->is_object())
            {
                st.proc.hooks = *it;
            }
            st.proc.log_fallback = val<bool>(j, "log_fallback", false);
        }

        void read_dirty(const json& j, stream_state& st)
        {
            auto d = placed<dirty_event>(j);
            d.module = val<std::string>(j, "module", "");
            d.trigger = val<std::string>(j, "trigger", "other");
            if (auto it = j.find("detail"); it != j.end() && it->is_object())
            {
                d.detail = *it;
            }
            st.proc.dirty_events.push_back(std::move(d));
        }

        void read_config_set(const json& j, stream_state& st)
        {
            auto c = placed<config_set_event>(j);
            c.key = val<std::string>(j, "key", "");
            c.old_value = j.value("old", json());
            c.new_value = j.value("new", json());
            st.proc.config_sets.push_back(std::move(c));
        }

        void read_module(const json& j, stream_state& st)
        {
            auto m = placed<module_created_event>(j);
            m.module = val<std::string>(j, "module", "");
            st.proc.modules_created.push_back(std::move(m));
        }

        void read_call(const json& j, stream_state& st)
        {
            auto c = placed<api_call_event>(j);
            c.function = val<std::string>(j, "function", "");
            if (auto it = j.find("args"); it != j.end() && it->is_object())
            {
                c.args = *it;
            }
            st.proc.calls.push_back(std::move(c));
        }

        // The exit record's launches: interned signatures, and the order as runs of indices.
        void read_launches(const json& j, stream_state& st)
        {
            std::vector<launch_record> sigs;
            if (auto it = j.find("launch_signatures"); it != j.end() && it->is_array())
            {
                for (const auto& s : *it)
                {
                    launch_record lr;
                    lr.kernel = val<std::string>(s, "kernel", "");
                    lr.module = val<std::string>(s, "module", "");
                    lr.dim = json_text(s.value("dim", json()));
                    lr.device = val<std::string>(s, "device", "");
                    std::vector<shared_text> dtypes;
                    for (auto& t : val<std::vector<std::string>>(s, "dtypes", {}))
                    {
                        dtypes.emplace_back(std::move(t));
                    }
                    lr.dtypes = shared_text_list(std::move(dtypes));
                    lr.block_dim = val<int>(s, "block_dim", 0);
                    lr.adjoint = val<bool>(s, "adjoint", false);
                    lr.pid = st.proc.pid;
                    sigs.push_back(std::move(lr));
                }
            }
            if (auto it = j.find("launch_runs"); it != j.end() && it->is_array())
            {
                for (const auto& r : *it)
                {
                    if (!r.is_array() || r.size() != 2 || !r[0].is_number_integer() || !r[1].is_number_integer())
                    {
                        continue;
                    }
                    auto idx = r[0].get<std::int64_t>();
                    if (idx < 0 || idx >= static_cast<std::int64_t>(sigs.size()))
                    {
                        continue;
                    }
                    launch_record lr = sigs[static_cast<std::size_t>(idx)];
                    lr.count = r[1].get<std::int64_t>();
                    st.launches.push_back(std::move(lr));
                }
            }
        }

        void read_exit(const json& j, stream_state& st, shim_records& out)
        {
            auto& proc = st.proc;
            proc.exited_cleanly = true;
            if (auto t = j.find("t_ms"); t != j.end() && t->is_number())
            {
                proc.exited_ms = t->get<double>();
            }
            for (auto [key, into] : {std::pair("runtime", &proc.runtime), std::pair("whatif", &proc.whatif),
                                     std::pair("launch_times", &proc.launch_times)})
            {
                if (auto it = j.find(key); it != j.end() && it->is_object())
                {
                    *into = *it;
                }
            }
            read_launches(j, st);
            out.launch_total += val<std::int64_t>(j, "launch_total", 0);
            out.launches_truncated = out.launches_truncated || val<bool>(j, "launches_truncated", false);
        }

        // One record of the contract, into the process's state (or the pass's loads).
        void read_record(const std::string& type, const json& j, stream_state& st, shim_records& out)
        {
            if (type == "process")
            {
                read_process(j, st);
            }
            else if (type == "warp")
            {
                read_warp(j, st);
            }
            else if (type == "load")
            {
                out.loads.push_back(load_from(j, st.proc.pid));
            }
            else if (type == "dirty")
            {
                read_dirty(j, st);
            }
            else if (type == "config_set")
            {
                read_config_set(j, st);
            }
            else if (type == "module")
            {
                read_module(j, st);
            }
            else if (type == "call")
            {
                read_call(j, st);
            }
            else if (type == "exit")
            {
                read_exit(j, st, out);
            }
            else if (type == "shim_error")
            {
                st.proc.shim_errors.push_back(val<std::string>(j, "where", "?") + ": " + val<std::string>(j, "error", ""));
            }
        }
    }

    void read_shim_stream(std::istream& in, shim_records& out)
    {
        stream_state st;
        std::string line;
        while (std::getline(in, line))
        {
            if (line.empty())
            {
                continue;
            }
            json j = json::parse(line, nullptr, false);
            if (j.is_discarded() || !j.is_object())
            {
                ++out.malformed_lines;
                continue;
            }
            // Every record is checked against the shim contract before it is read: one outside
            // it is named and left out, never read by guesswork.
            if (std::string why = shim_record_violation(j); !why.empty())
            {
                if (out.rejected.size() < shim_records::rejected_kept)
                {
                    out.rejected.push_back(std::move(why));
                }
                ++out.rejected_count;
                continue;
            }
            if (j["type"] == "process" && j.value("contract", 1) > shim_contract_version()
                && out.newer_contract == 0)
            {
                out.newer_contract = j.value("contract", 1);
            }
            read_record(j["type"].get<std::string>(), j, st, out);
        }
        if (st.have_proc)
        {
            out.processes.push_back(std::move(st.proc));
        }
        for (auto& l : st.launches)
        {
            out.launches.push_back(std::move(l));
        }
    }

    shim_records read_shim_records(const std::string& dir)
    {
        shim_records out;
        std::error_code ec;
        std::vector<fs::path> files;
        for (const auto& entry : fs::directory_iterator(dir, ec))
        {
            auto name = entry.path().filename().string();
            if (name.rfind("proc-", 0) == 0 && entry.path().extension() == ".jsonl")
            {
                files.push_back(entry.path());
            }
        }
        std::sort(files.begin(), files.end());
        // One stream per process; processes are ordered by start time afterwards. Each file is
        // opened as the program may have left it: never a FIFO, a link or past the cap.
        std::vector<shim_records> parts;
        for (const auto& f : files)
        {
            const bounded_read file = read_regular_file(f.string(), max_record_file_bytes);
            if (!file.ok)
            {
                out.unreadable.push_back(f.filename().string() + ": " + file.why);
                continue;
            }
            std::istringstream in(file.text);
            shim_records part;
            read_shim_stream(in, part);
            parts.push_back(std::move(part));
        }
        std::sort(parts.begin(),
                  parts.end(),
                  [](const shim_records& a, const shim_records& b)
                  {
                      double ta = a.processes.empty() ? 0.0 : a.processes.front().started_unix;
                      double tb = b.processes.empty() ? 0.0 : b.processes.front().started_unix;
                      return ta < tb;
                  });
        for (auto& p : parts)
        {
            out.malformed_lines += p.malformed_lines;
            out.rejected_count += p.rejected_count;
            out.newer_contract = std::max(out.newer_contract, p.newer_contract);
            for (auto& why : p.rejected)
            {
                if (out.rejected.size() < shim_records::rejected_kept)
                {
                    out.rejected.push_back(std::move(why));
                }
            }
            out.launch_total += p.launch_total;
            out.launches_truncated = out.launches_truncated || p.launches_truncated;
            for (auto& x : p.processes)
            {
                out.processes.push_back(std::move(x));
            }
            for (auto& x : p.loads)
            {
                out.loads.push_back(std::move(x));
            }
            for (auto& x : p.launches)
            {
                out.launches.push_back(std::move(x));
            }
        }
        return out;
    }

    // ---------------------------------------------------------------------------------------
    // Warp's log lines

    namespace
    {
        // Lines longer than this are never Warp's: skip them before any regex runs.
        constexpr std::size_t max_log_line = 4096;

        std::string_view trim_left(std::string_view s)
        {
            std::size_t i = 0;
            while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
            {
                ++i;
            }
            return s.substr(i);
        }

        bool is_hex(const std::string& s)
        {
            return s.size() >= 6
                   && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
        }
    }

    std::optional<module_load> parse_module_line(const std::string& raw)
    {
        if (raw.size() > max_log_line || trim_left(raw).rfind("Module ", 0) != 0)
        {
            return std::nullopt;
        }
        static const std::regex re(
            R"(^\s*Module (.+?) load on device '([^']+)'(?: \(block_dim=(\d+)\))? took (\d+(?:\.\d+)?) ms\s+\((compiled|cached|error)\)\s*$)");
        std::string line = raw;
        if (!line.empty() && line.back() == '\r')
        {
            line.pop_back();
        }
        std::smatch m;
        if (!std::regex_match(line, m, re))
        {
            return std::nullopt;
        }
        module_load l;
        std::string label = m[1].str();
        auto space = label.rfind(' ');
        if (space != std::string::npos && is_hex(label.substr(space + 1)))
        {
            l.module = label.substr(0, space);
            l.hash = label.substr(space + 1);
        }
        else
        {
            l.module = label;  // strip_hash=True modules print no hash
        }
        l.device = m[2].str();
        if (m[3].matched)
        {
            l.block_dim = std::stoi(m[3].str());
        }
        l.warp_ms = std::stod(m[4].str());
        l.status = status_from(m[5].str());
        l.source = figure_source::log;
        return l;
    }

    std::optional<double> parse_compile_line(const std::string& raw, std::string* kind)
    {
        if (raw.size() > max_log_line || trim_left(raw).rfind("Compile ", 0) != 0)
        {
            return std::nullopt;
        }
        static const std::regex re(R"(^\s*Compile (x86|CUDA)(?: \([^)]*\))? took (\d+(?:\.\d+)?) ms\s*$)");
        std::string line = raw;
        if (!line.empty() && line.back() == '\r')
        {
            line.pop_back();
        }
        std::smatch m;
        if (!std::regex_match(line, m, re))
        {
            return std::nullopt;
        }
        if (kind)
        {
            *kind = m[1].str() == "CUDA" ? "cuda" : "cpu";
        }
        return std::stod(m[2].str());
    }

    namespace
    {
        // A line of the program's output, at most `most` bytes of it kept (the rest of the line
        // is read past): a program that prints 600 MB without a newline cost as much memory.
        bool bounded_line(std::istream& in, std::string& line, std::size_t most)
        {
            line.clear();
            std::streambuf* buf = in.rdbuf();
            bool any = false;
            for (;;)
            {
                const int c = buf->sbumpc();
                if (c == std::char_traits<char>::eof())
                {
                    in.setstate(std::ios::eofbit);
                    return any;
                }
                any = true;
                if (c == '\n')
                {
                    return true;
                }
                if (line.size() < most)
                {
                    line.push_back(static_cast<char>(c));
                }
            }
        }

        // Warp's log lines and the runners' summary lines are short: longer lines are kept cut.
        constexpr std::size_t output_line_bytes = 4096;
    }

    log_scan scan_warp_log(std::istream& in)
    {
        log_scan scan;
        std::string line;
        double pending_native = 0.0;
        std::string pending_kind;
        int pending_lines = 0;
        std::int64_t order = 0;
        while (bounded_line(in, line, output_line_bytes))
        {
            std::string kind;
            if (auto native = parse_compile_line(line, &kind))
            {
                scan.native_ms_total += *native;
                ++scan.native_lines;
                pending_native += *native;
                pending_kind = kind;
                ++pending_lines;
                continue;
            }
            if (auto load = parse_module_line(line))
            {
                load->seq = order++;
                // Exactly one compile line before a compiled module line: they belong together.
                if (load->status == load_status::compiled && pending_lines == 1)
                {
                    load->native_ms = pending_native;
                    load->native_kind = pending_kind;
                }
                pending_native = 0.0;
                pending_lines = 0;
                scan.loads.push_back(std::move(*load));
            }
        }
        return scan;
    }

    namespace
    {
        // Every entry below a pass's kernel cache; an unreadable part ends the walk, not the pass.
        void walk_cache(const std::string& warp_cache_dir, const std::function<void(const fs::directory_entry&)>& visit)
        {
            std::error_code ec;
            if (!fs::exists(warp_cache_dir, ec))
            {
                return;
            }
            for (auto it = fs::recursive_directory_iterator(warp_cache_dir, fs::directory_options::skip_permission_denied, ec);
                 it != fs::recursive_directory_iterator();
                 it.increment(ec))
            {
                if (ec)
                {
                    break;
                }
                visit(*it);
            }
        }
    }

    namespace
    {
        // Files and bytes under a folder (regular files; no link followed), at most max_entries
        // entries walked: a private cache is the pass's, but a program can fill it.
        constexpr std::size_t max_cache_entries = 500000;

        void count_under(const fs::path& dir, const std::function<bool(const fs::path&)>& skip_dir, std::int64_t& files,
                         std::int64_t& bytes)
        {
            std::error_code ec;
            if (!fs::is_directory(fs::symlink_status(dir, ec)))
            {
                return;
            }
            std::size_t walked = 0;
            for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
                 it != fs::recursive_directory_iterator() && !ec && walked < max_cache_entries; it.increment(ec), ++walked)
            {
                const auto status = it->symlink_status(ec);
                if (fs::is_directory(status))
                {
                    if (skip_dir && skip_dir(it->path()))
                    {
                        it.disable_recursion_pending();
                    }
                    continue;
                }
                if (fs::is_regular_file(status))
                {
                    ++files;
                    bytes += static_cast<std::int64_t>(it->file_size(ec));
                }
            }
        }
    }

    std::vector<cache_state> read_cache_states(const pass_caches& where)
    {
        std::vector<cache_state> out;
        const auto is_lto = [](const fs::path& p) { return p.filename() == "lto" && p.has_parent_path(); };
        cache_state kernels;
        kernels.kind = cache_kind::warp_kernels;
        count_under(where.warp_cache, is_lto, kernels.files_after, kernels.bytes_after);
        out.push_back(kernels);
        cache_state lto;
        lto.kind = cache_kind::warp_lto;
        std::error_code ec;
        if (fs::is_directory(where.warp_cache, ec))
        {
            // Warp's LTO cache is <kernel cache>/<version>/lto (clear_lto_cache removes it)
            for (const auto& version : fs::directory_iterator(where.warp_cache, ec))
            {
                count_under(version.path() / "lto", nullptr, lto.files_after, lto.bytes_after);
            }
        }
        out.push_back(lto);
        cache_state cuda;
        cuda.kind = cache_kind::cuda;
        count_under(where.cuda_cache, nullptr, cuda.files_after, cuda.bytes_after);
        out.push_back(cuda);
        cache_state headers;
        headers.kind = cache_kind::precompiled_headers;
        if (fs::is_directory(where.tmp_dir, ec))
        {
            for (const auto& entry : fs::directory_iterator(where.tmp_dir, ec))
            {
                if (entry.path().filename().string().rfind("wp_pch_", 0) == 0)
                {
                    count_under(entry.path(), nullptr, headers.files_after, headers.bytes_after);
                }
            }
        }
        out.push_back(headers);
        return out;
    }

    void note_cache_starts(std::vector<cache_state>& after, const std::vector<cache_state>& before)
    {
        for (auto& a : after)
        {
            for (const auto& b : before)
            {
                if (b.kind == a.kind)
                {
                    a.files_before = b.files_after;
                    a.bytes_before = b.bytes_after;
                }
            }
        }
    }

    cache_inventory inventory_cache(const std::string& warp_cache_dir)
    {
        cache_inventory inv;
        walk_cache(warp_cache_dir, [&](const fs::directory_entry& entry)
        {
            std::error_code ec;
            const auto& p = entry.path();
            std::string name = p.filename().string();
            if (entry.is_directory(ec))
            {
                if (name.rfind("wp_", 0) == 0)
                {
                    ++inv.module_dirs;
                }
                return;
            }
            if (!entry.is_regular_file(ec))
            {
                return;
            }
            auto size = static_cast<std::int64_t>(entry.file_size(ec));
            std::string ext = p.extension().string();
            if (ext == ".cpp" || ext == ".cu")
            {
                ++inv.source_files;
                inv.source_bytes += size;
            }
            else if (ext == ".o" || ext == ".ptx" || ext == ".cubin")
            {
                ++inv.binary_files;
                inv.binary_bytes += size;
            }
            else if (ext == ".lto" || ext == ".ltoir")
            {
                ++inv.lto_files;
                inv.lto_bytes += size;
            }
        });
        return inv;
    }

    std::vector<std::string> module_folders(const std::string& warp_cache_dir, std::size_t limit)
    {
        std::vector<std::string> out;
        walk_cache(warp_cache_dir, [&](const fs::directory_entry& entry)
        {
            std::error_code ec;
            std::string name = entry.path().filename().string();
            if (out.size() < limit && name.rfind("wp_", 0) == 0 && entry.is_directory(ec))
            {
                out.push_back(std::move(name));
            }
        });
        return out;
    }

    nvrtc_trace nvrtc_trace_of(const std::string& text)
    {
        const auto j = nlohmann::json::parse(text);
        const auto& all = j.is_object() && j.contains("traceEvents") ? j.at("traceEvents") : j;
        if (!all.is_array())
        {
            throw std::runtime_error("no traceEvents array");
        }
        std::vector<nlohmann::json> kept;
        for (const auto& e : all)
        {
            if (!e.is_object() || e.value("ph", "") != "X" || !e.contains("ts") || !e.contains("dur")
                || !e["ts"].is_number() || !e["dur"].is_number())
            {
                continue;
            }
            const std::string name = e.value("name", "");
            if (name.rfind("Total ", 0) == 0)
            {
                continue;  // per-category sums placed at 0: they nest under nothing
            }
            nlohmann::json ev = {{"name", name}, {"ts", e["ts"]}, {"dur", e["dur"]}};
            if (e.contains("args") && e["args"].is_object() && e["args"].contains("detail")
                && e["args"]["detail"].is_string())
            {
                std::string detail = e["args"]["detail"].get<std::string>();
                if (detail.size() > 200)
                {
                    detail = detail.substr(0, 200) + "...";
                }
                ev["args"] = {{"detail", detail}};
            }
            kept.push_back(std::move(ev));
        }
        nvrtc_trace t;
        if (kept.size() > static_cast<std::size_t>(nvrtc_trace_max_events))
        {
            std::stable_sort(kept.begin(), kept.end(), [](const nlohmann::json& a, const nlohmann::json& b)
                             { return a["dur"].get<double>() > b["dur"].get<double>(); });
            t.events_dropped = static_cast<int>(kept.size()) - nvrtc_trace_max_events;
            kept.resize(nvrtc_trace_max_events);
        }
        std::stable_sort(kept.begin(), kept.end(), [](const nlohmann::json& a, const nlohmann::json& b)
                         { return a["ts"].get<double>() < b["ts"].get<double>(); });
        t.events = std::move(kept);
        return t;
    }

    std::vector<nvrtc_trace> collect_nvrtc_traces(const std::string& warp_cache_dir, std::vector<std::string>& notes)
    {
        // <output>_compile-time-trace.json as Warp names it; NVRTC adds ".json" again (CUDA 13.x)
        static const std::string marker = "_compile-time-trace";
        constexpr std::uintmax_t max_bytes = 64u << 20;
        std::vector<nvrtc_trace> out;
        walk_cache(warp_cache_dir, [&](const fs::directory_entry& entry)
        {
            std::error_code ec;
            const std::string name = entry.path().filename().string();
            if (!entry.is_regular_file(ec) || name.find(marker) == std::string::npos || name.size() < 5
                || name.compare(name.size() - 5, 5, ".json") != 0)
            {
                return;
            }
            if (entry.file_size(ec) > max_bytes)
            {
                notes.push_back("NVRTC trace " + name + " is larger than 64 MiB: left out");
                return;
            }
            std::ifstream in(entry.path(), std::ios::binary);
            std::ostringstream text;
            text << in.rdbuf();
            try
            {
                nvrtc_trace t = nvrtc_trace_of(text.str());
                t.file = name;
                t.module_dir = entry.path().parent_path().filename().string();
                const auto cut = t.module_dir.rfind('_');
                const std::string tail = cut == std::string::npos ? "" : t.module_dir.substr(cut + 1);
                const bool hex7 = tail.size() == 7
                                  && std::all_of(tail.begin(), tail.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
                t.hash_prefix = hex7 ? tail : "";
                out.push_back(std::move(t));
            }
            catch (const std::exception& e)
            {
                notes.push_back("NVRTC trace " + name + " could not be read: " + e.what());
            }
        });
        std::sort(out.begin(), out.end(), [](const nvrtc_trace& a, const nvrtc_trace& b) { return a.file < b.file; });
        return out;
    }

    void scan_test_failures(std::istream& in, std::vector<std::string>& out, std::size_t cap)
    {
        static const std::regex pytest_line(R"(^(FAILED|ERROR) (\S+::\S+)( - .*)?$)");
        static const std::regex unittest_line(R"(^(FAIL|ERROR): (\S+) \(([^)]+)\)$)");
        std::string line;
        std::smatch m;
        while (out.size() < cap && bounded_line(in, line, output_line_bytes))
        {
            if (line.size() > 4000 || (line.rfind("FAIL", 0) != 0 && line.rfind("ERROR", 0) != 0))
            {
                continue;
            }
            if (!line.empty() && line.back() == '\r')
            {
                line.pop_back();
            }
            std::string test;
            if (std::regex_match(line, m, pytest_line))
            {
                test = m[2];
            }
            else if (std::regex_match(line, m, unittest_line))
            {
                // 3.11: "test_x (pkg.mod.Class.test_x)"; older: "test_x (pkg.mod.Class)"
                const std::string where = m[3];
                const std::string name = m[2];
                test = where.size() > name.size() && where.compare(where.size() - name.size(), name.size(), name) == 0
                           ? where
                           : where + "." + name;
            }
            if (!test.empty() && std::find(out.begin(), out.end(), test) == out.end())
            {
                out.push_back(test);
            }
        }
    }

    std::string last_error_line(const std::string& path)
    {
        // What a Python traceback ends with: "ValueError: ...", "module.CustomError: ...",
        // "KeyboardInterrupt". The tail kept for the report may have lost it; this reads all.
        static const std::regex error_line(R"(^([A-Za-z_][A-Za-z0-9_.]*)(Error|Exception|Interrupt|Exit)(:.*)?$)");
        std::ifstream in(path, std::ios::binary);
        std::string line;
        std::string last;
        while (std::getline(in, line))
        {
            if (line.size() > 4000)
            {
                line.resize(4000);
            }
            if (!line.empty() && line.back() == '\r')
            {
                line.pop_back();
            }
            if (std::regex_match(line, error_line))
            {
                last = line;
            }
        }
        return last;
    }
}
