// The warm-up plan as the data file the runtime reads, the runtime, and the plan as text. Every
// text from the report reaches the plan as an ASCII-escaped JSON string (a command or a module
// name can hold anything) and none reaches the runtime, which is the same for every plan.
#include "xwarp/render/warmup_file.hpp"

#include "xwarp/model/digest.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <tuple>

#include "xwarp/model/contracts.hpp"
#include "xwarp/version.hpp"
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

        // A folder as the file writes it: relative to the project when it is in it ("." the project
        // itself), else as it was.
        std::string relative_to(const std::string& path, const std::string& project)
        {
            if (project.empty() || path.empty() || path[0] != '/')
            {
                return path;
            }
            if (path == project)
            {
                return ".";
            }
            const std::string prefix = project.back() == '/' ? project : project + "/";
            return path.compare(0, prefix.size(), prefix) == 0 ? path.substr(prefix.size()) : path;
        }
    }

    nlohmann::json warmup_target_records(const warmup_plan& plan, nlohmann::json& option_sets)
    {
        // Option sets, numbered: most programs build every module with one.
        std::map<std::string, std::size_t> option_index;
        option_sets = nlohmann::json::array();
        std::vector<const warmup_target*> covered;
        for (const auto& t : plan.targets)
        {
            if (!t.covered)
            {
                continue;
            }
            covered.push_back(&t);
            if (option_index.emplace(t.options.dump(), option_sets.size()).second)
            {
                option_sets.push_back(t.options);
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
        nlohmann::json records = nlohmann::json::array();
        for (const warmup_target* target : covered)
        {
            const warmup_target& t = *target;
            nlohmann::json instances = nlohmann::json::array();
            for (const auto& o : t.overloads)
            {
                instances.push_back({{"kernel", o.kernel}, {"module", o.module}, {"key", o.key}, {"types", o.types}});
            }
            records.push_back({{"warp_module", t.module},
                               {"hash", t.hash},
                               {"device", t.device},
                               {"block_dim", t.block_dim ? nlohmann::json(*t.block_dim) : nlohmann::json()},
                               {"module", t.import_from},
                               {"kernel", t.kernel},
                               {"instances", instances},
                               {"options", option_index[t.options.dump()]},
                               {"factories", t.factories},
                               {"form", t.stage},
                               {"follows", t.follows},
                               {"build_ms", t.build_ms},
                               {"tests", t.tests}});
        }
        return records;
    }

    nlohmann::json warmup_plan_document(const warmup_plan& plan)
    {
        using json = nlohmann::json;
        json not_built = json::array();
        for (const auto& t : plan.targets)
        {
            if (!t.covered)
            {
                not_built.push_back({{"identity", identity_words(t)}, {"why", t.why_not}});
            }
        }
        json import_paths = json::array();
        for (const auto& p : plan.import_paths)
        {
            import_paths.push_back(relative_to(p, plan.project));
        }
        // every identity the run built, covered or not: --prune keeps every folder of a module
        // listed here that the targets do not build (its current hash is not the runtime's to
        // compute). As [module, hash7] pairs: the runtime alone knows how Warp names a cache folder.
        json used = json::array();
        for (const auto& t : plan.targets)
        {
            const json identity = {t.module, t.hash.substr(0, 7)};
            if (std::find(used.begin(), used.end(), identity) == used.end())
            {
                used.push_back(identity);
            }
        }
        json option_sets;
        json targets = warmup_target_records(plan, option_sets);
        return {
            {"contract", warmup_plan_version()},
            {"written_by", std::string("warp-probe warmup (xwarp ") + XWARP_VERSION + ")"},
            {"measured",
             {{"source", plan.source},
              {"command", plan.command},
              {"warp_version", plan.warp_version.empty() ? std::string("?") : plan.warp_version},
              {"identities", plan.covered + plan.uncovered},
              {"planned", plan.covered},
              {"planned_ms", plan.covered_ms},
              {"total_ms", plan.total_ms},
              {"not_built", std::move(not_built)},
              {"left_estimate_ms", plan.left_estimate_ms},
              {"notes", plan.notes}}},
            {"project", plan.project},
            {"import_root", relative_to(plan.import_root, plan.project)},
            {"import_paths", std::move(import_paths)},
            {"packages", plan.packages},
            {"root_packages", plan.root_packages},
            {"workers", plan.workers},
            {"entry_script", plan.entry_script},
            {"cell", plan.cell ? sha256_hex(plan.cell_code) : std::string()},
            {"device", plan.device.empty() ? json() : json(plan.device)},
            {"arch", plan.arch},
            {"used", std::move(used)},
            {"config", plan.config},
            {"options", std::move(option_sets)},
            {"targets", std::move(targets)}};
    }

    std::string render_warmup_plan(const warmup_plan& plan)
    {
        // A reviewer reads a re-measure as this file's diff: a field a line, a target a line, in
        // the order the runtime builds them; every character outside ASCII escaped.
        const nlohmann::json doc = warmup_plan_document(plan);
        const auto text = [](const nlohmann::json& v, int indent = -1)
        { return v.dump(indent, ' ', true, nlohmann::json::error_handler_t::replace); };
        enum class layout
        {
            line,   // the value on its key's line
            items,  // an item a line
            block,  // indented over lines of its own
        };
        static const std::pair<const char*, layout> fields[] = {
            {"contract", layout::line},      {"written_by", layout::line},   {"measured", layout::block},
            {"project", layout::line},       {"import_root", layout::line},  {"import_paths", layout::line},
            {"packages", layout::line},      {"root_packages", layout::line}, {"workers", layout::line},
            {"entry_script", layout::line},  {"cell", layout::line},        {"device", layout::line},
            {"arch", layout::line},          {"used", layout::items},        {"config", layout::line},
            {"options", layout::items},      {"targets", layout::items}};
        std::string out = "{\n";
        bool first = true;
        for (const auto& [key, shape] : fields)
        {
            out += std::string(first ? "" : ",\n") + "  \"" + key + "\": ";
            first = false;
            const nlohmann::json& value = doc.at(key);
            switch (shape)
            {
                case layout::items:
                {
                    std::string items;
                    for (const auto& item : value)
                    {
                        items += std::string(items.empty() ? "" : ",\n") + "    " + text(item);
                    }
                    out += items.empty() ? "[]" : "[\n" + items + "\n  ]";
                    break;
                }
                case layout::block:
                {
                    std::string indented = text(value, 2);
                    for (std::size_t at = indented.find('\n'); at != std::string::npos; at = indented.find('\n', at + 3))
                    {
                        indented.insert(at + 1, "  ");
                    }
                    out += indented;
                    break;
                }
                case layout::line: out += text(value); break;
            }
        }
        return out + "\n}\n";
    }

    std::string warmup_plan_path(const std::string& runtime_path)
    {
        const std::size_t base = runtime_path.rfind('/') == std::string::npos ? 0 : runtime_path.rfind('/') + 1;
        std::size_t dot = runtime_path.rfind('.');
        // a leading dot (or dots) of the name starts no extension, as in Python's splitext
        const std::size_t first_other = runtime_path.find_first_not_of('.', base);
        if (dot == std::string::npos || dot < base || first_other == std::string::npos || dot < first_other)
        {
            dot = runtime_path.size();
        }
        return runtime_path.substr(0, dot) + ".json";
    }

    std::string warmup_cell_path(const std::string& runtime_path)
    {
        const std::string plan = warmup_plan_path(runtime_path);
        return plan.substr(0, plan.size() - 5) + "_cell.py";
    }

    std::string warmup_runtime_text()
    {
        // The contract's rules go into the runtime, not the plan: an edited plan cannot loosen them.
        std::string body = warmup_body_text;
        const auto put = [&](const std::string& mark, const std::string& value)
        {
            for (std::size_t at = body.find(mark); at != std::string::npos; at = body.find(mark, at + value.size()))
            {
                body.replace(at, mark.size(), value);
            }
        };
        put("@XWARP_VERSION@", XWARP_VERSION);
        // (the source holds each mark as a literal of its own, so that it is Python as it is)
        put("[\"@XWARP_NEVER_THE_PROGRAMS@\"]", py_literal(nlohmann::json(never_the_programs())));
        put("{\"@XWARP_CONFIG_RULES@\": {}}", py_literal(warmup_config_rule()));
        return body;
    }

    namespace
    {
        // The warm-up step against a cold run beside it, in the words the analysis's cost verdict
        // gives (warmup_check::cost): what the ratio means, and when it is not judged or only
        // indicative, why.
        std::string cost_text(const warmup_check& c)
        {
            std::string out;
            if (c.of_cold && c.of_cold_band && c.cold_wall_beside_ms.median && c.warmup_and_primed_ms)
            {
                // the words follow the ratio's noise, not its size: 1.04 against a band of 1 ± 3% is
                // more than one cold run, 1.08 against 1 ± 10% is about one; the band is said beside it
                const std::string band_pct = format_fixed(*c.of_cold_band * 100.0, 0) + "%";
                const std::string outside = " (" + format_fixed(*c.of_cold, 2) + " is outside its noise, 1 ± " + band_pct + ")";
                const std::string inside = " (" + format_fixed(*c.of_cold, 2) + " is inside its noise, 1 ± " + band_pct + ")";
                std::string said;
                switch (c.cost)
                {
                    case warmup_cost::less_than_one_cold_run:
                        said = "less than one cold run" + outside + ", so a warm-up step before the program pays on this machine";
                        break;
                    case warmup_cost::more_than_one_cold_run:
                        said = "more than one cold run" + outside + ", so it pays only where later runs share its cache (an "
                               "image, a kept CI cache, a fleet); keeping the caches between runs is the first thing to do";
                        break;
                    case warmup_cost::about_one_cold_run:
                        said = "about one cold run" + inside + ": no gain on one run; keep the caches between runs instead";
                        break;
                    case warmup_cost::not_judged:
                        said = "not judged";
                        break;
                }
                out += "  warm-up + program after: " + format_ms(*c.warmup_and_primed_ms) + ", " + format_fixed(*c.of_cold, 2)
                       + " of a cold run timed beside it (" + format_stat_ms(c.cold_wall_beside_ms) + ", "
                       + std::to_string(c.cold_wall_beside_ms.values.size()) + " sample(s), interleaved, on fresh caches): "
                       + (c.cost_indicative ? "indicative, " : "") + said
                       + (c.cost_why.empty() || c.cost_indicative ? std::string() : " (" + c.cost_why + ")") + "\n";
                if (c.cost_indicative || c.cost == warmup_cost::not_judged)
                {
                    out += "    " + (c.cost_why.empty() ? std::string() : c.cost_why + "; ")
                           + "both sides run under the probe: the shim in the program's processes and the warm-up's own "
                             "interpreter and Warp start (references/measurement.md#overhead)\n";
                }
            }
            return out;
        }
    }

    std::string render_warmup_text(const warmup_plan& plan)
    {
        std::string out;
        const warmup_check* c = plan.check ? &*plan.check : nullptr;
        const int total = plan.covered + plan.uncovered;
        out += "Warm-up for " + one_line(plan.command) + "\n";
        if (c && c->covered_measured)
        {
            out += "  covers " + std::to_string(*c->covered_measured) + " of " + std::to_string(total)
                   + " identities, measured: after the warm-up ran, the program built "
                   + std::to_string(total - *c->covered_measured) + " of them (planned: " + std::to_string(plan.covered) + ", "
                   + format_ms(plan.covered_ms) + " of " + format_ms(plan.total_ms)
                   + " of cold builds, one build per identity on Warp's module timers)\n";
        }
        else
        {
            out += "  plans " + std::to_string(plan.covered) + " of " + std::to_string(total) + " identities: "
                   + format_ms(plan.covered_ms) + " of " + format_ms(plan.total_ms)
                   + " of cold builds, one build per identity on Warp's module timers ("
                   + percent(plan.covered_ms, plan.total_ms) + "), " + std::to_string(plan.workers)
                   + " worker(s); not run here (--verify runs it and measures what it covers)\n";
        }
        if (!plan.script_path.empty())
        {
            out += "  file: " + one_line(plan.script_path) + " (needs only Warp: python " + one_line(plan.script_path)
                   + ", or import it and call warm_up())\n";
            out += "  plan: " + one_line(plan.plan_path) + ", SHA-256 " + plan.plan_digest
                   + (plan.ledger.empty() ? std::string(": not noted as written here")
                                          : ": noted as written here (" + one_line(plan.ledger) + ")")
                   + "; where it was not written (a CI runner, a container build), run the file with --trust-plan="
                   + plan.plan_digest + " (a plan edited since is not built)\n";
        }
        for (const auto& t : plan.targets)
        {
            out += std::string("  ") + (t.covered ? "plan   " : "NOT    ") + one_line(identity_words(t))
                   + (t.covered ? (t.stage > 1 ? ", form " + std::to_string(t.stage) : std::string())
                                : ": " + one_line(t.why_not))
                   + "\n";
        }
        if (plan.uncovered > 0)
        {
            out += "  left to the program: about " + format_ms(plan.left_estimate_ms) + " of builds, an estimate ("
                   + (plan.header_ms > 0 ? "with the " + format_ms(plan.header_ms)
                                               + " precompiled header the first of them writes on the CPU"
                                         : std::string("their measured builds"))
                   + ")\n";
        }
        for (const auto& n : plan.notes)
        {
            out += "  note: " + one_line(n) + "\n";
        }
        if (!c)
        {
            return out;
        }
        out += "\nVerified in fresh private caches (" + std::to_string(c->samples) + " sample(s)): "
               + (c->verdict == warmup_verdict::verified  ? std::string("VERIFIED")
                  : c->verdict == warmup_verdict::partial ? std::string("PARTIAL")
                  : c->verdict == warmup_verdict::failed  ? std::string("FAILED")
                                                          : word_of(c->verdict))
               + "\n";
        if (c->results_read)
        {
            out += "  the file built " + std::to_string(c->file_built) + " of its " + std::to_string(plan.covered)
                   + " identities as measured";
            if (!c->file_other.empty())
            {
                out += ", " + std::to_string(c->file_other.size()) + " under another hash";
            }
            if (!c->file_failed.empty())
            {
                out += ", could not build " + std::to_string(c->file_failed.size());
            }
            out += "\n";
            for (const auto& f : c->file_other)
            {
                out += "    built under another hash: " + one_line(f) + "\n";
            }
            for (const auto& f : c->file_failed)
            {
                out += "    not built: " + one_line(f) + "\n";
            }
        }
        if (c->warmup_wall_ms.median)
        {
            out += "  warm-up:       " + format_stat_ms(c->warmup_wall_ms) + " wall, " + std::to_string(c->warmup_builds)
                   + " build(s) in " + format_stat_ms(c->warmup_build_ms) + " of build time";
            if (c->serial_cold_build_ms)
            {
                out += "; the measured run built serially for " + format_ms(*c->serial_cold_build_ms);
            }
            out += "\n";
        }
        if (!c->worker_trials.empty())
        {
            out += "  worker processes tried:";
            for (const auto& t : c->worker_trials)
            {
                out += " " + std::to_string(t.workers) + ": " + format_stat_ms(t.wall_ms) + " (" + std::to_string(t.wall_ms.values.size())
                       + " sample(s));";
            }
            out += c->workers_picked ? " the file keeps " + std::to_string(*c->workers_picked) + "\n" : std::string("\n");
        }
        if (!c->program_ran)
        {
            out += "  program after: not run (the warm-up did not finish): nothing is known of what it builds\n";
        }
        else
        {
            out += "  program after: " + format_stat_ms(c->primed_wall_ms) + " wall; its warm wall " + format_stat_ms(c->warm_wall_ms);
            if (c->wall_gap_ms && c->band_ms)
            {
                out += " (" + std::string(*c->wall_gap_ms >= 0 ? "+" : "-") + format_ms(std::abs(*c->wall_gap_ms)) + ", band "
                       + format_ms(*c->band_ms) + ")";
            }
            out += "\n";
            out += cost_text(*c);
            out += "  builds left at run time: " + std::to_string(c->covered_built.size() + c->uncovered_built.size() + c->new_built.size())
                   + "\n";
            for (const auto& b : c->covered_built)
            {
                out += "    covered but built: " + one_line(b) + "\n";
            }
            for (const auto& b : c->uncovered_built)
            {
                out += "    not covered, built as expected: " + one_line(b) + "\n";
            }
            for (const auto& b : c->new_built)
            {
                out += "    not in the measured run: " + one_line(b) + "\n";
            }
        }
        for (const auto& r : c->reasons)
        {
            out += "  " + one_line(r) + "\n";
        }
        return out;
    }
}
