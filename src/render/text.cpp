#include "xwarp/render/text.hpp"

#include "xwarp/render/printable.hpp"
#include "xwarp/render/sections.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace xwarp
{
    namespace
    {
        // What held a pass's processes, as the header says it.
        std::string containment_words(containment_kind how)
        {
            switch (how)
            {
                case containment_kind::pid_namespace: return "a PID namespace of their own";
                case containment_kind::cgroup: return "a cgroup of their own";
                default: return "a recorded process tree";
            }
        }

        std::string pad(const std::string& s, std::size_t width, bool right = false)
        {
            if (s.size() >= width)
            {
                return right ? " " + s : s + " ";  // a long value still ends its column
            }
            std::string fill(width - s.size(), ' ');
            return right ? fill + s : s + fill;
        }

        std::string shell_quote(const std::string& a)
        {
            if (!a.empty() && a.find_first_of(" \t\n'\"\\$`!*?;&|<>(){}[]#~") == std::string::npos)
            {
                return a;
            }
            std::string out = "'";
            for (char c : a)
            {
                out += c == '\'' ? std::string("'\\''") : std::string(1, c);
            }
            return out + "'";
        }

        const char* source_words(figure_source s)
        {
            switch (s)
            {
                case figure_source::hook: return "the shim's hooks in Warp";
                case figure_source::log: return "Warp's own log lines";
                case figure_source::warp_timer: return "Warp's module timers";
                case figure_source::wrapper: return "the shim's load wrapper (Warp's timers were off)";
                case figure_source::none: return "nowhere (not recorded)";
                default: return "several sources";
            }
        }
    }

    std::string measured_words(const replay_measurement& m)
    {
        std::string out;
        if (m.saving_ms && m.verdict != verdict::not_applied && m.verdict != verdict::not_run)
        {
            out = (*m.saving_ms >= 0 ? "-" : "+") + format_ms(std::fabs(*m.saving_ms))
                  + (m.clock ? " " + clock_name(*m.clock) : std::string());
            if (m.wall_saving_ms && m.wall_clock)
            {
                // CPU summed over threads is not time waited: the wall the job waited for beside it
                out += " (" + std::string(*m.wall_saving_ms >= 0 ? "-" : "+") + format_ms(std::fabs(*m.wall_saving_ms)) + " "
                       + clock_name(*m.wall_clock) + ")";
            }
            out += ", ";
        }
        out += word_of(m.verdict);
        std::string detail;
        if (m.samples > 0)
        {
            detail = "n=" + std::to_string(m.samples);
        }
        if (m.band_ms)
        {
            detail += (detail.empty() ? "" : ", ") + std::string("band ") + format_ms(*m.band_ms);
        }
        if (m.indicative())
        {
            // one or two samples a side can be beyond the band by chance: said beside the verdict
            detail += ", indicative: fewer than 3 samples a side";
        }
        return out + (detail.empty() ? "" : " (" + detail + ")");
    }

    std::string whatif_section_text(const report& r)
    {
        if (r.whatif.empty())
        {
            return {};
        }
        std::ostringstream o;
        o << "\nWhat-if replays (the unmodified command with one lever applied; lever and baseline samples interleaved)\n";
        for (const auto& w : r.whatif)
        {
            replay_measurement m;
            m.verdict = w.verdict;
            m.samples = w.samples;
            m.band_ms = w.band_ms;
            m.saving_ms = w.quoted_saving();
            m.clock = w.judged_on.by;
            o << "  " << pad(w.lever, 22) << pad(w.mechanism.empty() ? "-" : w.mechanism, 20) << measured_words(m) << "\n";
            if (w.estimate_ms)
            {
                o << "      estimate was " << format_ms(*w.estimate_ms) << "\n";
            }
            if (const auto counted = w.counted_builds_words(); !counted.empty() && w.verdict != verdict::not_run)
            {
                o << "      " << counted << "\n";
            }
            if (const auto conditions = w.conditions_words(); !conditions.empty() && w.verdict != verdict::not_run)
            {
                o << "      " << conditions << "\n";
            }
            if (!w.reason.empty())
            {
                o << "      " << w.reason << "\n";
            }
            if (w.until_settled)
            {
                const auto& s = *w.until_settled;
                o << "      until settled: added " << s.added_before << " baseline and " << s.added_after
                  << " replay sample(s) (at most " << s.max_samples << " a side); "
                  << (s.settled ? "settled: " : "not settled: ") << s.stopped_because << "\n";
            }
            for (const auto& [kernel, t] : w.steady_state.items())
            {
                const auto b = t.find("baseline_ms");
                const auto a = t.find("replay_ms");
                o << "      steady-state launch of " << one_line(kernel) << ": "
                  << (b != t.end() && b->is_number() ? format_ms(b->get<double>()) : std::string("n/a")) << " -> "
                  << (a != t.end() && a->is_number() ? format_ms(a->get<double>()) : std::string("n/a")) << "\n";
            }
        }
        return o.str();
    }

    namespace
    {
        // The headline of a finding as if no other shared its replay.
        std::string headline_alone(const finding& f, const std::string& estimate)
        {
            switch (f.headline())
            {
                case finding::headline_source::measured_gain:
                    return "measured " + measured_words(*f.measured) + (estimate.empty() ? "" : "; estimate ~" + estimate);
                case finding::headline_source::measured_no_gain:
                    return "measured " + measured_words(*f.measured) + "; no saving credited"
                           + (estimate.empty() ? "" : " (the estimate was ~" + estimate + ")");
                case finding::headline_source::estimate:
                    return "estimate ~" + estimate + " (" + f.estimate_why() + ")";
                case finding::headline_source::none:
                    break;
            }
            return {};
        }
    }

    std::string cpu_moved_words(const summary::clock_under_load& c)
    {
        return "in this run it moved " + format_fixed(c.moved_pct, 0) + "% across " + std::to_string(c.samples)
               + " samples while " + format_fixed(c.busy_least, 1) + " to " + format_fixed(c.busy_most, 1)
               + " CPUs were busy with other processes";
    }

    std::string cpu_clock_words(const summary& s)
    {
        return "the loading threads' CPU time: load moves it less than a wall, not never; "
               + (s.cpu_under_load ? cpu_moved_words(*s.cpu_under_load) : std::string("one sample: how far is not measured here"));
    }

    std::string finding_headline_words(const finding& f)
    {
        const std::string estimate = f.savings_ms ? format_ms(*f.savings_ms) + " " + clock_name(f.savings_clock) : std::string();
        if (f.measured && !f.measured->together.empty())
        {
            std::string numbers;
            for (const int n : f.measured->together)
            {
                numbers += (numbers.empty() ? "#" : ", #") + std::to_string(n);
            }
            if (!f.measured->shows_number)
            {
                return "measured together with finding #" + std::to_string(f.measured->together.front()) + " by one "
                       + f.lever.str() + " replay (" + numbers + "): its number is shown once, there";
            }
            const std::string one = "; one " + f.lever.str() + " replay measured findings " + numbers
                                    + " together: the number is theirs together, not each one's";
            return headline_alone(f, estimate) + one;
        }
        return headline_alone(f, estimate);
    }

    namespace
    {
        // " - saves ~1.2 s" (the estimate) or " - measured ..." (the replay) after a finding's title.
        std::string finding_headline_text(const finding& f)
        {
            const std::string words = finding_headline_words(f);
            return words.empty() ? words : " - " + words;
        }
    }

    std::string fixes_section_text(const report& r)
    {
        if (r.fixes.empty())
        {
            return {};
        }
        std::ostringstream o;
        o << "\nFixes (each finding's code form as a patch; verified on a copy of the project with compare)\n";
        for (const auto& f : r.fixes)
        {
            o << "  " << pad(f.finding, 22) << pad(f.lever.empty() ? "-" : f.lever, 22) << f.verdict;
            if (f.saving_ms)
            {
                o << ": " << (*f.saving_ms >= 0 ? "-" : "+") << format_ms(std::fabs(*f.saving_ms)) << " "
                  << (f.clock ? clock_name(*f.clock) : std::string()) << " (n="
                  << f.samples << (f.band_ms ? ", band " + format_ms(*f.band_ms) : std::string()) << ")";
            }
            o << (f.applied ? "  [applied]" : "") << "\n";
            if (f.cold_builds_before && f.cold_builds_after)
            {
                o << "      counted: the cold pass built " << *f.cold_builds_before << " -> " << *f.cold_builds_after
                  << " module(s)"
                  << (f.warm_builds_before && f.warm_builds_after
                          ? ", the warm pass " + std::to_string(*f.warm_builds_before) + " -> " + std::to_string(*f.warm_builds_after)
                          : std::string())
                  << (f.finding_gone ? (*f.finding_gone ? "; " + f.mechanism + " no longer fires"
                                                        : "; " + f.mechanism + " still fires on the patched run")
                                     : std::string())
                  << "\n";
            }
            if (!f.reason.empty())
            {
                o << "      " << f.reason << "\n";
            }
            if (!f.together.empty())
            {
                o << "      with the others: " << f.together << "\n";
            }
            for (const auto& n : f.notes)
            {
                o << "      note: " << n << "\n";
            }
            if (!f.patch_file.empty())
            {
                o << "      patch: " << f.patch_file << "  (git apply, or patch -p1, in the project's root)\n";
            }
        }
        return o.str();
    }

    std::string render_fix_text(const report& original)
    {
        const report r = printable_copy(original);
        std::ostringstream o;
        o << "warp-probe fix" << (r.label.empty() ? "" : " [" + r.label + "]") << "\n";
        o << "  command  " << command_line(r.command) << "\n";
        for (const auto& f : r.fixes)
        {
            if (!f.patch.empty())
            {
                o << "\n" << f.finding << " (" << f.lever << "), " << f.verdict << ":\n" << f.patch;
            }
        }
        o << fixes_section_text(r);
        for (const auto& w : r.warnings)
        {
            o << "  - " << w << "\n";
        }
        return printable_page(o.str());
    }

    std::string declined_section_text(const report& r)
    {
        if (r.declined.empty())
        {
            return {};
        }
        std::ostringstream o;
        o << "\nConsidered and declined\n";
        for (const auto& d : r.declined)
        {
            o << "  - [" << d.mechanism << "]" << (d.lever.empty() ? "" : " " + d.lever)
              << (d.module.empty() ? "" : " - " + elide(d.module)) << ": " << d.reason << "\n";
        }
        return o.str();
    }

    std::string render_whatif_text(const report& original)
    {
        const report r = printable_copy(original);
        std::ostringstream o;
        o << "warp-probe whatif" << (r.label.empty() ? "" : " [" + r.label + "]") << "\n";
        o << "  command  " << command_line(r.command) << "\n";
        o << whatif_section_text(r);

        o << declined_section_text(r);
        return printable_page(o.str());
    }

    std::string format_stat_ms(const stat& s)
    {
        if (!s.median)
        {
            return "n/a";
        }
        return format_ms(*s.median) + (s.mad && s.values.size() > 1 ? " ± " + format_ms(*s.mad) : "");
    }

    std::string command_line(const std::vector<std::string>& argv)
    {
        std::string out;
        for (const auto& a : argv)
        {
            out += (out.empty() ? "" : " ") + shell_quote(a);
        }
        return out;
    }


    namespace
    {
        // A factory's recorded argument (warmup_targets.schema.json's value) as Python would
        // write it, for the prompt: s=2.0, not the record's tagged JSON.
        std::string python_value(const nlohmann::json& tagged, int depth = 0)
        {
            if (!tagged.is_object() || depth > 8)
            {
                return "?";
            }
            const auto joined = [&](const nlohmann::json& items) {
                std::string out;
                for (const auto& item : items.is_array() ? items : nlohmann::json::array())
                {
                    out += (out.empty() ? "" : ", ") + python_value(item, depth + 1);
                }
                return out;
            };
            if (auto v = tagged.find("lit"); v != tagged.end())
            {
                return v->is_null() ? "None" : v->is_boolean() ? (v->get<bool>() ? "True" : "False") : v->dump();
            }
            if (auto v = tagged.find("float"); v != tagged.end() && v->is_string())
            {
                return v->get<std::string>();
            }
            if (auto v = tagged.find("tuple"); v != tagged.end())
            {
                return "(" + joined(*v) + (v->is_array() && v->size() == 1 ? ",)" : ")");
            }
            if (auto v = tagged.find("list"); v != tagged.end())
            {
                return "[" + joined(*v) + "]";
            }
            if (auto v = tagged.find("ref"); v != tagged.end() && v->is_string())
            {
                std::string name = v->get<std::string>();
                std::replace(name.begin(), name.end(), ':', '.');
                return name;
            }
            if (auto v = tagged.find("enum"); v != tagged.end() && v->is_string())
            {
                std::string name = v->get<std::string>();
                std::replace(name.begin(), name.end(), ':', '.');
                return name + "(" + tagged.value("value", nlohmann::json()).dump() + ")";
            }
            return "?";
        }

        std::string python_arguments(const nlohmann::json& args)
        {
            std::string out;
            for (const auto& a : args.is_array() ? args : nlohmann::json::array())
            {
                if (!a.is_array() || a.size() != 3 || !a[0].is_string() || !a[1].is_string())
                {
                    continue;
                }
                const std::string how = a[1].get<std::string>();
                out += (out.empty() ? "" : ", ") + (how == "kw" ? a[0].get<std::string>() + "=" : how == "star" ? "*" : "")
                       + python_value(a[2]);
            }
            return out;
        }
    }

    std::string what_a_replay_runs(const report& saved)
    {
        std::ostringstream o;
        if (saved.cell_code)
        {
            // a notebook probe runs its code in a script of its own
            const auto lines = [](const std::string& code)
            { return std::to_string(std::count(code.begin(), code.end(), '\n') + (code.empty() || code.back() == '\n' ? 0 : 1)); };
            if (saved.setup_code && !saved.setup_code->empty())
            {
                o << "  %%warp_setup code (" << lines(*saved.setup_code) << " lines):\n" << *saved.setup_code
                  << (saved.setup_code->back() == '\n' ? "" : "\n");
            }
            o << "  notebook cell (" << lines(*saved.cell_code) << " lines):\n" << *saved.cell_code
              << (saved.cell_code->empty() || saved.cell_code->back() == '\n' ? "" : "\n");
        }
        else
        {
            o << "  command  " << command_line(saved.command) << "\n";
        }
        o << "  in       " << (saved.cwd.empty() ? std::string("the current folder") : saved.cwd) << "\n";
        if (!saved.run_settings.python.empty())
        {
            o << "  Python   " << saved.run_settings.python << "\n";
        }
        // what a warm-up file written from it would call and set (its factories and wp.config
        // values are the report's records: data, shown before anything runs)
        std::vector<std::string> calls;
        std::vector<std::string> config;
        if (const sample* g = saved.first_good())
        {
            for (const auto& l : g->cold.module_loads)
            {
                if (!l.snapshot)
                {
                    continue;
                }
                for (const auto& k : l.snapshot->kernels)
                {
                    if (k.factory.is_object() && calls.size() < 50)
                    {
                        const std::string call = field_or(k.factory, "module", std::string("?")) + "."
                                                 + field_or(k.factory, "qualname", std::string("?")) + "("
                                                 + python_arguments(k.factory.value("args", nlohmann::json::array())) + ")";
                        if (std::find(calls.begin(), calls.end(), call) == calls.end())
                        {
                            calls.push_back(call);
                        }
                    }
                }
            }
            for (const auto& p : g->cold.processes)
            {
                for (const auto& c : p.config_sets)
                {
                    const std::string set = "wp.config." + c.key + " = "
                                            + (c.new_value.is_number_float() ? c.new_value.dump()
                                                                             : python_value(nlohmann::json{{"lit", c.new_value}}));
                    if (std::find(config.begin(), config.end(), set) == config.end() && config.size() < 50)
                    {
                        config.push_back(set);
                    }
                }
            }
        }
        for (const auto& c : calls)
        {
            o << "  calls    " << c.substr(0, 300) << "\n";
        }
        for (const auto& c : config)
        {
            o << "  sets     " << c.substr(0, 300) << "\n";
        }
        return printable_page(o.str());
    }

    std::string render_text(const report& r)
    {
        std::ostringstream o;
        render_text(o, r);
        return o.str();
    }

    namespace
    {
        // One report's text, a section at a time, in report_sections() order. Written a few
        // lines at a time, each part through printable_block: a large report's text was held
        // three times (the stream, its string, the escaped copy). Parts end at a line's end,
        // where no UTF-8 sequence is cut. The summary's large tables and the findings past those
        // printed in full are not copied: they are printed from the report row by row, each
        // name through one_line().
        class text_page
        {
        public:
            static constexpr std::size_t findings_in_full = 30;  // then one line each: the JSON has every finding whole
            static constexpr std::size_t findings_listed = 500;

            text_page(std::ostream& out, const report& original)
                : m_out(out), m_original(original), m_r(printable_outline(original, findings_in_full, false)),
                  m_s(m_r.result), m_tables(original.result)
            {
            }

            void write()
            {
                for (const auto section : report_sections())
                {
                    if (!m_s.valid && !shown_without_statistics(section))
                    {
                        break;
                    }
                    write(section);
                }
                flush();
            }

        private:
            void flush()
            {
                m_out << printable_page(m_o.str());
                m_o.str("");
            }

            void write(report_section section)
            {
                switch (section)
                {
                    case report_section::header: header(); break;
                    case report_section::errors: errors(); break;
                    case report_section::flags: flags(); break;
                    case report_section::warnings: warnings(); break;
                    case report_section::no_statistics: no_statistics(); break;
                    case report_section::summary: summary_rows(); break;
                    case report_section::conditions: conditions(); break;
                    case report_section::findings: findings(); break;
                    case report_section::whatif: m_o << whatif_section_text(m_r); break;
                    case report_section::fixes: m_o << fixes_section_text(m_original); break;
                    case report_section::declined: declined(); break;
                    case report_section::identities: identities(); break;
                    case report_section::rebuilt: rebuilt(); break;
                    case report_section::timeline: timeline(); break;
                    case report_section::tests: tests(); break;
                    case report_section::history: break;   // sparklines: the HTML's
                    case report_section::launches: break;  // per kernel: the HTML's and the JSON's
                    case report_section::sources: sources(); break;
                }
            }

            void header()
            {
                const report& r = m_r;
                m_o << "warp-probe measure" << (r.label.empty() ? "" : " [" + r.label + "]") << "\n";
                m_o << "  command  " << command_line(r.command) << "\n";
                if (r.cell_code)
                {
                    m_o << "  cell     notebook cell (" << std::count(r.cell_code->begin(), r.cell_code->end(), '\n') + 1
                        << " lines)" << (r.setup_code ? " after its %%warp_setup code" : "") << "\n";
                }
                m_o << "  cwd      " << r.cwd << "\n";
                if (r.ownership && !r.ownership->project.empty())
                {
                    // whose code the findings call the user's: the entry's tree first
                    m_o << "  project  " << r.ownership->project.front().path << " (" << r.ownership->project.front().why << ")";
                    if (r.ownership->project.size() > 1)
                    {
                        m_o << " and " << r.ownership->project.size() - 1 << " more folder(s)";
                    }
                    m_o << "\n";
                }
                if (!m_original.samples.empty() && m_original.samples.front().one_pass)  // the outline keeps no samples
                {
                    // a run the probe only observed (pytest --warp-builds): no cold or warm pass of its own
                    m_o << "  run      observed, not run by the probe: " << one_line(r.run_settings.sampling) << "\n";
                }
                else
                {
                    m_o << "  samples  " << m_s.samples_total << " (" << m_s.samples_ok << " ok), each cold then warm on "
                        << "private Warp and CUDA caches\n";
                }
                if (!r.run_settings.stopped_because.empty())
                {
                    m_o << "           --samples " << r.run_settings.sampling << ": " << r.run_settings.stopped_because << "\n";
                }
                m_o << "  machine  Warp " << (r.env.warp_version.empty() ? "?" : r.env.warp_version) << ", Python "
                    << (r.env.python_version.empty() ? "?" : r.env.python_version) << ", " << r.env.cpu_model << " ("
                    << r.env.cpu_count << " CPUs), " << r.env.cuda_status << "\n";
                m_o << "  status   " << r.status << "\n";
            }

            void errors()
            {
                for (const auto& e : m_r.errors)
                {
                    m_o << "\nERROR: " << e << "\n";
                }
            }

            void flags()
            {
                if (!m_s.flags.empty())
                {
                    m_o << "\nFlags\n";
                    for (const auto& f : m_s.flags)
                    {
                        m_o << "  " << pad(word_of(f.id), 20) << f.message << "\n";
                    }
                }
            }

            // The analysis's warnings, then the run's own notes, under one heading.
            void warnings()
            {
                constexpr std::size_t max_warnings = 50;
                const std::size_t total = m_s.warnings.size() + m_r.warnings.size();
                if (total == 0)
                {
                    return;
                }
                m_o << "\nWarnings\n";
                std::size_t shown = 0;
                for (const auto* list : {&m_s.warnings, &m_r.warnings})
                {
                    for (std::size_t i = 0; i < list->size() && shown < max_warnings; ++i, ++shown)
                    {
                        m_o << "  - " << (*list)[i] << "\n";
                    }
                }
                if (total > shown)
                {
                    m_o << "  ... and " << total - shown << " more (the JSON report has all)\n";
                }
            }

            void no_statistics()
            {
                if (m_s.valid)
                {
                    return;
                }
                m_o << "\nNo statistics: no sample succeeded.\n";
                for (const auto& smp : m_r.samples)
                {
                    const auto& bad = smp.cold.ok() || !smp.warm ? smp.cold : *smp.warm;
                    if (bad.stderr_tail.empty())
                    {
                        continue;
                    }
                    m_o << "\nLast lines of stderr (sample " << smp.index << "):\n" << bad.stderr_tail;
                    if (bad.stderr_tail.back() != '\n')
                    {
                        m_o << "\n";
                    }
                    if (!bad.error_line.empty() && bad.stderr_tail.find(bad.error_line) == std::string::npos)
                    {
                        m_o << "  (the error, earlier in the output: " << bad.error_line << ")\n";
                    }
                    break;
                }
            }

            void summary_rows()
            {
                const summary& s = m_s;
                m_o << "\n                      median ± MAD\n";
                auto row = [&](const std::string& name, const std::string& value, const std::string& note)
                { m_o << "  " << pad(name, 20) << pad(value, 22) << note << "\n"; };
                row("cold wall", format_stat_ms(s.cold_wall_ms), "");
                row("warm wall", format_stat_ms(s.warm_wall_ms), "");
                row("compile elapsed", format_stat_ms(s.compile_elapsed_ms), "cold wall - warm wall");
                row("module work, cold", format_stat_ms(s.cold_module_ms), std::string("from ") + source_words(s.module_ms_source));
                row("module work, warm", format_stat_ms(s.warm_module_ms), "");
                if (s.cold_module_cpu_ms.median)
                {
                    row("module CPU, cold", format_stat_ms(s.cold_module_cpu_ms), cpu_clock_words(s));
                    row("module CPU, warm", format_stat_ms(s.warm_module_cpu_ms), "");
                }
                row("native compile", format_stat_ms(s.native_ms), std::string("from ") + source_words(s.native_ms_source));
                row("overlap factor", s.overlap_factor.median ? format_fixed(*s.overlap_factor.median, 2) : "n/a",
                    s.overlap_factor.median ? "summed build time / time a build was running"
                                            : "not available: " + s.overlap_note);
                row("identities", s.identity_count.median ? format_fixed(*s.identity_count.median, 0) : "n/a", "");
                row("generated source", s.source_bytes.median ? format_bytes(*s.source_bytes.median) : "n/a", "");
                row("LTO artifacts", s.lto_artifacts.median ? format_fixed(*s.lto_artifacts.median, 0) : "n/a", "");
                row("cache after cold", s.cache_binaries.median ? format_fixed(*s.cache_binaries.median, 0) + " binaries" : "n/a",
                    s.cache_bytes.median ? format_bytes(*s.cache_bytes.median) + " written to the kernel cache by the cold pass (the warm pass starts from it)"
                                         : "");
                row("launches", s.launch_count.median ? format_fixed(*s.launch_count.median, 0) : "n/a", "");
            }

            // The machine's load and the caches the first good sample's passes started from.
            void conditions()
            {
                const sample* g = m_original.first_good();
                if (g == nullptr || (g->cold.caches.empty() && !m_s.busy_cpus.median))
                {
                    return;
                }
                m_o << "\nConditions (caches: the first good sample's; every pass's are in the JSON)\n";
                if (m_s.busy_cpus.median && g->cold.load)
                {
                    m_o << "  " << pad("machine load", 22) << format_fixed(*m_s.busy_cpus.median, 2)
                        << " CPUs busy with other processes, of " << g->cold.load->cpus
                        << " (median over the cold passes); build work is judged on the loading threads' CPU time, which "
                           "load moves less than a wall"
                        << (m_s.cpu_under_load ? " (" + cpu_moved_words(*m_s.cpu_under_load) + ")" : std::string(", not never"))
                        << "\n";
                }
                if (g->cold.caches.empty())
                {
                    return;
                }
                const auto held = [](std::int64_t files, std::int64_t bytes)
                { return files == 0 ? std::string("empty") : std::to_string(files) + " files, " + format_bytes(static_cast<double>(bytes)); };
                m_o << "  " << pad("cache", 34) << pad("cold pass: start -> end", 40) << "warm pass: start -> end\n";
                for (const auto& c : g->cold.caches)
                {
                    const cache_state* w = nullptr;
                    if (g->warm)
                    {
                        for (const auto& x : g->warm->caches)
                        {
                            w = x.kind == c.kind ? &x : w;
                        }
                    }
                    m_o << "  " << pad(cache_name(c.kind), 34)
                        << pad(held(c.files_before, c.bytes_before) + " -> " + held(c.files_after, c.bytes_after), 40)
                        << (w ? held(w->files_before, w->bytes_before) + " -> " + held(w->files_after, w->bytes_after) : std::string("-"))
                        << (c.kind == cache_kind::precompiled_headers ? "  (a folder per thread, gone at its exit)" : "") << "\n";
                }
            }

            void finding_in_full(std::size_t n, const finding& f)
            {
                m_o << "  " << n << ". [" << f.mechanism << "] " << f.title;
                if (!f.module.empty())
                {
                    m_o << " - " << elide(f.module, 160);
                }
                m_o << finding_headline_text(f) << (f.library ? "  [library code]" : "") << "\n";
                m_o << "     evidence: " << f.evidence << "\n";
                if (!f.tests.empty())
                {
                    m_o << "     tests:    ";
                    for (std::size_t i = 0; i < f.tests.size() && i < 5; ++i)
                    {
                        m_o << (i ? ", " : "") << f.tests[i];
                    }
                    m_o << (f.tests.size() > 5 ? " and " + std::to_string(f.tests.size() - 5) + " more" : "") << "\n";
                }
                if (f.locations.size() > 1)
                {
                    for (std::size_t i = 0; i < f.locations.size(); ++i)
                    {
                        const auto& l = f.locations[i];
                        m_o << (i == 0 ? "     where:    " : "               ") << l.file << ":" << l.line << "  " << l.what
                            << "\n";
                    }
                }
                else if (f.location)
                {
                    m_o << "     where:    " << f.location->file << ":" << f.location->line << "\n";
                }
                if (f.owner)
                {
                    m_o << "     whose:    " << owner_phrase(*f.owner);
                    if (f.owner->kind != owner_kind::project && !f.owner->evidence.empty())
                    {
                        m_o << " (" << f.owner->evidence << ")";
                    }
                    m_o << "\n";
                }
                if (f.measured && !f.measured->shows_number)
                {
                    m_o << "     measured: " << f.lever << ": together with finding #" << f.measured->together.front()
                        << " (one replay, one number)\n";
                }
                else if (f.measured)
                {
                    m_o << "     measured: " << f.lever << ": " << measured_words(*f.measured) << "\n";
                }
                m_o << "     do:       " << f.recommendation << "\n";
                m_o << "     guide:    references/mechanisms.md#" << f.guide << "\n";
            }

            void findings()
            {
                const auto& all = m_original.findings;
                if (!m_r.findings.empty())
                {
                    m_o << "\nFindings, by time at stake\n";
                    std::size_t n = 0;
                    for (const auto& f : m_r.findings)
                    {
                        finding_in_full(++n, f);
                    }
                    const std::size_t listed = std::min(all.size(), findings_listed);
                    if (listed > findings_in_full)
                    {
                        m_o << "  ... " << all.size() - findings_in_full << " more, one line each:\n";
                    }
                    for (std::size_t i = findings_in_full; i < listed; ++i)
                    {
                        const finding& f = all[i];
                        m_o << "  " << i + 1 << ". [" << f.mechanism << "] " << elide(one_line(f.module), 60)
                            << finding_headline_text(f) << "\n";
                    }
                }
                if (all.size() > findings_listed)
                {
                    m_o << "  ... and " << all.size() - findings_listed << " more (the JSON report has all)\n";
                }
            }

            void declined()
            {
                m_o << declined_section_text(m_r);
            }

            void identities()
            {
                flush();
                const auto& ids = m_tables.identities;
                m_o << "\nModule identities (" << ids.size() << "), by build time"
                    << (m_s.identities_consistent ? "" : "  [samples disagree]") << "\n";
                if (ids.empty())
                {
                    m_o << "  (no module loads recorded)\n";
                    return;
                }
                m_o << "  " << pad("ms", 10, true) << "  " << pad("builds", 6, true) << "  " << pad("status", 9)
                    << pad("module", 28) << pad("hash", 9) << pad("device", 8) << pad("block_dim", 10, true)
                    << pad("kernels", 8, true) << pad("samples", 9, true) << "\n";
                std::size_t rows = 0;
                for (const auto& id : ids)
                {
                    if (++rows % 64 == 0)
                    {
                        flush();
                    }
                    m_o << "  " << pad(format_fixed(id.ms, 1), 10, true) << "  " << pad(std::to_string(id.builds), 6, true)
                        << "  " << pad(to_string(id.status), 9) << pad(one_line(id.module), 28) << pad(id.hash.substr(0, 7), 9)
                        << pad(one_line(id.device), 8) << pad(id.block_dim ? std::to_string(*id.block_dim) : "?", 10, true)
                        << pad(id.kernels >= 0 ? std::to_string(id.kernels) : "?", 8, true)
                        << pad(std::to_string(id.samples_seen) + "/" + std::to_string(m_s.samples_ok), 9, true) << "\n";
                    if (!id.failure.empty())
                    {
                        m_o << "              failed: " << one_line(id.failure) << "\n";
                    }
                }
            }

            void rebuilt_group(const rebuild_group& g)
            {
                // shown whole only in the identities table
                std::string module = one_line(g.module);
                if (module.size() > 96)
                {
                    module = elide(module);
                }
                const std::string device = one_line(g.device);
                // a module that churned 1,000 times: its first moves, then how many more
                constexpr std::size_t max_moves = 25;
                std::string hashes;
                for (std::size_t i = 0; i < g.hashes.size() && i <= max_moves; ++i)
                {
                    hashes += (hashes.empty() ? "" : " -> ") + g.hashes[i].substr(0, 7);
                }
                if (g.hashes.size() > max_moves + 1)
                {
                    hashes += " -> ... (" + std::to_string(g.hashes.size() - max_moves - 1) + " more)";
                }
                if (g.kind != rebuild_kind::hash_churn)
                {
                    std::string bds;
                    for (int b : g.block_dims)
                    {
                        bds += (bds.empty() ? "" : ", ") + std::to_string(b);
                    }
                    m_o << "  block_dim spread  " << module << " on " << device << ": block_dims " << bds << ", " << g.builds
                        << " builds, " << format_ms(g.ms) << (g.kernel_sets_known ? "" : " (kernel sets not recorded)")
                        << "\n";
                    return;
                }
                m_o << "  hash churn        " << module << " on " << device << " (block_dim "
                    << (g.block_dims.empty() ? -1 : g.block_dims[0]) << "): " << g.hashes.size() << " hashes " << hashes
                    << ", " << g.builds << " builds, " << format_ms(g.ms) << "\n";
                const std::size_t moves = std::min(g.moves.size(), g.hashes.empty() ? 0 : g.hashes.size() - 1);
                for (std::size_t i = 0; i < moves && i < max_moves; ++i)
                {
                    if (!g.moves[i].empty())
                    {
                        m_o << "                    " << g.hashes[i].substr(0, 7) << " -> " << g.hashes[i + 1].substr(0, 7)
                            << ": " << one_line(g.moves[i]) << "\n";
                    }
                }
                if (moves > max_moves)
                {
                    m_o << "                    ... " << moves - max_moves << " more moves (the JSON report has all)\n";
                }
            }

            void rebuilt()
            {
                flush();
                m_o << "\nModules built more than once\n";
                if (m_tables.rebuilt.empty())
                {
                    m_o << "  none: every module loaded under one identity\n";
                }
                std::size_t groups = 0;
                for (const auto& g : m_tables.rebuilt)
                {
                    if (++groups % 64 == 0)
                    {
                        flush();
                    }
                    rebuilt_group(g);
                }
            }

            // A load's phases, in words, for its timeline line.
            static std::string phase_words(const std::vector<timeline_span>& spans, std::size_t load)
            {
                std::string parts;
                std::size_t nvrtc_phases = 0;
                for (std::size_t k = load + 1; k < spans.size() && spans[k].kind != span_kind::load; ++k)
                {
                    const auto& ph = spans[k];
                    if (ph.kind == span_kind::nvrtc)
                    {
                        ++nvrtc_phases;  // too fine for a line: the trace export has them
                        continue;
                    }
                    parts += (parts.empty() ? "" : ", ") + word_of(ph.kind) + " " + format_ms(ph.ms);
                }
                if (nvrtc_phases > 0)
                {
                    parts += (parts.empty() ? "" : ", ") + std::to_string(nvrtc_phases) + " NVRTC phases in --format trace";
                }
                return parts;
            }

            // A suite's tests by build time paid (the loads the shim attributed to each), and how much
            // of each worker process's wall its builds took. Nothing for a program that is no suite.
            void tests()
            {
                const auto& tests = m_tables.tests;
                if (tests.empty())
                {
                    return;
                }
                flush();
                constexpr std::size_t shown = 25;
                int with_builds = 0;
                for (const auto& t : tests)
                {
                    with_builds += t.builds > 0 ? 1 : 0;
                }
                m_o << "\nTests, by build time paid (" << tests.size() << " with a module load, " << with_builds
                    << " paid for a build; each load counts for the test that was running)\n";
                std::size_t rows = 0;
                for (const auto& t : tests)
                {
                    if (t.builds == 0 || ++rows > shown)
                    {
                        continue;
                    }
                    m_o << "  " << pad(format_ms(t.build_ms), 10, true) << "  " << pad(std::to_string(t.builds), 3, true)
                        << " build(s)  " << one_line(t.test.empty() ? std::string("collection / set-up (outside any test)") : t.test)
                        << (t.failed ? "  [FAILED]" : "") << "\n";
                    for (std::size_t i = 0; i < t.identities.size() && i < 4; ++i)
                    {
                        m_o << "              " << one_line(t.identities[i].words()) << "\n";
                    }
                    if (t.reused_by > 0)
                    {
                        std::string names;
                        constexpr std::size_t shown_reusers = 5;
                        for (std::size_t i = 0; i < t.reusers.size() && i < shown_reusers; ++i)
                        {
                            names += (names.empty() ? "" : ", ") + t.reusers[i];
                        }
                        m_o << "              paid by the first: reused by " << t.reused_by << " later test(s): "
                            << one_line(names) << (t.reusers.size() > shown_reusers ? ", ..." : "") << "\n";
                    }
                    if (t.identities.size() > 4)
                    {
                        m_o << "              ... and " << t.identities.size() - 4 << " more\n";
                    }
                }
                if (rows > shown)
                {
                    m_o << "  ... and " << rows - shown << " more test(s) that paid for builds (the JSON report has all)\n";
                }
                m_o << "  Processes (compile share of each one's wall)\n";
                for (const auto& w : m_tables.workers)
                {
                    m_o << "    pid " << w.pid << ": " << format_ms(w.build_ms) << " of builds (" << w.builds << ")";
                    if (w.wall_ms && *w.wall_ms > 0)
                    {
                        m_o << " in " << format_ms(*w.wall_ms) << " of wall ("
                            << static_cast<int>(100.0 * w.build_ms / *w.wall_ms + 0.5) << "%)";
                    }
                    m_o << ", " << w.tests << " test(s)\n";
                }
            }

            void timeline()
            {
                flush();
                const auto& spans = m_tables.timeline.spans;
                if (spans.empty())
                {
                    return;
                }
                m_o << "\nBuild timeline (sample " << m_s.timeline.sample << ", " << m_s.timeline.pass
                    << " pass; from the first process's start)\n";
                constexpr std::size_t shown = 40;
                std::size_t loads = 0;
                for (std::size_t i = 0; i < spans.size(); ++i)
                {
                    const auto& sp = spans[i];
                    if (sp.kind != span_kind::load || ++loads > shown)
                    {
                        continue;
                    }
                    const std::string parts = phase_words(spans, i);
                    m_o << "  +" << pad(format_ms(sp.start_ms), 10) << pad(format_ms(sp.ms), 10)
                        << pad(elide(one_line(sp.module), 60), 24) << " " << pad(one_line(sp.hash.str()), 8)
                        << pad(to_string(sp.status), 9)
                        << (parts.empty() ? "" : "[" + parts + "]")
                        << (sp.triggered_by.empty() ? "" : " waited by the launch of " + elide(one_line(sp.triggered_by.str()), 60))
                        << "\n";
                }
                if (loads > shown)
                {
                    m_o << "  ... and " << loads - shown
                        << " more load(s) (the JSON and warp-probe report --format trace have all)\n";
                }
            }

            void sources()
            {
                m_o << "\nSources: module loads from " << source_words(m_s.load_source) << "; module ms from "
                    << source_words(m_s.module_ms_source) << "; native compile ms from "
                    << source_words(m_s.native_ms_source) << ".";
                if (!m_original.samples.empty() && m_original.samples.front().cold.containment != containment_kind::unrecorded)
                {
                    m_o << " The command's processes ran in " << containment_words(m_original.samples.front().cold.containment)
                        << ".";
                }
                m_o << "\n";
            }

            std::ostream& m_out;
            std::ostringstream m_o;
            const report& m_original;
            const report m_r;
            const summary& m_s;
            const summary& m_tables;
        };
    }

    void render_text(std::ostream& out, const report& original)
    {
        text_page(out, original).write();
    }
}

namespace xwarp
{
    namespace
    {
        std::string opt_num(const std::optional<double>& v, bool bytes = false)
        {
            if (!v)
            {
                return "n/a";
            }
            if (bytes)
            {
                return format_bytes(*v);
            }
            std::ostringstream s;
            s << *v;
            return s.str();
        }

        std::string launch_words(const std::optional<launch_record>& l)
        {
            if (!l)
            {
                return "(no launch)";
            }
            std::string dtypes;
            for (const auto& d : l->dtypes)
            {
                dtypes += (dtypes.empty() ? "" : ", ") + d;
            }
            return l->kernel + " dim=" + l->dim.text() + " on " + l->device + " block_dim=" + std::to_string(l->block_dim)
                   + (l->adjoint ? " adjoint" : "") + " (" + dtypes + ")";
        }

        std::string pad_to(const std::string& s, std::size_t w)
        {
            return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' ');
        }
    }

    namespace
    {
        void compare_header(std::ostream& o, const comparison_outline& c)
        {
            auto side = [&](const char* name, const compare_side& s)
            {
                o << "  " << name << "  " << s.path << (s.label.empty() ? "" : " [" + s.label + "]") << ": "
                  << s.samples_ok << "/" << s.samples_total << " samples ok, Warp "
                  << (s.warp_version.empty() ? "?" : s.warp_version) << ", " << command_line(s.command) << "\n";
            };
            o << "warp-probe compare\n";
            side("before", c.before);
            side("after ", c.after);
            o << "\nVERDICT: " << c.verdict << (c.indicative ? ", indicative" : "") << " (exit " << c.exit_code << ")\n";
            for (const auto& r : c.reasons)
            {
                o << "  - " << r << "\n";
            }
            if (c.until_settled)
            {
                const auto& s = *c.until_settled;
                o << "  until settled: added " << s.added_before << " sample(s) before and " << s.added_after << " after (now "
                  << c.before.samples_total << " and " << c.after.samples_total << ", at most " << s.max_samples
                  << " a side); " << (s.settled ? "settled: " : "not settled: ") << s.stopped_because << "\n";
            }
        }

        void compare_workload(std::ostream& o, const comparison_outline& c)
        {
            o << "\nWorkload: " << c.workload.status << " - " << c.workload.reason << "\n";
            for (const auto& r : c.workload.renames)
            {
                o << "  renamed kernel: " << r.before << " -> " << r.after << "\n";
            }
            if (c.workload.first_divergence)
            {
                const auto& d = *c.workload.first_divergence;
                o << "  first divergence at launch #" << d.index + 1 << ":\n    before: " << launch_words(d.before)
                  << "\n    after:  " << launch_words(d.after) << "\n";
            }
            for (const auto& m : c.workload.moved_counts)
            {
                o << "  launches of " << m.kernel << ": " << m.before << " -> " << m.after << "\n";
            }
        }

        std::string fixed_text(double v, int precision, bool fixed)
        {
            std::ostringstream p;
            if (fixed)
            {
                p.setf(std::ios::fixed);
            }
            p.precision(precision);
            p << v;
            return p.str();
        }

        void compare_clocks(std::ostream& o, const comparison_outline& c)
        {
            o << "\nClocks (median; band = max(1% of before, 2 x before MAD))\n";
            o << "  " << pad_to("clock", 18) << pad_to("before", 12) << pad_to("after", 12) << pad_to("delta", 18)
              << pad_to("band", 10) << pad_to("p", 8) << "outcome\n";
            for (const auto& k : c.clocks)
            {
                std::string delta = k.delta_ms ? format_ms(*k.delta_ms) : "n/a";
                if (k.delta_pct)
                {
                    delta += " (" + fixed_text(*k.delta_pct, 1, true) + "%)";
                }
                const std::string p = k.p_value ? fixed_text(*k.p_value, 3, false) : "-";
                o << "  " << pad_to(clock_name(k.clock), 18)
                  << pad_to(k.before_median ? format_ms(*k.before_median) : "n/a", 12)
                  << pad_to(k.after_median ? format_ms(*k.after_median) : "n/a", 12) << pad_to(delta, 18)
                  << pad_to(k.band_ms ? format_ms(*k.band_ms) : "n/a", 10) << pad_to(p, 8) << word_of(k.outcome)
                  << " [n=" << k.n_before << "/" << k.n_after << "]\n";
            }
            for (const auto& k : c.clocks)
            {
                if (!k.note.empty())
                {
                    o << "  " << clock_name(k.clock) << ": " << k.note << "\n";
                }
            }
            for (const auto& k : c.clocks)
            {
                if (k.load_delta_ms && k.outcome == clock_outcome::machine_busy)
                {
                    o << "  " << clock_name(k.clock) << ": the other processes' load could explain "
                      << format_ms(std::fabs(*k.load_delta_ms)) << " of the change\n";
                }
            }
            o << "  judged on " << c.judged_on.sentence() << "\n";
        }

        // A row at a time into one reused text: 50,000 modules are as many rows, and the page's
        // other copies already hold them several times.
        void compare_receipts(std::ostream& o, const comparison& original)
        {
            o << "\nHash receipts\n";
            std::string row;
            const auto hash_prefixes = [&row](const std::vector<shared_text>& hashes)
            {
                const std::size_t start = row.size();
                for (const auto& h : hashes)
                {
                    if (row.size() > start)
                    {
                        row += ' ';
                    }
                    // a newline in a hash would break its row
                    append_one_line(row, std::string_view(h.str()).substr(0, 7));
                }
                if (row.size() == start)
                {
                    row += '-';
                }
            };
            for (const auto& r : original.receipts)
            {
                row = r.changed ? "  changed    " : "  unchanged  ";
                append_one_line(row, r.module.str());
                row += " on ";
                append_one_line(row, r.device.str());
                row += ": ";
                hash_prefixes(r.before);
                row += " -> ";
                hash_prefixes(r.after);
                row += '\n';
                o << row;
            }
        }

        void compare_structure(std::ostream& o, const comparison_outline& c)
        {
            o << "\nStructure\n";
            for (const auto& s : c.structure)
            {
                const bool bytes = s.in_bytes;
                o << "  " << pad_to(s.name, 26) << opt_num(s.before, bytes) << " -> " << opt_num(s.after, bytes) << "\n";
            }
            if (!c.option_checks.empty())
            {
                o << "\nOptions that did not arrive\n";
                for (const auto& oc : c.option_checks)
                {
                    o << "  ! " << oc.message;
                    if (oc.set_at)
                    {
                        o << " (set at " << oc.set_at->file << ":" << oc.set_at->line << ")";
                    }
                    o << "\n";
                }
            }
            bool notes_header = false;
            for (const auto& n : c.notes)
            {
                const bool is_option = std::any_of(c.option_checks.begin(), c.option_checks.end(),
                                                   [&](const auto& oc) { return oc.message == n; });
                if (is_option)
                {
                    continue;
                }
                if (!notes_header)
                {
                    o << "\nNotes\n";
                    notes_header = true;
                }
                o << "  - " << n << "\n";
            }
        }
    }

    std::string render_compare_text(const comparison& original)
    {
        const comparison_outline c = printable_outline(original);
        std::ostringstream o;
        compare_header(o, c);
        compare_workload(o, c);
        compare_clocks(o, c);
        compare_receipts(o, original);
        compare_structure(o, c);
        return printable_page(o.str());
    }
}
