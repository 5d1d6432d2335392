#include "xwarp/render/printable.hpp"

#include "xwarp/model/json_io.hpp"

#include <algorithm>
#include <cstdio>

namespace xwarp
{
    namespace
    {
        std::string hex_escape(const char* format, unsigned value)
        {
            char buf[16];
            std::snprintf(buf, sizeof buf, format, value);
            return buf;
        }

        // Length of the UTF-8 sequence starting at text[i] and its code point, or 0 when the
        // bytes there are not valid UTF-8.
        std::size_t decode(std::string_view text, std::size_t i, unsigned& cp)
        {
            const auto b = static_cast<unsigned char>(text[i]);
            std::size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
            if (n == 0 || i + n > text.size())
            {
                return 0;
            }
            cp = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
            for (std::size_t k = 1; k < n; ++k)
            {
                const auto c = static_cast<unsigned char>(text[i + k]);
                if ((c >> 6) != 0x2)
                {
                    return 0;
                }
                cp = (cp << 6) | (c & 0x3F);
            }
            return n;
        }

        bool is_bidi_control(unsigned cp)
        {
            return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E)
                   || (cp >= 0x2066 && cp <= 0x2069);
        }

        // Characters that show as nothing: two names that differ by one read the same.
        bool is_invisible(unsigned cp)
        {
            return cp == 0x00AD || cp == 0x034F || cp == 0x180E || (cp >= 0x200B && cp <= 0x200D)
                   || (cp >= 0x2060 && cp <= 0x2064) || cp == 0xFEFF || (cp >= 0xFE00 && cp <= 0xFE0F)
                   || (cp >= 0xE0000 && cp <= 0xE007F) || cp == 0x115F || cp == 0x1160 || cp == 0x3164;
        }

        // Printable ASCII (and, in a block, its newlines and tabs): copied as it is. A backslash
        // of raw text is not: one that the escapes below could be mistaken for is doubled. A page
        // taken over whole holds texts escaped already, whose backslashes are escapes: kept.
        bool kept_as_is(char ch, bool keep_lines, bool raw = true)
        {
            const auto c = static_cast<unsigned char>(ch);
            return (c >= 0x20 && c < 0x7F && (c != '\\' || !raw)) || (keep_lines && (c == '\n' || c == '\t'));
        }

        // A literal backslash that starts what reads as one of this file's escapes (\x1b, \u202e,
        // \n, or another backslash) is doubled, so that the text "\x1b" never reads as an
        // escaped ESC; any other backslash (a regular expression's \d) is kept.
        bool backslash_doubled(std::string_view text, std::size_t i)
        {
            if (i + 1 >= text.size())
            {
                return true;
            }
            const char next = text[i + 1];
            return next == 'x' || next == 'u' || next == 'U' || next == 'n' || next == 'r' || next == 't' || next == '\\';
        }

        std::string escape(std::string_view text, bool keep_lines, bool raw = true)
        {
            const auto kept = [keep_lines, raw](char ch) { return kept_as_is(ch, keep_lines, raw); };
            std::string out;
            out.reserve(text.size());
            for (std::size_t i = 0; i < text.size();)
            {
                // Most text is printable ASCII: copied a run at a time, not a character at a time.
                const std::size_t run_end =
                    static_cast<std::size_t>(std::find_if_not(text.begin() + static_cast<long>(i), text.end(), kept) - text.begin());
                out.append(text.substr(i, run_end - i));
                i = run_end;
                if (i == text.size())
                {
                    break;
                }
                unsigned cp = 0;
                const std::size_t n = decode(text, i, cp);
                if (n == 0)
                {
                    out += hex_escape("\\x%02x", static_cast<unsigned char>(text[i]));
                    ++i;
                    continue;
                }
                // (a block's newlines and tabs went with the run above)
                if (cp == '\\')
                {
                    out += backslash_doubled(text, i) ? "\\\\" : "\\";
                }
                else if (cp == '\n')
                {
                    out += "\\n";
                }
                else if (cp == '\r')
                {
                    out += "\\r";
                }
                else if (cp == '\t')
                {
                    out += "\\t";
                }
                else if (cp < 0x20 || cp == 0x7F)
                {
                    out += hex_escape("\\x%02x", cp);
                }
                else if ((cp >= 0x80 && cp <= 0x9F) || is_bidi_control(cp) || is_invisible(cp) || cp == 0x2028 || cp == 0x2029)
                {
                    out += hex_escape(cp > 0xFFFF ? "\\U%08x" : "\\u%04x", cp);
                }
                else
                {
                    out.append(text.substr(i, n));
                }
                i += n;
            }
            return out;
        }

        // Whether escaping would change the text (one_line's, or a block's): most texts are
        // printable ASCII, and a copy of each to find that out was an allocation per name
        // (100,000 on a large comparison).
        bool needs_escaping(std::string_view text, bool keep_lines = false, bool raw = true)
        {
            return !std::all_of(text.begin(), text.end(), [keep_lines, raw](char ch) { return kept_as_is(ch, keep_lines, raw); });
        }

        void clean(std::string& s)
        {
            if (needs_escaping(s))
            {
                s = one_line(s);
            }
        }

        void clean(shared_text& t)
        {
            if (needs_escaping(t.str()))
            {
                t = shared_text(one_line(t.str()));
            }
        }

        void clean(std::vector<shared_text>& v)
        {
            for (auto& t : v)
            {
                clean(t);
            }
        }

        void clean(shared_text_list& list)  // a new list only where a text changed
        {
            std::vector<shared_text> items = list.items();
            clean(items);
            if (items != list.items())
            {
                list = shared_text_list(std::move(items));
            }
        }

        void clean(std::vector<std::string>& v)
        {
            for (auto& s : v)
            {
                clean(s);
            }
        }

        // What the text report prints of a pass: its output tails and messages (module loads and
        // launches are printed through the summary, cleaned there).
        void clean_run(run_result& run)
        {
            run.stdout_tail = printable_block(run.stdout_tail);
            run.stderr_tail = printable_block(run.stderr_tail);
            clean(run.error_line);
            clean(run.spawn_error);
            clean(run.notes);
        }
    }

    std::string one_line(std::string_view text)
    {
        return escape(text, false);
    }

    void append_one_line(std::string& out, std::string_view text)
    {
        if (needs_escaping(text))
        {
            out += escape(text, false);
        }
        else
        {
            out.append(text);
        }
    }

    std::string printable_block(std::string_view text)
    {
        return escape(text, true);
    }

    std::string printable_page(std::string page)
    {
        if (!needs_escaping(page, true, false))
        {
            return page;
        }
        return escape(page, true, false);
    }

    std::string elide(std::string_view text, std::size_t max_chars)
    {
        if (text.size() <= max_chars)
        {
            return std::string(text);
        }
        // cut at UTF-8 boundaries
        auto boundary = [&](std::size_t pos)
        {
            while (pos > 0 && pos < text.size() && (static_cast<unsigned char>(text[pos]) >> 6) == 0x2)
            {
                --pos;
            }
            return pos;
        };
        const std::size_t head = boundary(max_chars * 2 / 3);
        const std::size_t tail = boundary(text.size() - max_chars / 4);
        return std::string(text.substr(0, head)) + "..." + std::string(text.substr(tail)) + " ("
               + std::to_string(text.size()) + " characters)";
    }

    report printable_copy(const report& original)
    {
        return printable_outline(original, original.findings.size(), true);
    }

    namespace
    {
        run_result outcome_of(const run_result& from)
        {
            run_result to;
            to.wall_ms = from.wall_ms;
            to.exit_code = from.exit_code;
            to.term_signal = from.term_signal;
            to.timed_out = from.timed_out;
            to.interrupted = from.interrupted;
            to.spawn_error = from.spawn_error;
            to.stdout_tail = from.stdout_tail;
            to.stderr_tail = from.stderr_tail;
            to.error_line = from.error_line;
            to.notes = from.notes;
            return to;
        }

        report outline_copy(const report& original, std::size_t findings_kept, bool with_tables)
        {
            // Everything but the samples' records, which the text report never prints: of each
            // pass only its outcome, messages and output tails.
            report r;
            r.schema_version = original.schema_version;
            r.tool = original.tool;
            r.created_utc = original.created_utc;
            r.label = original.label;
            r.command = original.command;
            r.cwd = original.cwd;
            if (original.ownership)
            {
                // the header names the project; the table of every file stays in the original
                r.ownership.emplace();
                r.ownership->project = original.ownership->project;
            }
            r.run_settings = original.run_settings;
            r.setup_code = original.setup_code;
            r.cell_code = original.cell_code;
            r.env = original.env;
            if (with_tables)
            {
                r.result = original.result;
            }
            else
            {
                // at 100,000 identities the tables are most of the analysis, and the text renderer
                // prints them from the report a row at a time
                r.result = summary_without_tables(original.result);
            }
            const std::size_t kept = std::min(findings_kept, original.findings.size());
            r.findings.reserve(kept);
            for (std::size_t i = 0; i < kept; ++i)
            {
                r.findings.push_back(original.findings[i]);
                if (!with_tables)
                {
                    // the text report prints no cause, and a CS-4 or CS-13 cause names every module
                    // it merges: thirty of them at 10,000 identities were 0.4 MB
                    r.findings.back().cause = json_text();
                }
            }
            r.declined = original.declined;
            r.whatif = original.whatif;
            r.fixes = original.fixes;
            r.warnings = original.warnings;
            r.errors = original.errors;
            r.status = original.status;
            for (const auto& smp : original.samples)
            {
                sample copy;
                copy.index = smp.index;
                copy.cold = outcome_of(smp.cold);
                if (smp.warm)
                {
                    copy.warm = outcome_of(*smp.warm);
                }
                r.samples.push_back(std::move(copy));
            }
            return r;
        }

        void clean_summary(summary& s)
        {
            clean(s.warnings);
            clean(s.overlap_note);
            for (auto& f : s.flags)
            {
                clean(f.message);
            }
            for (auto& id : s.identities)
            {
                clean(id.module);
                clean(id.device);
            }
            for (auto& g : s.rebuilt)
            {
                clean(g.module);
                clean(g.device);
            }
            for (auto& k : s.launch_kernels)
            {
                clean(k.kernel);
                clean(k.module);
                clean(k.device);
            }
            clean(s.timeline.lanes);
            for (auto& sp : s.timeline.spans)
            {
                for (shared_text* t : {&sp.module, &sp.thread, &sp.triggered_by, &sp.device, &sp.hash,
                                       &sp.detail})
                {
                    clean(*t);  // a phase's detail comes from NVRTC's trace: data too
                }
            }
            for (auto& t : s.tests)
            {
                clean(t.test);
                for (auto& id : t.identities)
                {
                    clean(id.module);
                    clean(id.hash);
                    clean(id.device);
                }
            }
        }

        void clean_findings(report& r)
        {
            for (auto& f : r.findings)
            {
                clean(f.module);
                clean(f.device);
                clean(f.evidence);
                clean(f.title);
                clean(f.recommendation);
                clean(f.tests);
                if (f.location)
                {
                    clean(f.location->file);
                }
                for (auto& l : f.locations)
                {
                    clean(l.file);
                    clean(l.what);
                }
                if (f.owner)
                {
                    for (std::string* x : {&f.owner->distribution, &f.owner->version, &f.owner->evidence})
                    {
                        clean(*x);
                    }
                }
                if (f.measured)
                {
                    for (std::string* x : {&f.measured->reason, &f.measured->judged_on, &f.measured->lever, &f.measured->needs})
                    {
                        *x = one_line(*x);
                    }
                }
            }
            for (auto& d : r.declined)
            {
                for (std::string* x : {&d.mechanism, &d.lever, &d.module, &d.device, &d.reason})
                {
                    clean(*x);
                }
            }
            for (auto& w : r.whatif)
            {
                clean(w.reason);
                clean(w.mechanism);
                clean(w.modules);
                clean(w.needs);
                clean(w.judged_on.why);
            }
            for (auto& f : r.fixes)
            {
                for (std::string* x : {&f.reason, &f.together, &f.patch_file, &f.finding, &f.mechanism, &f.lever, &f.module})
                {
                    clean(*x);  // a report file's text, every field of it
                }
                clean(f.notes);
                clean(f.files);
            }
        }

        void clean_outline(report& r)
        {
            clean(r.label);
            clean(r.run_settings.stopped_because);
            clean(r.run_settings.sampling);
            clean(r.command);
            clean(r.cwd);
            if (r.ownership)
            {
                for (auto& root : r.ownership->project)
                {
                    clean(root.path);
                    clean(root.why);
                }
            }
            clean(r.warnings);
            clean(r.errors);
            for (std::string* s : {&r.env.warp_version, &r.env.python_version, &r.env.cpu_model, &r.env.cuda_status,
                                   &r.env.os, &r.env.machine, &r.env.probe_version, &r.env.host, &r.env.project_commit})
            {
                clean(*s);
            }
            for (auto& smp : r.samples)
            {
                clean_run(smp.cold);
                if (smp.warm)
                {
                    clean_run(*smp.warm);
                }
            }
            clean_summary(r.result);
            clean_findings(r);
        }

        // A very long module name is shown whole once, in the identities table; everywhere
        // else (sentences, headings, groups) it is shortened.
        void shorten_long_names(report& r, const report& original)
        {
            auto& s = r.result;
            std::vector<std::string> long_names;
            for (const auto& id : original.result.identities)
            {
                if (id.module.size() <= 96
                    && std::all_of(id.module.begin(), id.module.end(), [](char c) { return c >= 0x20 && c < 0x7F; }))
                {
                    continue;  // short, and one_line() keeps it as it is
                }
                std::string name = one_line(id.module);
                if (name.size() > 96 && std::find(long_names.begin(), long_names.end(), name) == long_names.end())
                {
                    long_names.push_back(std::move(name));
                }
            }
            auto shorten = [&](std::string& text)
            {
                for (const auto& name : long_names)
                {
                    const std::string short_name = elide(name);
                    for (auto pos = text.find(name); pos != std::string::npos; pos = text.find(name, pos + short_name.size()))
                    {
                        text.replace(pos, name.size(), short_name);
                    }
                }
            };
            auto shorten_shared = [&](shared_text& held)  // a new text only where it changed
            {
                std::string text = held;
                shorten(text);
                if (text != held.str())
                {
                    held = shared_text(std::move(text));
                }
            };
            if (!long_names.empty())
            {
                for (auto& f : r.findings)
                {
                    shorten(f.evidence);
                    shorten_shared(f.module);
                    shorten_shared(f.recommendation);
                    for (auto& l : f.locations)
                    {
                        shorten(l.what);
                    }
                }
                for (auto& d : r.declined)
                {
                    shorten(d.reason);
                    shorten(d.module);
                }
                for (auto& g : s.rebuilt)
                {
                    shorten_shared(g.module);
                }
                for (auto& k : s.launch_kernels)
                {
                    shorten_shared(k.module);
                }
                for (auto& w : s.warnings)
                {
                    shorten(w);
                }
            }
        }
    }

    report printable_outline(const report& original, std::size_t findings_kept, bool with_tables)
    {
        report r = outline_copy(original, findings_kept, with_tables);
        clean_outline(r);
        shorten_long_names(r, original);
        return r;
    }

    comparison_outline printable_outline(const comparison& original)
    {
        comparison_outline c = original;  // every member but the receipts
        for (auto* side : {&c.before, &c.after})
        {
            clean(side->path);
            clean(side->label);
            clean(side->command);
            clean(side->warp_version);
            clean(side->devices);
        }
        clean(c.reasons);
        clean(c.judged_on.why);
        clean(c.notes);
        clean(c.workload.reason);
        for (auto& r : c.workload.renames)
        {
            clean(r.before);
            clean(r.after);
        }
        for (auto& m : c.workload.moved_counts)
        {
            clean(m.kernel);
        }
        for (auto* d : {&c.workload.first_divergence})
        {
            if (*d)
            {
                for (auto* l : {&(*d)->before, &(*d)->after})
                {
                    if (*l)
                    {
                        clean((*l)->kernel);
                        clean((*l)->device);
                        clean((*l)->dtypes);
                    }
                }
            }
        }
        for (auto& k : c.clocks)
        {
            clean(k.note);
        }
        for (auto& o : c.option_checks)
        {
            clean(o.message);
            if (o.set_at)
            {
                clean(o.set_at->file);
            }
        }
        return c;
    }
}
