#include "xwarp/render/history_text.hpp"
#include "xwarp/render/styles.hpp"

#include <cmath>
#include <sstream>

#include "xwarp/model/format.hpp"
#include "xwarp/render/html.hpp"
#include "xwarp/render/printable.hpp"

namespace xwarp
{
    namespace
    {
        std::string pad(const std::string& s, std::size_t width, bool right = false)
        {
            if (s.size() >= width)
            {
                return s + " ";
            }
            return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
        }

        std::string ms_or_dash(const std::optional<double>& v)
        {
            return v ? format_ms(*v) : std::string("-");
        }

        std::string signed_ms(double v)
        {
            return (v >= 0 ? "+" : "-") + format_ms(std::fabs(v));
        }

        std::string level(const trend_step& s)
        {
            if (s.measure == series_measure::identities)
            {
                return format_fixed(s.before, s.before == std::floor(s.before) ? 0 : 1) + " -> "
                       + format_fixed(s.after, s.after == std::floor(s.after) ? 0 : 1);
            }
            return format_ms(s.before) + " -> " + format_ms(s.after) + " (" + signed_ms(s.after - s.before) + ", band "
                   + format_ms(s.band) + ")";
        }
    }

    std::string step_line(const trend_step& s)
    {
        std::string line = std::string(s.confirmed ? "step" : "possible step (the last run: not yet seen to persist)")
                           + " at run @" + std::to_string(s.at_run) + ": " + word_of(s.measure) + " " + level(s);
        if (!s.changed.empty())
        {
            std::string what;
            for (const auto& c : s.changed)
            {
                what += (what.empty() ? "" : ", ") + one_line(c);
            }
            line += "; changed: " + what;
        }
        if (!s.built.empty())
        {
            std::string what;
            for (const auto& b : s.built)
            {
                what += (what.empty() ? "" : ", ") + one_line(b);
            }
            line += "; built: " + what;
        }
        if (s.changed.empty() && s.same_builds)
        {
            line += "; the same identities were built and nothing in the fingerprint changed: the time moved (the "
                    "machine's load?), not what was built";
        }
        else if (s.changed.empty() && s.built.empty())
        {
            line += "; nothing in the fingerprint changed (the code or the data did?)";
        }
        return line;
    }

    std::string render_history_list(const std::vector<history_run>& runs, const std::string& store)
    {
        std::ostringstream o;
        o << "History " << one_line(store) << " (" << runs.size() << " run(s), newest first)\n";
        if (runs.empty())
        {
            return o.str();
        }
        o << "  " << pad("id", 7) << pad("measured", 22) << pad("kind", 9) << pad("machine", 16) << pad("cold work", 11, true)
          << pad("ids", 5, true) << " " << pad("label", 14) << "command\n";
        for (const auto& r : runs)
        {
            o << "  " << pad("@" + std::to_string(r.id), 7) << pad(r.created_utc, 22) << pad(r.kind, 9)
              << pad(elide(one_line(r.fp.machine), 15), 16) << pad(ms_or_dash(r.cold_module_ms), 11, true)
              << pad(std::to_string(r.identities), 5, true) << " " << pad(elide(one_line(r.fp.label), 13), 14)
              << elide(one_line(r.fp.command), 80) << (r.whatif.empty() ? "" : "  [what-if: " + one_line(r.whatif) + "]")
              << "\n";
        }
        return o.str();
    }

    std::string render_history_list_html(const std::vector<history_run>& runs, const std::string& store)
    {
        std::ostringstream o;
        o << "<div data-xwarp=\"history-list\" style=\"" << style::small_text << "\"><div>History "
          << html_escape(store) << " (" << runs.size() << " run(s), newest first)</div>";
        if (runs.empty())
        {
            return o.str() + "</div>";
        }
        o << "<table style=\"" << style::table << "\"><thead><tr>";
        for (const char* h : {"id", "measured", "kind", "machine", "cold work", "identities", "label", "command"})
        {
            o << style::th_html(h);
        }
        o << "</tr></thead><tbody>";
        for (const auto& r : runs)
        {
            o << "<tr>";
            for (const std::string& c : {"@" + std::to_string(r.id), r.created_utc, r.kind, elide(r.fp.machine, 40),
                                         ms_or_dash(r.cold_module_ms), std::to_string(r.identities), elide(r.fp.label, 60),
                                         elide(r.fp.command, 160) + (r.whatif.empty() ? "" : " [what-if: " + r.whatif + "]")})
            {
                o << style::td_html(html_escape(c));
            }
            o << "</tr>";
        }
        o << "</tbody></table></div>";
        return o.str();
    }

    std::string render_history_run(const history_run& r, const std::vector<history_identity>& rows)
    {
        std::ostringstream o;
        o << "Run @" << r.id << " (" << r.kind << ", " << r.status << ", " << r.samples << " good sample(s))\n";
        auto line = [&](const std::string& name, const std::string& value)
        {
            if (!value.empty())
            {
                o << "  " << pad(name, 14) << one_line(value) << "\n";
            }
        };
        line("measured", r.created_utc);
        line("stored", r.stored_utc);
        line("command", r.fp.command);
        line("label", r.fp.label);
        line("machine", r.fp.machine);
        line("CPU", r.fp.cpu);
        line("GPU", r.fp.gpu);
        line("driver", r.fp.driver);
        line("CUDA toolkit", r.fp.toolkit);
        line("Warp", r.fp.warp);
        line("Python", r.fp.python);
        line("warp-probe", r.fp.probe);
        line("commit", r.fp.git_commit);
        line("cold work", ms_or_dash(r.cold_module_ms) + (r.cold_module_mad_ms ? " +- " + format_ms(*r.cold_module_mad_ms) : ""));
        line("cold wall", ms_or_dash(r.cold_wall_ms));
        line("what-if", r.whatif);
        o << "\nIdentities (" << rows.size() << ")\n";
        o << "  " << pad("ms", 10, true) << " " << pad("builds", 7) << pad("module", 32) << pad("hash", 9) << pad("device", 9)
          << pad("block_dim", 10) << pad("kernels", 8) << "source bytes\n";
        for (const auto& i : rows)
        {
            o << "  " << pad(format_fixed(i.ms, 1), 10, true) << " " << pad(std::to_string(i.builds), 7)
              << pad(elide(one_line(i.module), 60), 32) << pad(i.hash.substr(0, 7), 9) << pad(one_line(i.device), 9)
              << pad(i.block_dim ? std::to_string(*i.block_dim) : "-", 10) << pad(i.kernels >= 0 ? std::to_string(i.kernels) : "?", 8)
              << (i.source_bytes >= 0 ? std::to_string(i.source_bytes) : "?") << "\n";
        }
        return o.str();
    }

    std::string render_trend(const history_trend& t, std::size_t modules)
    {
        std::ostringstream o;
        o << "Trend of " << elide(one_line(t.command), 120) << " on " << one_line(t.machine) << ": " << t.runs.size()
          << " run(s), oldest first\n";
        if (t.runs.empty())
        {
            return o.str();
        }
        o << "  " << pad("run", 7) << pad("measured", 22) << pad("cold work", 11, true) << pad("ids", 5, true) << "  "
          << pad("Warp", 10) << "commit\n";
        for (std::size_t i = 0; i < t.runs.size(); ++i)
        {
            const auto& r = t.runs[i];
            o << "  " << pad("@" + std::to_string(r.id), 7) << pad(r.created_utc, 22)
              << pad(format_ms(t.total[i].cold_ms), 11, true) << pad(std::to_string(t.total[i].identities), 5, true) << "  "
              << pad(one_line(r.fp.warp), 10) << one_line(r.fp.git_commit.substr(0, 12)) << "\n";
        }
        if (t.total_steps.empty())
        {
            o << "  no step: every run within the noise of the runs before it\n";
        }
        for (const auto& s : t.total_steps)
        {
            o << "  " << step_line(s) << "\n";
        }
        o << "\nPer module (cold ms per run, oldest first; identities in brackets)\n";
        std::size_t shown = 0;
        for (const auto& m : t.modules)
        {
            if (modules && shown++ >= modules)
            {
                o << "  ... " << t.modules.size() - modules << " more module(s) (--module NAME shows one)\n";
                break;
            }
            o << "  " << elide(one_line(m.module), 60) << " on " << one_line(m.device) << ":";
            for (const auto& p : m.points)
            {
                o << " " << (p.identities ? format_ms(p.cold_ms) + "[" + std::to_string(p.identities) + "]" : std::string("-"));
            }
            o << "\n";
            for (const auto& s : m.steps)
            {
                o << "    " << step_line(s) << "\n";
            }
        }
        if (!t.tests.empty())
        {
            o << "\nPer test (build ms it paid per run, oldest first; builds in brackets; - not listed)\n";
            std::size_t tests_shown = 0;
            for (const auto& tt : t.tests)
            {
                if (modules && tests_shown++ >= modules)
                {
                    o << "  ... " << t.tests.size() - modules << " more test(s) (--test NAME shows one)\n";
                    break;
                }
                o << "  " << elide(one_line(tt.test), 80) << ":";
                for (std::size_t i = 0; i < tt.build_ms.size(); ++i)
                {
                    o << " " << (tt.build_ms[i] ? format_ms(*tt.build_ms[i]) + "[" + std::to_string(tt.builds[i]) + "]"
                                                : std::string("-"));
                }
                o << "\n";
                for (const auto& s : tt.steps)
                {
                    o << "    " << step_line(s) << "\n";
                }
            }
        }
        return o.str();
    }

    std::string render_history_diff(const history_diff& d)
    {
        std::ostringstream o;
        o << "@" << d.a.id << " -> @" << d.b.id << ": cold work " << ms_or_dash(d.a.cold_module_ms) << " -> "
          << ms_or_dash(d.b.cold_module_ms);
        if (d.a.cold_module_ms && d.b.cold_module_ms)
        {
            o << " (" << signed_ms(*d.b.cold_module_ms - *d.a.cold_module_ms) << ")";
        }
        o << ", identities " << d.a.identities << " -> " << d.b.identities << "\n";
        if (d.changed.empty())
        {
            o << "  fingerprint: the same\n";
        }
        for (const auto& c : d.changed)
        {
            o << "  changed: " << one_line(c) << "\n";
        }
        for (const auto& m : d.modules)
        {
            o << "  " << elide(one_line(m.module), 60) << " on " << one_line(m.device) << ": " << format_ms(m.a_ms) << " -> "
              << format_ms(m.b_ms) << " (" << signed_ms(m.delta_ms) << "), identities " << m.a_identities << " -> "
              << m.b_identities;
            if (!m.added.empty())
            {
                std::string h;
                for (const auto& x : m.added)
                {
                    h += (h.empty() ? "" : " ") + one_line(x);
                }
                o << "; new " << h;
            }
            for (const auto& [hash, tests] : m.paid_by)
            {
                std::string who;
                for (std::size_t i = 0; i < tests.size() && i < 3; ++i)
                {
                    who += (who.empty() ? "" : ", ") + elide(one_line(tests[i]), 90);
                }
                if (tests.size() > 3)
                {
                    who += " and " + std::to_string(tests.size() - 3) + " more";
                }
                o << "\n      " << one_line(hash) << " paid by " << who;
            }
            if (!m.removed.empty())
            {
                std::string h;
                for (const auto& x : m.removed)
                {
                    h += (h.empty() ? "" : " ") + one_line(x);
                }
                o << "; gone " << h;
            }
            o << "\n";
        }
        o << "  " << d.unchanged << " module(s) unchanged (same identities, within 1%)\n";
        return o.str();
    }

    std::string render_machine_table(const machine_table& t)
    {
        std::ostringstream o;
        o << "Module x machine for " << elide(one_line(t.command), 120) << " (the newest run on each machine)\n";
        if (t.machines.empty())
        {
            o << "  no run of this command in the store\n";
            return o.str();
        }
        o << "  " << pad("module", 34);
        for (std::size_t m = 0; m < t.machines.size(); ++m)
        {
            o << pad(elide(one_line(t.machines[m]), 15) + " @" + std::to_string(t.runs[m]), 22, true);
        }
        o << "\n";
        for (const auto& row : t.rows)
        {
            o << "  " << pad(elide(one_line(row.module) + " on " + one_line(row.device), 32), 34);
            for (std::size_t m = 0; m < t.machines.size(); ++m)
            {
                const std::string cell = row.ms[m] ? format_ms(*row.ms[m]) + " [" + std::to_string(row.identities[m]) + "]" : "-";
                o << pad(cell, 22, true);
            }
            o << "\n";
        }
        o << "  (cold build ms of the module's identities, [identities])\n";
        return o.str();
    }

    namespace
    {
        std::vector<std::string> session_row(const std::string& name, const report& r)
        {
            const auto& s = r.result;
            const auto ms = [](const stat& v) { return v.median ? format_ms(*v.median) : std::string("n/a"); };
            return {name,
                    r.created_utc,
                    std::to_string(s.samples_ok) + "/" + std::to_string(s.samples_total),
                    ms(s.cold_wall_ms),
                    ms(s.compile_elapsed_ms),
                    s.identity_count.median ? std::to_string(static_cast<int>(*s.identity_count.median)) : "n/a",
                    r.findings.empty() ? "-" : r.findings[0].mechanism + " " + r.findings[0].title};
        }

        const char* const session_headers[] = {"name", "created", "samples ok", "cold wall", "compile elapsed",
                                               "identities", "top finding"};
    }

    std::string render_session_runs(const std::vector<std::pair<std::string, report>>& runs)
    {
        std::ostringstream o;
        if (runs.empty())
        {
            o << "no runs yet: %%warp_probe a cell first\n";
        }
        for (const auto& [name, r] : runs)
        {
            for (const auto& c : session_row(name, r))
            {
                o << one_line(c) << "  ";
            }
            o << "\n";
        }
        return o.str();
    }

    std::string render_session_runs_html(const std::vector<std::pair<std::string, report>>& runs)
    {
        std::ostringstream o;
        o << "<table data-xwarp=\"history\" style=\"" << style::table << style::small_text << "\"><thead><tr>";
        for (const char* h : session_headers)
        {
            o << style::th_html(h);
        }
        o << "</tr></thead><tbody>";
        for (const auto& [name, r] : runs)
        {
            o << "<tr>";
            for (const auto& c : session_row(name, r))
            {
                o << style::td_html(html_escape(c));
            }
            o << "</tr>";
        }
        o << "</tbody></table>";
        return o.str();
    }
}
