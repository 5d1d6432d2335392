// The warm-up plan as a Python file and as text. Every text from the report reaches the file
// as an ASCII-escaped string literal or a one-line comment: a command or a module name can hold
// anything, and the file is code the user runs.
#include "xwarp/render/warmup_file.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <tuple>

#include "xwarp/model/format.hpp"
#include "xwarp/render/printable.hpp"
#include "xwarp/render/text.hpp"

namespace xwarp
{
    extern const char* const warmup_body_text;

    namespace
    {
        using json = nlohmann::json;

        // One code point of UTF-8 at s[i] (advancing i); U+FFFD for a byte that starts none.
        std::uint32_t next_code_point(const std::string& s, std::size_t& i)
        {
            const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
            const unsigned char b = byte(i);
            const int extra = b < 0x80 ? 0 : (b >> 5) == 0x6 ? 1 : (b >> 4) == 0xE ? 2 : (b >> 3) == 0x1E ? 3 : -1;
            if (extra < 0 || i + extra >= s.size() + (extra == 0 ? 1 : 0))
            {
                ++i;
                return 0xFFFD;
            }
            std::uint32_t cp = extra == 0 ? b : b & (0x3F >> extra);
            for (int k = 1; k <= extra; ++k)
            {
                if ((byte(i + k) & 0xC0) != 0x80)
                {
                    ++i;
                    return 0xFFFD;
                }
                cp = (cp << 6) | (byte(i + k) & 0x3F);
            }
            i += static_cast<std::size_t>(extra) + 1;
            return cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) ? 0xFFFD : cp;
        }

        // A Python string literal holding s, in printable ASCII: every other character as
        // Python's own escape (\xNN, \uNNNN, \UNNNNNNNN), so a character past U+FFFF stays one
        // character (a JSON dump writes two surrogates) and no control or bidirectional
        // character reaches the file raw.
        std::string py_string(const std::string& s)
        {
            std::string out = "\"";
            char buf[16];
            for (std::size_t i = 0; i < s.size();)
            {
                const std::uint32_t cp = next_code_point(s, i);
                if (cp == '"' || cp == '\\')
                {
                    out += '\\';
                    out += static_cast<char>(cp);
                }
                else if (cp >= 0x20 && cp < 0x7F)
                {
                    out += static_cast<char>(cp);
                }
                else
                {
                    std::snprintf(buf, sizeof buf, cp < 0x100 ? "\\x%02x" : cp < 0x10000 ? "\\u%04x" : "\\U%08x", cp);
                    out += buf;
                }
            }
            return out + "\"";
        }

        std::string py_literal(const json& v)
        {
            if (v.is_null())
            {
                return "None";
            }
            if (v.is_boolean())
            {
                return v.get<bool>() ? "True" : "False";
            }
            if (v.is_string())
            {
                return py_string(v.get<std::string>());
            }
            if (v.is_array())
            {
                std::string out = "[";
                for (const auto& x : v)
                {
                    out += (out.size() > 1 ? ", " : "") + py_literal(x);
                }
                return out + "]";
            }
            if (v.is_object())
            {
                std::string out = "{";
                for (const auto& [k, x] : v.items())
                {
                    out += (out.size() > 1 ? ", " : "") + py_string(k) + ": " + py_literal(x);
                }
                return out + "}";
            }
            return v.dump();
        }

        // A comment line: printable, one line, ASCII escapes for the rest (no bidi control
        // reaches the file).
        std::string comment(const std::string& text)
        {
            std::string line = one_line(text);
            std::string ascii;
            for (unsigned char c : line)
            {
                ascii += c < 0x80 ? std::string(1, static_cast<char>(c)) : "?";
            }
            return "# " + ascii + "\n";
        }

        std::string identity_words(const warmup_target& t)
        {
            return t.module + " " + t.hash.substr(0, 7) + " on " + t.device
                   + (t.block_dim ? " block_dim " + std::to_string(*t.block_dim) : std::string()) + " ("
                   + format_ms(t.build_ms) + ")";
        }

        std::string percent(double part, double whole)
        {
            return whole > 0.0 ? std::to_string(static_cast<int>(100.0 * part / whole + 0.5)) + "%" : "n/a";
        }

        // the fixed part of the file (probe/render/warmup_body.py, compiled in), after its header
        std::string warm_up_code()
        {
            std::string body = warmup_body_text;
            const auto first_code = body.find("\n\n");
            return first_code == std::string::npos ? body : body.substr(first_code);
        }
    }

    std::string render_warmup_script(const warmup_plan& plan)
    {
        std::string out = "#!/usr/bin/env python3\n";
        out += comment("Warm-up for Warp's kernel cache, written by warp-probe warmup (xwarp) from " + plan.source + ".");
        out += "#\n";
        out += comment("The measured command: " + plan.command);
        out += comment("Measured with Warp " + (plan.warp_version.empty() ? std::string("?") : plan.warp_version) + ". It builds "
                       + std::to_string(plan.covered) + " of the " + std::to_string(plan.covered + plan.uncovered)
                       + " module identities that run built (" + format_ms(plan.covered_ms) + " of its "
                       + format_ms(plan.total_ms) + " of builds, " + percent(plan.covered_ms, plan.total_ms) + "),");
        out += comment("up to " + std::to_string(plan.workers) + " at a time, into Warp's kernel cache.");
        out += "#\n";
        out += "# Run it as a build step with the cache the application will use:\n";
        out += "#     WARP_CACHE_PATH=/path/to/cache python warp_warmup.py [--workers N] [--root DIR]\n";
        out += "# or call warm_up() at the application's start. It needs only Warp. It imports the program's\n";
        out += "# modules from --root (default: this file's folder; the measured run's was\n";
        out += comment("  " + plan.import_root + ").");
        out += "# An identity folds in Warp's version, the device and the options: after a change to any of them\n";
        out += "# the program builds again; write the file again from a new measurement.\n";
        if (plan.uncovered > 0)
        {
            out += "#\n# Not built here (they still build when the program runs):\n";
            for (const auto& t : plan.targets)
            {
                if (!t.covered)
                {
                    out += comment("  " + identity_words(t) + ": " + t.why_not);
                }
            }
        }
        for (const auto& n : plan.notes)
        {
            out += comment("Note: " + n);
        }
        out += "\nimport argparse\nimport importlib\nimport json\nimport os\nimport queue\nimport subprocess\nimport sys\n"
               "import threading\nimport time\n\nimport warp as wp\n\n";
        std::string paths;
        for (const auto& p : plan.import_paths)
        {
            paths += (paths.empty() ? "" : ", ") + py_string(p);
        }
        out += "IMPORT_PATHS = [" + paths + "]  # where else the program imported its kernels' modules from (after --root)\n";
        out += "WORKERS = " + std::to_string(plan.workers) + "\n";
        out += "ENTRY_SCRIPT = " + py_string(plan.entry_script)
               + "  # the command's script, in --root: its kernels (module __main__) are built from its definitions\n";
        out += "ENTRY_SOURCE = " + (plan.entry_source.empty() ? std::string("None") : py_string(plan.entry_source))
               + "  # a notebook cell's code, in place of the script\n";
        out += "DEVICE = " + (plan.device.empty() ? std::string("None") : py_string(plan.device))
               + "  # replaces each CUDA device when set\n";
        std::string arch;
        for (int a : plan.arch)
        {
            arch += (arch.empty() ? "" : ", ") + std::to_string(a);
        }
        out += "ARCH = [" + arch + "]  # CUDA architectures also built ahead of time (wp.compile_aot_module)\n\n";
        out += "# wp.config values the program set before its first build\nCONFIG = " + py_literal(plan.config) + "\n\n";

        // Option sets, numbered: most programs build every module with one.
        std::vector<std::string> option_sets;
        std::map<std::string, std::size_t> option_index;
        for (const auto& t : plan.targets)
        {
            if (t.covered && option_index.emplace(t.options.dump(), option_sets.size()).second)
            {
                std::string set = "{\n";
                for (const auto& [key, value] : t.options.items())
                {
                    set += "        " + py_string(key) + ": " + py_literal(value) + ",\n";
                }
                option_sets.push_back(set + "    }");
            }
        }
        out += "# The module options the identities were built with (block_dim apart); the file sets those the\n"
               "# module holds a value for that differs (the others follow wp.config, as in the program)\nOPTIONS = [\n";
        for (const auto& o : option_sets)
        {
            out += "    " + o + ",\n";
        }
        out += "]\n\n";
        out += "# A type of the program's own (a @wp.struct, or an array of one): the worker that builds with it\n"
               "# imports it (_type_of)\n"
               "def _later(*recipe):\n"
               "    return (\"xwarp-later\",) + recipe\n\n\n";
        out += "# What the run built, the modules with the longest builds first. A worker process imports a module once and builds\n"
               "# its forms one after another, registering each one's factory calls and generic instances on top of\n"
               "# the last: FORM numbers the forms of a module, FOLLOWS the forms a worker may have built before.\n"
               "# (Python module, kernel in it, device, block_dim, generic instances, options, factory calls,\n"
               "#  Warp module, form, follows)\n"
               "TARGETS = [\n";
        std::vector<const warmup_target*> covered;
        for (const auto& t : plan.targets)
        {
            if (t.covered)
            {
                covered.push_back(&t);
            }
        }
        // The modules with the longest builds first, so the workers end together; a module's forms in
        // their order, so a worker that built one takes the next one it can build on top.
        std::map<std::string, double> longest;
        for (const warmup_target* t : covered)
        {
            longest[t->module] = std::max(longest[t->module], t->build_ms);
        }
        std::stable_sort(covered.begin(), covered.end(),
                         [&](const warmup_target* a, const warmup_target* b)
                         {
                             return std::make_tuple(-longest[a->module], a->module, a->stage, -a->build_ms)
                                    < std::make_tuple(-longest[b->module], b->module, b->stage, -b->build_ms);
                         });
        for (const warmup_target* target : covered)
        {
            const warmup_target& t = *target;
            out += "    " + comment(identity_words(t));
            std::string instances = "[";
            for (const auto& o : t.overloads)
            {
                std::string types;
                for (const auto& ty : o.types)
                {
                    types += (types.empty() ? "" : ", ") + ty;
                }
                instances += std::string(instances.size() > 1 ? ", " : "") + "(" + py_string(o.kernel) + ", [" + types + "])";
            }
            instances += "]";
            std::string follows;
            for (int f : t.follows)
            {
                follows += (follows.empty() ? "" : ", ") + std::to_string(f);
            }
            out += "    (" + py_string(t.import_from) + ", " + py_string(t.kernel) + ", " + py_string(t.device) + ", "
                   + (t.block_dim ? std::to_string(*t.block_dim) : std::string("None")) + ", " + instances + ", "
                   + std::to_string(option_index[t.options.dump()]) + ", " + py_literal(t.factories) + ", "
                   + py_string(t.module) + ", " + std::to_string(t.stage) + ", [" + follows + "]),\n";
        }
        out += "]\n";
        out += warm_up_code();
        return out;
    }

    std::string render_warmup_text(const warmup_plan& plan)
    {
        std::string out;
        out += "Warm-up for " + one_line(plan.command) + "\n";
        out += "  covers " + std::to_string(plan.covered) + " of " + std::to_string(plan.covered + plan.uncovered)
               + " identities: " + format_ms(plan.covered_ms) + " of " + format_ms(plan.total_ms) + " of cold builds ("
               + percent(plan.covered_ms, plan.total_ms) + "), " + std::to_string(plan.workers) + " worker(s)\n";
        if (!plan.script_path.empty())
        {
            out += "  file: " + one_line(plan.script_path) + " (needs only Warp: python " + one_line(plan.script_path)
                   + ", or import it and call warm_up())\n";
        }
        for (const auto& t : plan.targets)
        {
            out += std::string("  ") + (t.covered ? "built  " : "NOT    ") + one_line(identity_words(t))
                   + (t.covered ? (t.stage > 1 ? ", stage " + std::to_string(t.stage) : std::string())
                                : ": " + one_line(t.why_not))
                   + "\n";
        }
        for (const auto& n : plan.notes)
        {
            out += "  note: " + one_line(n) + "\n";
        }
        if (!plan.check)
        {
            return out;
        }
        const warmup_check& c = *plan.check;
        out += "\nVerified in fresh private caches (" + std::to_string(c.samples) + " sample(s)): "
               + (c.verdict == warmup_verdict::verified ? std::string("VERIFIED") : c.verdict == warmup_verdict::failed ? std::string("FAILED") : word_of(c.verdict)) + "\n";
        out += "  warm-up:       " + format_stat_ms(c.warmup_wall_ms) + " wall, " + std::to_string(c.warmup_builds)
               + " build(s) in " + format_stat_ms(c.warmup_build_ms) + " of build time";
        if (c.serial_cold_build_ms)
        {
            out += "; the measured run built serially for " + format_ms(*c.serial_cold_build_ms);
        }
        out += "\n";
        out += "  program after: " + format_stat_ms(c.primed_wall_ms) + " wall; its warm wall " + format_stat_ms(c.warm_wall_ms);
        if (c.wall_gap_ms && c.band_ms)
        {
            out += " (" + std::string(*c.wall_gap_ms >= 0 ? "+" : "-") + format_ms(std::abs(*c.wall_gap_ms)) + ", band "
                   + format_ms(*c.band_ms) + ")";
        }
        out += "\n";
        out += "  builds left at run time: " + std::to_string(c.covered_built.size() + c.uncovered_built.size() + c.new_built.size())
               + "\n";
        for (const auto& b : c.covered_built)
        {
            out += "    covered but built: " + one_line(b) + "\n";
        }
        for (const auto& b : c.uncovered_built)
        {
            out += "    not covered, built as expected: " + one_line(b) + "\n";
        }
        for (const auto& b : c.new_built)
        {
            out += "    not in the measured run: " + one_line(b) + "\n";
        }
        for (const auto& r : c.reasons)
        {
            out += "  " + one_line(r) + "\n";
        }
        return out;
    }
}
