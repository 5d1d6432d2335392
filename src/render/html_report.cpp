// The report page: summary, findings, identities, launches, the drawings, the history's
// series, the what-if replays, fixes and warm-up, a section at a time in report_sections() order.
#include "xwarp/render/html.hpp"
#include "xwarp/render/history_text.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "html_parts.hpp"
#include "xwarp/model/tuple_hash.hpp"
#include "xwarp/render/printable.hpp"
#include "xwarp/render/sections.hpp"
#include "xwarp/render/styles.hpp"
#include "xwarp/render/text.hpp"

namespace xwarp
{
    using namespace html_parts;

    namespace
    {
        std::string summary_rows(const summary& s)
        {
            std::ostringstream o;
            auto row = [&](const std::string& name, const std::string& value, const std::string& note)
            {
                o << "<tr>" << td(html_escape(name)) << td(value, style::num)
                  << td("<span style=\"" + std::string(style::muted) + "\">" + html_escape(note) + "</span>") << "</tr>";
            };
            row("cold wall", stat_cell(s.cold_wall_ms), "");
            row("warm wall", stat_cell(s.warm_wall_ms), "");
            row("compile elapsed", stat_cell(s.compile_elapsed_ms), "cold wall - warm wall");
            row("module work, cold", stat_cell(s.cold_module_ms), "sum of module loads (" + word_of(s.module_ms_source) + ")");
            row("module work, warm", stat_cell(s.warm_module_ms), "");
            if (s.cold_module_cpu_ms.median)
            {
                row("module CPU, cold", stat_cell(s.cold_module_cpu_ms), cpu_clock_words(s));
                row("module CPU, warm", stat_cell(s.warm_module_cpu_ms), "");
            }
            row("native compile", stat_cell(s.native_ms), "clang / NVRTC (" + word_of(s.native_ms_source) + ")");
            row("overlap factor", s.overlap_factor.median ? format_fixed(*s.overlap_factor.median, 2) : "n/a",
                s.overlap_factor.median ? "summed build time / time a build was running" : "not available: " + s.overlap_note);
            row("identities", opt_int(s.identity_count.median), s.identities_consistent ? "" : "samples disagree");
            row("generated source", s.source_bytes.median ? html_escape(format_bytes(*s.source_bytes.median)) : "n/a", "");
            row("LTO artifacts", opt_int(s.lto_artifacts.median), "");
            row("cache after cold", s.cache_binaries.median ? opt_int(s.cache_binaries.median) + " binaries" : "n/a",
                s.cache_bytes.median ? format_bytes(*s.cache_bytes.median) + " written to the kernel cache by the cold pass (the warm pass starts from it)"
                                     : "");
            row("launches", opt_int(s.launch_count.median), "");
            return o.str();
        }


        void identities_table(std::ostream& o, const summary& s)
        {
            o << "<table data-xwarp=\"identities\" style=\"" << style::table << "\"><thead><tr>" << th("ms") << th("builds")
              << th("status") << th("module") << th("hash") << th("device") << th("block_dim") << th("kernels")
              << th("samples") << "</tr></thead><tbody>";
            auto id_row = [&](const identity& id, const std::string& indent)
            {
                o << "<tr>" << td(html_escape(format_fixed(id.ms, 1)), style::num) << td(std::to_string(id.builds), style::num)
                  << td(badge(to_string(id.status), status_rgb(id.status))
                        + (id.failure.empty() ? std::string() : "<div data-xwarp=\"failure\" style=\"" + std::string(style::muted) + "\">" + html_escape(id.failure) + "</div>"))
                  << td(indent + mono(id.module)) << td(mono(id.hash.substr(0, 7)))
                  << td(html_escape(id.device)) << td(id.block_dim ? std::to_string(*id.block_dim) : "?", style::num)
                  << td(id.kernels >= 0 ? std::to_string(id.kernels) : "?", style::num)
                  << td(std::to_string(id.samples_seen) + "/" + std::to_string(s.samples_ok), style::num) << "</tr>";
            };
            // Modules built more than once are collapsed into one group row each.
            // (module, device, hash) as views of the summary's strings: an ordered map of copies
            // grew faster than the report (long shared module-name prefixes compared at every step)
            using module_device_hash = std::tuple<std::string_view, std::string_view, std::string_view>;
            std::size_t hashes = 0;
            for (const auto& g : s.rebuilt)
            {
                hashes += g.hashes.size();
            }
            std::unordered_map<module_device_hash, std::size_t, tuple_hash> group_of;
            group_of.reserve(hashes);
            for (std::size_t gi = 0; gi < s.rebuilt.size(); ++gi)
            {
                for (const auto& h : s.rebuilt[gi].hashes)
                {
                    group_of.emplace(module_device_hash(s.rebuilt[gi].module, s.rebuilt[gi].device, h), gi);
                }
            }
            // The rows first, heaviest first: an identity, or the group its heaviest member heads.
            constexpr std::size_t no_group = static_cast<std::size_t>(-1);
            std::vector<std::pair<const identity*, std::size_t>> table_rows;  // (identity, its group or no_group)
            std::set<std::size_t> shown_groups;
            std::set<std::pair<std::string_view, std::string_view>> shown_modules;
            for (const auto& id : s.identities)
            {
                if (table_rows.size() >= max_identity_rows)
                {
                    break;
                }
                auto it = group_of.find(module_device_hash(id.module, id.device, id.hash));
                if (it == group_of.end())
                {
                    table_rows.emplace_back(&id, no_group);
                    shown_modules.insert({id.module, id.device});
                }
                else if (shown_groups.insert(it->second).second)
                {
                    table_rows.emplace_back(&id, it->second);
                    shown_modules.insert({s.rebuilt[it->second].module, s.rebuilt[it->second].device});
                }
            }
            // The members of the groups shown, in identity order. Only identities of a shown
            // group's (module, device) are looked up among every group's hashes: listing every
            // group's members was most of the page's time at 100,000 identities.
            std::map<std::size_t, std::vector<const identity*>> members;
            for (const auto& id : s.identities)
            {
                if (!shown_modules.count({id.module, id.device}))
                {
                    continue;
                }
                auto it = group_of.find(module_device_hash(id.module, id.device, id.hash));
                if (it != group_of.end() && shown_groups.count(it->second))
                {
                    members[it->second].push_back(&id);
                }
            }
            for (const auto& [row, group] : table_rows)
            {
                if (group == no_group)
                {
                    id_row(*row, "");
                    continue;
                }
                const rebuild_group* g = &s.rebuilt[group];
                std::string what = g->kind == rebuild_kind::hash_churn ? "hash churn" : "block_dim spread";
                o << "<tr data-xwarp=\"group\">" << td(html_escape(format_fixed(g->ms, 1)), style::num) << td(std::to_string(g->builds), style::num)
                  << td(badge(what, "230,126,34")) << "<td colspan=\"6\" style=\"" << style::td << "\"><details><summary>"
                  << mono(g->module) << " on " << html_escape(g->device) << ": " << g->hashes.size() << " identities"
                  << "</summary><table style=\"" << style::table << "\"><tbody>";
                const auto& group_members = members[group];
                for (std::size_t i = 0; i < group_members.size() && i < max_group_members; ++i)
                {
                    const identity* other = group_members[i];
                    o << "<tr>" << td(html_escape(format_fixed(other->ms, 1)), style::num) << td(badge(to_string(other->status), status_rgb(other->status)))
                      << td(mono(other->hash.substr(0, 7))) << td("block_dim " + (other->block_dim ? std::to_string(*other->block_dim) : std::string("?")))
                      << td((other->kernels >= 0 ? std::to_string(other->kernels) : std::string("?")) + " kernels") << "</tr>";
                }
                o << "</tbody></table>";
                o << more_rows(group_members.size(), max_group_members, "more, lighter");
                o << "</details></td></tr>";
            }
            o << "</tbody></table>";
            // The rest, module by module, collapsed: counts and time from the summary.
            std::vector<const module_total*> rest;
            for (const auto& m : s.modules)
            {
                if (!shown_modules.count({std::string_view(m.module), std::string_view(m.device)}))
                {
                    rest.push_back(&m);
                }
            }
            if (!rest.empty())
            {
                o << "<details data-xwarp=\"more-modules\"><summary>" << rest.size()
                  << " more module(s), lighter than those above (the JSON report has every identity)</summary><table style=\""
                  << style::table << "\"><thead><tr>" << th("ms") << th("identities") << th("builds") << th("module") << th("device")
                  << "</tr></thead><tbody>";
                for (std::size_t i = 0; i < rest.size() && i < max_module_rows; ++i)
                {
                    o << "<tr>" << td(html_escape(format_fixed(rest[i]->ms, 1)), style::num) << td(std::to_string(rest[i]->identities), style::num)
                      << td(std::to_string(rest[i]->builds), style::num) << td(mono(rest[i]->module)) << td(html_escape(rest[i]->device))
                      << "</tr>";
                }
                o << "</tbody></table>";
                o << more_rows(rest.size(), max_module_rows);
                o << "</details>";
            }
        }

        constexpr std::size_t max_full_findings = 30;
        constexpr std::size_t max_finding_rows = 500;
        constexpr std::size_t max_locations = 20;
        // the report's own lists (a hostile or merged report can hold any number)
        constexpr std::size_t max_message_rows = 50;  // errors, flags, warnings
        constexpr std::size_t max_replay_rows = 100;  // what-if replays, fixes, declined
        constexpr std::size_t max_process_rows = 100;  // a suite's processes

        void findings_html(std::ostream& o, const std::vector<finding>& findings, const guide_sections& guide)
        {
            std::size_t n = 0;
            for (const auto& f : findings)
            {
                if (++n > max_full_findings)
                {
                    break;
                }
                o << "<div data-xwarp=\"finding\" style=\"" << style::box << "\">";
                o << badge(f.mechanism, f.kind == finding_kind::advisory ? "52,152,219" : "230,126,34") << " <b>" << html_escape(f.title)
                  << "</b>";
                if (!f.module.empty())
                {
                    o << " &middot; " << mono(elide(f.module, 160));
                }
                if (const std::string headline = finding_headline_words(f); !headline.empty())
                {
                    o << " &middot; <b data-xwarp=\"headline\">" << html_escape(headline) << "</b>";
                }
                if (f.library)
                {
                    o << " " << badge("library code", style::odd_rgb);
                }
                if (f.owner)
                {
                    o << " <span data-xwarp=\"owner\" data-owner=\"" << word_of(f.owner->kind) << "\" title=\""
                      << html_escape(f.owner->evidence) << "\" style=\"" << style::muted << "\">" << html_escape(owner_phrase(*f.owner))
                      << "</span>";
                }
                if (f.kind == finding_kind::advisory)
                {
                    o << " <span style=\"" << style::muted << "\">(advisory: measure before acting)</span>";
                }
                o << "<div style=\"margin-top:4px;\">" << html_escape(f.evidence) << "</div>";
                if (!f.tests.empty())
                {
                    std::string tests;
                    for (std::size_t i = 0; i < f.tests.size() && i < 5; ++i)
                    {
                        tests += (i ? ", " : "") + f.tests[i];
                    }
                    o << "<div data-xwarp=\"tests\" style=\"margin-top:2px;\"><span style=\"" << style::muted
                      << "\">tests</span> " << mono(tests)
                      << (f.tests.size() > 5 ? " and " + std::to_string(f.tests.size() - 5) + " more" : "") << "</div>";
                }
                if (f.locations.size() > 1)
                {
                    o << "<div style=\"margin-top:2px;\"><span style=\"" << style::muted << "\">where</span><ul data-xwarp=\"locations\" style=\"margin:2px 0;padding-left:18px;\">";
                    for (std::size_t i = 0; i < f.locations.size() && i < max_locations; ++i)
                    {
                        const auto& l = f.locations[i];
                        o << "<li>" << mono(l.file + ":" + std::to_string(l.line)) << " " << html_escape(l.what) << "</li>";
                    }
                    o << "</ul>" << more_rows(f.locations.size(), max_locations, "more places") << "</div>";
                }
                else if (f.location)
                {
                    o << "<div style=\"margin-top:2px;\"><span style=\"" << style::muted << "\">where</span> "
                      << mono(f.location->file + ":" + std::to_string(f.location->line)) << "</div>";
                }
                if (f.measured)
                {
                    o << "<div data-xwarp=\"measured\" style=\"margin-top:2px;\"><span style=\"" << style::muted
                      << "\">measured</span> " << mono(f.lever) << " "
                      << badge(word_of(f.measured->verdict), verdict_rgb(f.measured->verdict)) << " "
                      << html_escape(f.measured->shows_number ? measured_words(*f.measured)
                                                              : "together with finding #" + std::to_string(f.measured->together.front())
                                                                    + " (one replay, one number)")
                      << "</div>";
                }
                o << "<div style=\"margin-top:2px;\"><span style=\"" << style::muted << "\">do</span> "
                  << html_escape(f.recommendation) << "</div>";
                auto g = guide.find(f.guide);
                o << "<div style=\"margin-top:2px;" << style::muted << "\">guide: references/mechanisms.md#" << html_escape(f.guide)
                  << "</div>";
                if (g != guide.end() && !g->second.empty())
                {
                    o << "<details style=\"margin-top:2px;\"><summary>the mechanism in full</summary><div style=\"white-space:pre-wrap;"
                      << style::muted << "\">" << html_escape(g->second) << "</div></details>";
                }
                o << "</div>";
            }
            if (findings.size() > max_full_findings)
            {
                o << "<details data-xwarp=\"more-findings\"><summary>" << findings.size() - max_full_findings
                  << " more finding(s), smaller than those above</summary><ul style=\"margin:4px 0;padding-left:18px;\">";
                for (std::size_t i = max_full_findings; i < findings.size() && i < max_full_findings + max_finding_rows; ++i)
                {
                    const auto& f = findings[i];
                    const std::string headline = finding_headline_words(f);
                    o << "<li>" << badge(f.mechanism, style::grey_rgb) << " " << mono(elide(f.module, 80))
                      << (headline.empty() ? std::string() : " &middot; " + html_escape(headline)) << "</li>";
                }
                o << "</ul>";
                o << more_rows(findings.size() - max_full_findings, max_finding_rows);
                o << "</details>";
            }
        }

        void launches_table(std::ostream& o, const summary& s)
        {
            if (s.launch_kernels.empty())
            {
                o << "<div style=\"" << style::muted << "\">no launches recorded</div>";
                return;
            }
            o << "<table data-xwarp=\"launches\" style=\"" << style::table << "\"><thead><tr>" << th("kernel") << th("module")
              << th("device") << th("launches") << th("block_dims") << th("adjoint") << "</tr></thead><tbody>";
            std::size_t rows = 0;
            for (const auto& k : s.launch_kernels)
            {
                if (++rows > max_launch_rows)
                {
                    break;
                }
                std::string bds;
                for (int b : k.block_dims)
                {
                    bds += (bds.empty() ? "" : ", ") + std::to_string(b);
                }
                o << "<tr>" << td(mono(k.kernel)) << td(mono(k.module)) << td(html_escape(k.device))
                  << td(std::to_string(k.count), style::num) << td(html_escape(bds)) << td(k.adjoint ? "yes" : "") << "</tr>";
            }
            o << "</tbody></table>";
            o << more_rows(s.launch_kernels.size(), max_launch_rows, "more kernels");
        }

        std::string header(const report& r)
        {
            std::ostringstream o;
            std::string status_rgb_ = r.status == run_status::ok ? "39,174,96" : (r.status == run_status::partial ? "230,126,34" : "231,76,60");
            o << "<div style=\"margin-bottom:6px;\"><b>warp-probe</b>";
            if (!r.label.empty())
            {
                o << " &middot; <b>" << html_escape(r.label) << "</b>";
            }
            o << " &middot; " << badge(word_of(r.status), status_rgb_) << "</div>";
            o << "<div style=\"" << style::muted << "\">";
            if (r.cell_code)
            {
                o << "notebook cell" << (r.setup_code ? " after its %%warp_setup code" : "");
            }
            else
            {
                o << mono(command_line(r.command));
            }
            o << " &middot; " << r.result.samples_ok << "/" << r.result.samples_total
              << " samples ok (each cold, then warm on the cache it filled) &middot; Warp "
              << html_escape(r.env.warp_version.empty() ? "?" : r.env.warp_version) << " &middot; "
              << html_escape(r.env.cuda_status) << "</div>";
            return o.str();
        }

        std::string history_section(const run_series& v)
        {
            const history_trend& t = v.trend;
            std::ostringstream o;
            o << "<div style=\"" << style::heading << "\">History <span style=\"" << style::muted << "font-weight:400;\">"
              << t.runs.size() << " runs of this command on " << html_escape(t.machine)
              << (v.this_run ? ", this run is @" + std::to_string(v.this_run) : std::string()) << " &middot; "
              << html_escape(v.store) << "</span></div>";
            o << "<div data-xwarp=\"history\">";
            o << "<div>all modules " << sparkline(t.total, v.this_run) << "</div>";
            for (const auto& st : t.total_steps)
            {
                const bool this_one = st.at_run == v.this_run;
                o << "<div data-xwarp=\"step\" style=\"margin:2px 0;\">"
                  << badge(this_one ? "this run is a step" : "step", this_one ? "230,126,34" : "128,128,128") << " "
                  << html_escape(step_line(st)) << "</div>";
            }
            o << "<table style=\"" << style::table << "\"><thead><tr>" << th("module") << th("device") << th("cold ms over runs")
              << th("latest") << th("steps") << "</tr></thead><tbody>";
            constexpr std::size_t shown = 20;
            for (std::size_t i = 0; i < t.modules.size() && i < shown; ++i)
            {
                const auto& m = t.modules[i];
                std::string steps;
                for (const auto& st : m.steps)
                {
                    steps += (steps.empty() ? "" : "<br>") + html_escape(step_line(st));
                }
                o << "<tr>" << td(mono(elide(m.module, 80))) << td(mono(m.device)) << td(sparkline(m.points, v.this_run))
                  << td(html_escape(format_ms(m.points.back().cold_ms)) + " [" + std::to_string(m.points.back().identities) + "]", style::num)
                  << td(steps) << "</tr>";
            }
            o << "</tbody></table>";
            if (t.modules.size() > shown)
            {
                o << "<div style=\"" << style::muted << "\">" << t.modules.size() - shown
                  << " more modules: warp-probe history trend shows them</div>";
            }
            o << "</div>";
            return o.str();
        }

        std::string whatif_row(const whatif_result& w)
        {
            const auto saving = w.quoted_saving();
            const std::string clock = clock_name(w.judged_on.by);
            const bool measured = w.verdict != verdict::not_applied && w.verdict != verdict::not_run;
            std::string why = w.reason;
            if (const auto counted = w.counted_builds_words(); !counted.empty() && measured)
            {
                why += (why.empty() ? "" : "; ") + counted;
            }
            if (const auto conditions = w.conditions_words(); !conditions.empty() && measured)
            {
                why += (why.empty() ? "" : "; ") + conditions;
            }
            for (const auto& [kernel, t] : w.steady_state.items())
            {
                const auto b = t.find("baseline_ms");
                const auto a = t.find("replay_ms");
                why += (why.empty() ? "" : "; ") + std::string("steady-state launch of ") + kernel + ": "
                       + (b != t.end() && b->is_number() ? format_ms(b->get<double>()) : std::string("n/a")) + " -> "
                       + (a != t.end() && a->is_number() ? format_ms(a->get<double>()) : std::string("n/a"));
            }
            const std::string rgb = w.verdict == verdict::improved                                   ? style::good_rgb
                                    : w.verdict == verdict::regressed || w.verdict == verdict::invalid ? style::bad_rgb
                                                                                                       : style::grey_rgb;
            std::ostringstream o;
            o << "<tr>" << td(mono(w.lever)) << td(html_escape(w.mechanism.empty() ? "-" : w.mechanism))
              << td(badge(word_of(w.verdict), rgb))
              << td(measured && saving ? html_escape((*saving >= 0 ? "-" : "+") + format_ms(std::fabs(*saving)) + " " + clock) : "",
                    style::num)
              << td(measured && w.band_ms ? html_escape(format_ms(*w.band_ms)) : "", style::num)
              << td(measured ? std::to_string(w.samples) : "", style::num)
              << td(w.estimate_ms ? html_escape(format_ms(*w.estimate_ms)) : "", style::num);
            std::string settled;
            if (w.until_settled)
            {
                const auto& st = *w.until_settled;
                settled = "<div data-xwarp=\"until-settled\" data-settled=\"" + std::string(st.settled ? "true" : "false")
                          + "\" style=\"" + style::muted + "\">until settled: added " + std::to_string(st.added_before)
                          + " baseline and " + std::to_string(st.added_after) + " replay sample(s), at most "
                          + std::to_string(st.max_samples) + " a side; " + (st.settled ? "settled: " : "not settled: ")
                          + html_escape(st.stopped_because) + "</div>";
            }
            o << td(html_escape(why) + settled) << "</tr>";
            return o.str();
        }

        // One report's page fragment, a section at a time, in report_sections() order.
        class html_report
        {
        public:
            html_report(std::ostream& o, const report& r, const guide_sections& guide, const run_series* history)
                : m_o(o), m_r(r), m_s(r.result), m_guide(guide), m_history(history)
            {
            }

            void write()
            {
                m_o << "<div class=\"xwarp-report\" data-xwarp=\"report\" style=\"" << style::root << "\">";
                for (const auto section : report_sections())
                {
                    if (!m_s.valid && !shown_without_statistics(section))
                    {
                        break;
                    }
                    write(section);
                }
                m_o << "</div>";
            }

        private:
            void write(report_section section)
            {
                switch (section)
                {
                    case report_section::header: m_o << header(m_r); break;
                    case report_section::errors: errors(); break;
                    case report_section::flags: flags(); break;
                    case report_section::warnings: warnings(); break;
                    case report_section::no_statistics: no_statistics(); break;
                    case report_section::summary: summary_table(); break;
                    case report_section::conditions: conditions(); break;
                    case report_section::findings: findings(); break;
                    case report_section::whatif: whatif(); break;
                    case report_section::fixes: fixes(); break;
                    case report_section::declined: declined(); break;
                    case report_section::identities: identities(); break;
                    case report_section::rebuilt: break;  // grouped in the identities table and drawn in the identity map
                    case report_section::timeline: timeline(); break;
                    case report_section::tests: tests(); break;
                    case report_section::history: history(); break;
                    case report_section::launches: launches(); break;
                    case report_section::sources: sources(); break;
                }
            }

            void errors()
            {
                for (std::size_t i = 0; i < m_r.errors.size() && i < max_message_rows; ++i)
                {
                    m_o << "<div data-xwarp=\"error\" style=\"" << style::box << "border-color:rgba(" << style::bad_rgb
                        << ",0.7);\"><b>error</b> " << html_escape(m_r.errors[i]) << "</div>";
                }
                m_o << more_rows(m_r.errors.size(), max_message_rows, "more errors");
            }

            void flags()
            {
                if (m_s.flags.empty())
                {
                    return;
                }
                m_o << "<div data-xwarp=\"flags\" style=\"margin:6px 0;\">";
                for (std::size_t i = 0; i < m_s.flags.size() && i < max_message_rows; ++i)
                {
                    m_o << "<div style=\"margin:2px 0;\">" << badge(word_of(m_s.flags[i].id), style::warn_rgb) << " "
                        << html_escape(m_s.flags[i].message) << "</div>";
                }
                m_o << more_rows(m_s.flags.size(), max_message_rows, "more flags") << "</div>";
            }

            // The analysis's warnings, then the run's own notes (shim records refused, ...).
            void warnings()
            {
                std::vector<const std::string*> all;
                for (const auto* list : {&m_s.warnings, &m_r.warnings})
                {
                    for (const auto& w : *list)
                    {
                        all.push_back(&w);
                    }
                }
                if (all.empty())
                {
                    return;
                }
                m_o << "<ul data-xwarp=\"warnings\" style=\"margin:4px 0;padding-left:18px;\">";
                for (std::size_t i = 0; i < all.size() && i < max_message_rows; ++i)
                {
                    m_o << "<li>" << html_escape(*all[i]) << "</li>";
                }
                m_o << "</ul>" << more_rows(all.size(), max_message_rows, "more warnings");
            }

            void no_statistics()
            {
                if (m_s.valid)
                {
                    return;
                }
                m_o << "<div style=\"" << style::box << "\">No statistics: no sample succeeded.";
                for (const auto& smp : m_r.samples)
                {
                    const auto& bad = smp.cold.ok() || !smp.warm ? smp.cold : *smp.warm;
                    if (!bad.stderr_tail.empty())
                    {
                        m_o << "<div style=\"" << style::muted << "margin-top:4px;\">stderr of sample " << smp.index
                            << ":</div><pre style=\"" << style::mono << "white-space:pre-wrap;margin:2px 0;\">"
                            << html_escape(bad.stderr_tail) << "</pre>";
                        break;
                    }
                }
                m_o << "</div>";
            }

            void summary_table()
            {
                m_o << heading("Summary", "median &plusmn; MAD");
                m_o << "<table data-xwarp=\"summary\" style=\"" << style::table << "\"><tbody>" << summary_rows(m_s)
                    << "</tbody></table>";
            }

            // The machine's load and the caches the first good sample's passes started from.
            void conditions()
            {
                const sample* g = m_r.first_good();
                if (g == nullptr || (g->cold.caches.empty() && !m_s.busy_cpus.median))
                {
                    return;
                }
                m_o << heading("Conditions", "the first good sample's caches; every pass's are in the JSON");
                if (m_s.busy_cpus.median && g->cold.load)
                {
                    m_o << "<div data-xwarp=\"machine-load\">machine load: " << html_escape(format_fixed(*m_s.busy_cpus.median, 2))
                        << " CPUs busy with other processes, of " << g->cold.load->cpus
                        << " (median over the cold passes); build work is judged on the loading threads' CPU time, which "
                           "load moves less than a wall"
                        << html_escape(m_s.cpu_under_load ? " (" + cpu_moved_words(*m_s.cpu_under_load) + ")" : std::string(", not never"))
                        << "</div>";
                }
                if (g->cold.caches.empty())
                {
                    return;
                }
                const auto held = [](std::int64_t files, std::int64_t bytes)
                { return files == 0 ? std::string("empty") : std::to_string(files) + " files, " + format_bytes(static_cast<double>(bytes)); };
                m_o << "<table data-xwarp=\"caches\" style=\"" << style::table << "\"><thead><tr>" << th("cache")
                    << th("cold pass: start &rarr; end") << th("warm pass: start &rarr; end") << "</tr></thead><tbody>";
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
                    m_o << "<tr data-cache=\"" << word_of(c.kind) << "\">" << td(html_escape(cache_name(c.kind)))
                        << td(html_escape(held(c.files_before, c.bytes_before) + " -> " + held(c.files_after, c.bytes_after)))
                        << td(html_escape(w ? held(w->files_before, w->bytes_before) + " -> " + held(w->files_after, w->bytes_after)
                                            : std::string("-")))
                        << "</tr>";
                }
                m_o << "</tbody></table>";
            }

            void findings()
            {
                m_o << heading("Findings");
                if (m_r.findings.empty())
                {
                    m_o << "<div style=\"" << style::muted << "\">no mechanism found: every module loaded under one identity</div>";
                }
                findings_html(m_o, m_r.findings, m_guide);
            }

            void whatif()
            {
                if (m_r.whatif.empty())
                {
                    return;
                }
                m_o << heading("What-if replays",
                               "the unmodified command with one lever applied, lever and baseline samples interleaved");
                m_o << "<table data-xwarp=\"whatif\" style=\"" << style::table << "\"><thead><tr>" << th("lever") << th("for")
                    << th("verdict") << th("saving") << th("band") << th("n") << th("estimate") << th("why")
                    << "</tr></thead><tbody>";
                for (std::size_t i = 0; i < m_r.whatif.size() && i < max_replay_rows; ++i)
                {
                    m_o << whatif_row(m_r.whatif[i]);
                }
                m_o << "</tbody></table>" << more_rows(m_r.whatif.size(), max_replay_rows, "more replays");
            }

            void fixes()
            {
                if (m_r.fixes.empty())
                {
                    return;
                }
                m_o << heading("Fixes", "each finding's code form as a patch, proved on a copy of the project with compare");
                m_o << "<table data-xwarp=\"fixes\" style=\"" << style::table << "\"><thead><tr>" << th("finding")
                    << th("lever") << th("verdict") << th("saving") << th("band") << th("n") << th("patch")
                    << "</tr></thead><tbody>";
                for (std::size_t i = 0; i < m_r.fixes.size() && i < max_replay_rows; ++i)
                {
                    const auto& f = m_r.fixes[i];
                    const std::string rgb = f.verdict == fix_verdict::verified ? style::good_rgb
                                            : f.verdict == fix_verdict::regressed || f.verdict == fix_verdict::invalid
                                                ? style::bad_rgb
                                                : style::grey_rgb;
                    std::string detail = html_escape(f.reason);
                    for (const auto& n : f.notes)
                    {
                        detail += "<div style=\"" + std::string(style::muted) + "\">" + html_escape(n) + "</div>";
                    }
                    if (!f.together.empty())
                    {
                        detail += "<div>with the others: " + html_escape(f.together) + "</div>";
                    }
                    if (!f.patch.empty())
                    {
                        detail += "<details data-xwarp=\"patch\"><summary>" + html_escape(f.patch_file.empty() ? "the patch" : f.patch_file)
                                  + "</summary><pre style=\"" + style::pre + "\">" + html_escape(f.patch) + "</pre></details>";
                    }
                    m_o << "<tr>" << td(html_escape(f.finding)) << td(mono(f.lever)) << td(badge(word_of(f.verdict), rgb))
                        << td(f.saving_ms ? html_escape((*f.saving_ms >= 0 ? "-" : "+") + format_ms(std::fabs(*f.saving_ms)) + " "
                                                  + (f.clock ? clock_name(*f.clock) : std::string())) : "", style::num)
                        << td(f.band_ms ? html_escape(format_ms(*f.band_ms)) : "", style::num)
                        << td(f.samples ? std::to_string(f.samples) : "", style::num) << td(detail) << "</tr>";
                }
                m_o << "</tbody></table>" << more_rows(m_r.fixes.size(), max_replay_rows, "more fixes");
            }

            void declined()
            {
                if (m_r.declined.empty())
                {
                    return;
                }
                m_o << heading("Considered and declined")
                    << "<ul data-xwarp=\"declined\" style=\"margin:4px 0;padding-left:18px;\">";
                for (std::size_t i = 0; i < m_r.declined.size() && i < max_replay_rows; ++i)
                {
                    const auto& d = m_r.declined[i];
                    m_o << "<li>" << badge(d.mechanism, style::grey_rgb) << (d.lever.empty() ? "" : " " + mono(d.lever))
                        << (d.module.empty() ? "" : " &middot; " + mono(d.module)) << " " << html_escape(d.reason) << "</li>";
                }
                m_o << "</ul>" << more_rows(m_r.declined.size(), max_replay_rows);
            }

            void identities()
            {
                m_o << heading("Module identities", "by build time; modules built more than once are grouped");
                if (m_s.identities.empty())
                {
                    m_o << "<div style=\"" << style::muted << "\">no module loads recorded</div>";
                    return;
                }
                identities_table(m_o, m_s);
                chart(m_o, m_s.identities);
                m_o << heading("Identity map",
                               "each module's identities in load order; an arrow says why the next one was built "
                               "(an identity is a module's kernels and the functions they call, its options, its "
                               "block_dim and its generic instances)");
                identity_map_svg(m_o, m_s);
            }

            void timeline()
            {
                if (!m_s.timeline.spans.empty())
                {
                    m_o << heading("Build timeline");
                    timeline_svg(m_o, m_s.timeline);
                }
            }

            void history()
            {
                if (m_history && !m_history->trend.runs.empty())
                {
                    m_o << history_section(*m_history);
                }
            }

            // A suite's tests by build time paid, and its processes' compile share.
            void tests()
            {
                const auto& tests = m_s.tests;
                if (tests.empty())
                {
                    return;
                }
                m_o << heading("Tests, by build time paid");
                m_o << "<table data-xwarp=\"tests\" style=\"" << style::table << "\"><tr>" << th("build time") << th("builds")
                    << th("test") << th("identities it built") << th("paid by the first: reused by") << "</tr>";
                std::size_t rows = 0;
                for (const auto& t : tests)
                {
                    if (t.builds == 0 || ++rows > max_identity_rows)
                    {
                        continue;
                    }
                    std::string ids;
                    for (std::size_t i = 0; i < t.identities.size() && i < 8; ++i)
                    {
                        ids += (ids.empty() ? "" : "<br>") + mono(capped(t.identities[i].words()));
                    }
                    std::string reusers;
                    constexpr std::size_t max_reusers = 8;
                    for (std::size_t i = 0; i < t.reusers.size() && i < max_reusers; ++i)
                    {
                        reusers += (reusers.empty() ? "" : "<br>") + mono(capped(t.reusers[i]));
                    }
                    if (t.reusers.size() > max_reusers)
                    {
                        reusers += "<br>and " + std::to_string(t.reusers.size() - max_reusers) + " more";
                    }
                    m_o << "<tr>" << td(html_escape(format_ms(t.build_ms)), style::num) << td(std::to_string(t.builds), style::num)
                        << td((t.test.empty() ? std::string("collection / set-up") : mono(capped(t.test)))
                              + (t.failed ? " " + badge("failed", "231,76,60") : std::string()))
                        << td(ids)
                        << td(t.reused_by > 0 ? std::to_string(t.reused_by) + " later test(s):<br>" + reusers : std::string())
                        << "</tr>";
                }
                m_o << "</table>" << more_rows(rows, max_identity_rows, "more tests");
                m_o << "<table data-xwarp=\"workers\" style=\"" << style::table << "\"><tr>" << th("process") << th("builds")
                    << th("build time") << th("wall") << th("compile share") << th("tests") << "</tr>";
                std::size_t processes = 0;
                for (const auto& w : m_s.workers)
                {
                    if (++processes > max_process_rows)
                    {
                        break;
                    }
                    const bool wall = w.wall_ms && *w.wall_ms > 0;
                    m_o << "<tr>" << td("pid " + std::to_string(w.pid)) << td(std::to_string(w.builds), style::num)
                        << td(html_escape(format_ms(w.build_ms)), style::num)
                        << td(wall ? html_escape(format_ms(*w.wall_ms)) : "", style::num)
                        << td(wall ? std::to_string(static_cast<int>(100.0 * w.build_ms / *w.wall_ms + 0.5)) + "%" : "", style::num)
                        << td(std::to_string(w.tests), style::num) << "</tr>";
                }
                m_o << "</table>" << more_rows(m_s.workers.size(), max_process_rows, "more processes");
            }

            void launches()
            {
                m_o << heading("Launches");
                launches_table(m_o, m_s);
            }

            void sources()
            {
                m_o << "<div style=\"" << style::muted << "margin-top:6px;font-size:11px;\">sources: module loads from "
                    << html_escape(word_of(m_s.load_source)) << ", module ms from " << html_escape(word_of(m_s.module_ms_source))
                    << ", native ms from " << html_escape(word_of(m_s.native_ms_source)) << " &middot; "
                    << (m_r.samples.empty() || m_r.samples.front().cold.containment == containment_kind::unrecorded
                            ? std::string()
                            : "processes held by " + html_escape(word_of(m_r.samples.front().cold.containment)) + " &middot; ")
                    << html_escape(m_r.env.cpu_model) << " &middot; warp-probe " << html_escape(m_r.env.probe_version)
                    << "</div>";
            }

            std::ostream& m_o;
            const report& m_r;
            const summary& m_s;
            const guide_sections& m_guide;
            const run_series* m_history;
        };
    }

    std::string render_html(const report& r, const guide_sections& guide, const run_series* history)
    {
        std::ostringstream o;
        render_html(o, r, guide, history);
        return o.str();
    }

    void render_html(std::ostream& o, const report& r, const guide_sections& guide, const run_series* history)
    {
        html_report(o, r, guide, history).write();
    }
}
