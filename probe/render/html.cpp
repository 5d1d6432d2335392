#include "xwarp/render/html.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "xwarp/render/printable.hpp"
#include "xwarp/render/text.hpp"

namespace xwarp
{
    namespace
    {
        // Colours with transparency read on light and dark backgrounds alike; text keeps the
        // page's own colour (inherit).
        const char* k_root = "font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:13px;line-height:1.45;"
                             "color:inherit;max-width:1100px;";
        const char* k_h = "font-size:14px;font-weight:600;margin:14px 0 6px 0;";
        const char* k_table = "border-collapse:collapse;margin:4px 0 8px 0;font-variant-numeric:tabular-nums;";
        const char* k_th = "text-align:left;padding:3px 10px 3px 0;border-bottom:1px solid rgba(128,128,128,0.5);"
                           "font-weight:600;white-space:nowrap;";
        const char* k_td = "padding:3px 10px 3px 0;border-bottom:1px solid rgba(128,128,128,0.2);vertical-align:top;";
        const char* k_num = "padding:3px 10px 3px 0;border-bottom:1px solid rgba(128,128,128,0.2);text-align:right;"
                            "white-space:nowrap;vertical-align:top;";
        const char* k_mono = "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;";
        const char* k_muted = "opacity:0.75;";
        const char* k_box = "border:1px solid rgba(128,128,128,0.35);border-radius:6px;padding:8px 10px;margin:6px 0;";

        std::string badge(const std::string& text, const std::string& rgb)
        {
            return "<span style=\"display:inline-block;padding:1px 7px;border-radius:9px;font-size:11px;font-weight:600;"
                   "background:rgba("
                   + rgb + ",0.18);border:1px solid rgba(" + rgb + ",0.6);\">" + html_escape(text) + "</span>";
        }

        std::string status_rgb(const std::string& status)
        {
            if (status == "compiled")
            {
                return "230,126,34";
            }
            if (status == "cached")
            {
                return "39,174,96";
            }
            if (status == "error")
            {
                return "231,76,60";
            }
            return "128,128,128";
        }

        std::string verdict_rgb(const std::string& verdict)
        {
            if (verdict == "improved")
            {
                return "39,174,96";
            }
            if (verdict == "regressed" || verdict == "invalid")
            {
                return "231,76,60";
            }
            if (verdict == "not-comparable" || verdict == "unverified")
            {
                return "142,68,173";
            }
            return "128,128,128";
        }

        std::string td(const std::string& inner, const char* style = k_td)
        {
            return std::string("<td style=\"") + style + "\">" + inner + "</td>";
        }

        std::string th(const std::string& inner)
        {
            return std::string("<th style=\"") + k_th + "\">" + inner + "</th>";
        }

        // A name from the measured program: isolated (<bdi>), so right-to-left text in it never
        // reorders the report's own words around it.
        std::string mono(const std::string& text)
        {
            return std::string("<bdi style=\"") + k_mono + "\">" + html_escape(text) + "</bdi>";
        }

        std::string stat_cell(const stat& s)
        {
            return html_escape(format_stat_ms(s));
        }

        std::string opt_int(const std::optional<double>& v)
        {
            return v ? format_fixed(*v, 0) : "n/a";
        }

        // The bar chart of module build time: the renderer scales measured ms to pixels.
        std::string chart(const std::vector<identity>& ids)
        {
            if (ids.empty())
            {
                return {};
            }
            const std::size_t n = std::min<std::size_t>(ids.size(), 15);
            double top = 0.0;
            for (std::size_t i = 0; i < n; ++i)
            {
                top = std::max(top, ids[i].ms);
            }
            if (top <= 0.0)
            {
                return {};
            }
            const int row = 18;
            const int label_w = 260;
            const int bar_w = 420;
            const int height = static_cast<int>(n) * row + 4;
            std::ostringstream o;
            o << "<svg data-xwarp=\"chart\" role=\"img\" aria-label=\"module build time\" width=\"" << label_w + bar_w + 90
              << "\" height=\"" << height << "\" viewBox=\"0 0 " << label_w + bar_w + 90 << " " << height
              << "\" style=\"display:block;margin:4px 0 8px 0;\">";
            for (std::size_t i = 0; i < n; ++i)
            {
                const auto& id = ids[i];
                const int y = static_cast<int>(i) * row;
                const double w = std::max(1.0, bar_w * id.ms / top);
                std::string label = id.module + " " + id.hash.substr(0, 7) + " bd" + (id.block_dim ? std::to_string(*id.block_dim) : "?");
                if (label.size() > 40)
                {
                    label = label.substr(0, 39) + "~";
                }
                o << "<text x=\"" << label_w - 6 << "\" y=\"" << y + 13 << "\" text-anchor=\"end\" font-size=\"11\" "
                  << "fill=\"currentColor\" font-family=\"ui-monospace,monospace\">" << html_escape(label) << "</text>";
                o << "<rect x=\"" << label_w << "\" y=\"" << y + 3 << "\" width=\"" << format_fixed(w, 1) << "\" height=\"" << row - 6
                  << "\" rx=\"2\" fill=\"rgb(" << status_rgb(id.status) << ")\" fill-opacity=\"0.75\"/>";
                o << "<text x=\"" << label_w + w + 6 << "\" y=\"" << y + 13 << "\" font-size=\"11\" fill=\"currentColor\">"
                  << html_escape(format_ms(id.ms)) << "</text>";
            }
            o << "</svg>";
            return o.str();
        }

        std::string summary_rows(const summary& s)
        {
            std::ostringstream o;
            auto row = [&](const std::string& name, const std::string& value, const std::string& note)
            {
                o << "<tr>" << td(html_escape(name)) << td(value, k_num)
                  << td("<span style=\"" + std::string(k_muted) + "\">" + html_escape(note) + "</span>") << "</tr>";
            };
            row("cold wall", stat_cell(s.cold_wall_ms), "");
            row("warm wall", stat_cell(s.warm_wall_ms), "");
            row("compile elapsed", stat_cell(s.compile_elapsed_ms), "cold wall - warm wall");
            row("module work, cold", stat_cell(s.cold_module_ms), "sum of module loads (" + s.module_ms_source + ")");
            row("module work, warm", stat_cell(s.warm_module_ms), "");
            row("native compile", stat_cell(s.native_ms), "clang / NVRTC (" + s.native_ms_source + ")");
            row("overlap factor", s.overlap_factor.median ? format_fixed(*s.overlap_factor.median, 2) : "n/a",
                s.overlap_factor.median ? "summed build time / time a build was running" : "not available: " + s.overlap_note);
            row("identities", opt_int(s.identity_count.median), s.identities_consistent ? "" : "samples disagree");
            row("generated source", s.source_bytes.median ? html_escape(format_bytes(*s.source_bytes.median)) : "n/a", "");
            row("LTO artifacts", opt_int(s.lto_artifacts.median), "");
            row("launches", opt_int(s.launch_count.median), "");
            return o.str();
        }

        std::string identities_table(const summary& s)
        {
            std::ostringstream o;
            o << "<table data-xwarp=\"identities\" style=\"" << k_table << "\"><thead><tr>" << th("ms") << th("builds")
              << th("status") << th("module") << th("hash") << th("device") << th("block_dim") << th("kernels")
              << th("samples") << "</tr></thead><tbody>";
            auto id_row = [&](const identity& id, const std::string& indent)
            {
                o << "<tr>" << td(html_escape(format_fixed(id.ms, 1)), k_num) << td(std::to_string(id.builds), k_num)
                  << td(badge(id.status, status_rgb(id.status))) << td(indent + mono(id.module)) << td(mono(id.hash.substr(0, 7)))
                  << td(html_escape(id.device)) << td(id.block_dim ? std::to_string(*id.block_dim) : "?", k_num)
                  << td(id.kernels >= 0 ? std::to_string(id.kernels) : "?", k_num)
                  << td(std::to_string(id.samples_seen) + "/" + std::to_string(s.samples_ok), k_num) << "</tr>";
            };
            // Modules built more than once are collapsed into one group row each.
            std::vector<const rebuild_group*> shown;
            auto in_group = [&](const identity& id) -> const rebuild_group*
            {
                for (const auto& g : s.rebuilt)
                {
                    if (g.module == id.module && g.device == id.device
                        && std::find(g.hashes.begin(), g.hashes.end(), id.hash) != g.hashes.end())
                    {
                        return &g;
                    }
                }
                return nullptr;
            };
            for (const auto& id : s.identities)
            {
                const rebuild_group* g = in_group(id);
                if (!g)
                {
                    id_row(id, "");
                    continue;
                }
                if (std::find(shown.begin(), shown.end(), g) != shown.end())
                {
                    continue;
                }
                shown.push_back(g);
                std::string what = g->kind == "hash-churn" ? "hash churn" : "block_dim spread";
                o << "<tr data-xwarp=\"group\">" << td(html_escape(format_fixed(g->ms, 1)), k_num) << td(std::to_string(g->builds), k_num)
                  << td(badge(what, "230,126,34")) << "<td colspan=\"6\" style=\"" << k_td << "\"><details><summary>"
                  << mono(g->module) << " on " << html_escape(g->device) << ": " << g->hashes.size() << " identities"
                  << "</summary><table style=\"" << k_table << "\"><tbody>";
                for (const auto& other : s.identities)
                {
                    if (in_group(other) == g)
                    {
                        o << "<tr>" << td(html_escape(format_fixed(other.ms, 1)), k_num) << td(badge(other.status, status_rgb(other.status)))
                          << td(mono(other.hash.substr(0, 7))) << td("block_dim " + (other.block_dim ? std::to_string(*other.block_dim) : std::string("?")))
                          << td((other.kernels >= 0 ? std::to_string(other.kernels) : std::string("?")) + " kernels") << "</tr>";
                    }
                }
                o << "</tbody></table></details></td></tr>";
            }
            o << "</tbody></table>";
            return o.str();
        }

        std::string findings_html(const std::vector<finding>& findings, const guide_sections& guide)
        {
            std::ostringstream o;
            for (const auto& f : findings)
            {
                o << "<div data-xwarp=\"finding\" style=\"" << k_box << "\">";
                o << badge(f.mechanism, f.kind == "advisory" ? "52,152,219" : "230,126,34") << " <b>" << html_escape(f.title)
                  << "</b>";
                if (!f.module.empty())
                {
                    o << " &middot; " << mono(elide(f.module, 160));
                }
                if (f.savings_ms)
                {
                    o << " &middot; <b>saves ~" << html_escape(format_ms(*f.savings_ms)) << "</b>";
                }
                if (f.kind == "advisory")
                {
                    o << " <span style=\"" << k_muted << "\">(advisory: measure before acting)</span>";
                }
                o << "<div style=\"margin-top:4px;\">" << html_escape(f.evidence) << "</div>";
                if (f.locations.size() > 1)
                {
                    o << "<div style=\"margin-top:2px;\"><span style=\"" << k_muted << "\">where</span><ul data-xwarp=\"locations\" style=\"margin:2px 0;padding-left:18px;\">";
                    for (const auto& l : f.locations)
                    {
                        o << "<li>" << mono(l.file + ":" + std::to_string(l.line)) << " " << html_escape(l.what) << "</li>";
                    }
                    o << "</ul></div>";
                }
                else if (f.location)
                {
                    o << "<div style=\"margin-top:2px;\"><span style=\"" << k_muted << "\">where</span> "
                      << mono(f.location->file + ":" + std::to_string(f.location->line)) << "</div>";
                }
                if (f.measured.is_object())
                {
                    const std::string verdict = field_or(f.measured, "verdict", std::string());
                    o << "<div data-xwarp=\"measured\" style=\"margin-top:2px;\"><span style=\"" << k_muted
                      << "\">measured</span> " << mono(f.lever) << " "
                      << badge(verdict, verdict == "improved" ? "39,174,96" : verdict == "regressed" || verdict == "invalid" ? "231,76,60" : "128,128,128")
                      << " " << html_escape(measured_words(f.measured)) << "</div>";
                }
                o << "<div style=\"margin-top:2px;\"><span style=\"" << k_muted << "\">do</span> "
                  << html_escape(f.recommendation) << "</div>";
                auto g = guide.find(f.guide);
                o << "<div style=\"margin-top:2px;" << k_muted << "\">guide: references/mechanisms.md#" << html_escape(f.guide)
                  << "</div>";
                if (g != guide.end() && !g->second.empty())
                {
                    o << "<details style=\"margin-top:2px;\"><summary>the mechanism in full</summary><div style=\"white-space:pre-wrap;"
                      << k_muted << "\">" << html_escape(g->second) << "</div></details>";
                }
                o << "</div>";
            }
            return o.str();
        }

        std::string launches_table(const summary& s)
        {
            if (s.launch_kernels.empty())
            {
                return "<div style=\"" + std::string(k_muted) + "\">no launches recorded</div>";
            }
            std::ostringstream o;
            o << "<table data-xwarp=\"launches\" style=\"" << k_table << "\"><thead><tr>" << th("kernel") << th("module")
              << th("device") << th("launches") << th("block_dims") << th("adjoint") << "</tr></thead><tbody>";
            for (const auto& k : s.launch_kernels)
            {
                std::string bds;
                for (int b : k.block_dims)
                {
                    bds += (bds.empty() ? "" : ", ") + std::to_string(b);
                }
                o << "<tr>" << td(mono(k.kernel)) << td(mono(k.module)) << td(html_escape(k.device))
                  << td(std::to_string(k.count), k_num) << td(html_escape(bds)) << td(k.adjoint ? "yes" : "") << "</tr>";
            }
            o << "</tbody></table>";
            return o.str();
        }

        std::string header(const report& r)
        {
            std::ostringstream o;
            std::string status_rgb_ = r.status == "ok" ? "39,174,96" : (r.status == "partial" ? "230,126,34" : "231,76,60");
            o << "<div style=\"margin-bottom:6px;\"><b>warp-probe</b>";
            if (!r.label.empty())
            {
                o << " &middot; <b>" << html_escape(r.label) << "</b>";
            }
            o << " &middot; " << badge(r.status, status_rgb_) << "</div>";
            o << "<div style=\"" << k_muted << "\">";
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
    }

    std::string html_escape(const std::string& raw)
    {
        // Control and bidirectional characters become visible escapes first ("\u202e"): a
        // U+202E in a module name would otherwise reverse the report's own text after it.
        const std::string text = printable_block(raw);
        std::string out;
        out.reserve(text.size() + text.size() / 8);
        for (char c : text)
        {
            switch (c)
            {
                case '&':
                    out += "&amp;";
                    break;
                case '<':
                    out += "&lt;";
                    break;
                case '>':
                    out += "&gt;";
                    break;
                case '"':
                    out += "&quot;";
                    break;
                case '\'':
                    out += "&#39;";
                    break;
                default:
                    out += c;
            }
        }
        return out;
    }

    std::string render_html(const report& r, const guide_sections& guide)
    {
        const summary& s = r.result;
        std::ostringstream o;
        o << "<div class=\"xwarp-report\" data-xwarp=\"report\" style=\"" << k_root << "\">";
        o << header(r);
        for (const auto& e : r.errors)
        {
            o << "<div data-xwarp=\"error\" style=\"" << k_box << "border-color:rgba(231,76,60,0.7);\"><b>error</b> "
              << html_escape(e) << "</div>";
        }
        if (!s.flags.empty())
        {
            o << "<div data-xwarp=\"flags\" style=\"margin:6px 0;\">";
            for (const auto& f : s.flags)
            {
                o << "<div style=\"margin:2px 0;\">" << badge(f.id, "230,126,34") << " " << html_escape(f.message) << "</div>";
            }
            o << "</div>";
        }
        if (!s.warnings.empty())
        {
            o << "<ul data-xwarp=\"warnings\" style=\"margin:4px 0;padding-left:18px;\">";
            for (const auto& w : s.warnings)
            {
                o << "<li>" << html_escape(w) << "</li>";
            }
            o << "</ul>";
        }
        if (!s.valid)
        {
            o << "<div style=\"" << k_box << "\">No statistics: no sample succeeded.";
            for (const auto& smp : r.samples)
            {
                const auto& bad = smp.cold.ok() || !smp.warm ? smp.cold : *smp.warm;
                if (!bad.stderr_tail.empty())
                {
                    o << "<div style=\"" << k_muted << "margin-top:4px;\">stderr of sample " << smp.index
                      << ":</div><pre style=\"" << k_mono << "white-space:pre-wrap;margin:2px 0;\">" << html_escape(bad.stderr_tail)
                      << "</pre>";
                    break;
                }
            }
            o << "</div></div>";
            return o.str();
        }
        o << "<div style=\"" << k_h << "\">Summary <span style=\"" << k_muted << "font-weight:400;\">median &plusmn; MAD</span></div>";
        o << "<table data-xwarp=\"summary\" style=\"" << k_table << "\"><tbody>" << summary_rows(s) << "</tbody></table>";

        o << "<div style=\"" << k_h << "\">Findings</div>";
        if (r.findings.empty())
        {
            o << "<div style=\"" << k_muted << "\">no mechanism found: every module loaded under one identity</div>";
        }
        o << findings_html(r.findings, guide);

        if (!r.whatif.empty())
        {
            o << "<div style=\"" << k_h << "\">What-if replays <span style=\"" << k_muted
              << "font-weight:400;\">the unmodified command with one lever applied, lever and baseline samples interleaved</span></div>";
            o << "<table data-xwarp=\"whatif\" style=\"" << k_table << "\"><thead><tr>" << th("lever") << th("for") << th("verdict")
              << th("saving") << th("band") << th("n") << th("estimate") << th("why") << "</tr></thead><tbody>";
            for (const auto& w : r.whatif)
            {
                std::optional<double> saving = w.saving_cold_module_ms;
                std::string clock = "cold module work";
                if (w.judged_on.rfind("compile elapsed", 0) == 0)
                {
                    saving = w.saving_compile_elapsed_ms;
                    clock = "compile elapsed";
                }
                else if (w.judged_on.rfind("warm module work", 0) == 0)
                {
                    saving = w.saving_warm_module_ms;
                    clock = "warm module work";
                }
                const bool measured = w.verdict != "not-applied" && w.verdict != "not-run";
                std::string why = w.reason;
                for (const auto& [kernel, t] : w.steady_state.items())
                {
                    const auto b = t.find("baseline_ms");
                    const auto a = t.find("replay_ms");
                    why += (why.empty() ? "" : "; ") + std::string("steady-state launch of ") + kernel + ": "
                           + (b != t.end() && b->is_number() ? format_ms(b->get<double>()) : std::string("n/a")) + " -> "
                           + (a != t.end() && a->is_number() ? format_ms(a->get<double>()) : std::string("n/a"));
                }
                o << "<tr>" << td(mono(w.lever)) << td(html_escape(w.mechanism.empty() ? "-" : w.mechanism))
                  << td(badge(w.verdict, w.verdict == "improved" ? "39,174,96" : w.verdict == "regressed" || w.verdict == "invalid" ? "231,76,60" : "128,128,128"))
                  << td(measured && saving ? html_escape((*saving >= 0 ? "-" : "+") + format_ms(std::fabs(*saving)) + " " + clock) : "", k_num)
                  << td(measured && w.band_ms ? html_escape(format_ms(*w.band_ms)) : "", k_num)
                  << td(measured ? std::to_string(w.samples) : "", k_num)
                  << td(w.estimate_ms ? html_escape(format_ms(*w.estimate_ms)) : "", k_num) << td(html_escape(why)) << "</tr>";
            }
            o << "</tbody></table>";
        }

        if (!r.declined.empty())
        {
            o << "<div style=\"" << k_h << "\">Considered and declined</div><ul data-xwarp=\"declined\" style=\"margin:4px 0;padding-left:18px;\">";
            for (const auto& d : r.declined)
            {
                o << "<li>" << badge(d.mechanism, "128,128,128") << (d.lever.empty() ? "" : " " + mono(d.lever))
                  << (d.module.empty() ? "" : " &middot; " + mono(d.module)) << " " << html_escape(d.reason) << "</li>";
            }
            o << "</ul>";
        }

        o << "<div style=\"" << k_h << "\">Module identities <span style=\"" << k_muted
          << "font-weight:400;\">by build time; modules built more than once are grouped</span></div>";
        if (s.identities.empty())
        {
            o << "<div style=\"" << k_muted << "\">no module loads recorded</div>";
        }
        else
        {
            o << identities_table(s);
            o << chart(s.identities);
        }
        o << "<div style=\"" << k_h << "\">Launches</div>" << launches_table(s);
        o << "<div style=\"" << k_muted << "margin-top:6px;font-size:11px;\">sources: module loads from "
          << html_escape(s.load_source) << ", module ms from " << html_escape(s.module_ms_source) << ", native ms from "
          << html_escape(s.native_ms_source) << " &middot; " << html_escape(r.env.cpu_model) << " &middot; warp-probe "
          << html_escape(r.env.probe_version) << "</div>";
        o << "</div>";
        return o.str();
    }

    std::string render_compare_html(const comparison& c, const report* before, const report* after)
    {
        std::ostringstream o;
        o << "<div class=\"xwarp-compare\" data-xwarp=\"compare\" style=\"" << k_root << "\">";
        o << "<div data-xwarp=\"verdict\" style=\"" << k_box << "border-color:rgba(" << verdict_rgb(c.verdict)
          << ",0.8);background:rgba(" << verdict_rgb(c.verdict) << ",0.10);\"><b style=\"font-size:15px;\">"
          << html_escape(c.verdict) << "</b> <span style=\"" << k_muted << "\">exit " << c.exit_code << "</span>";
        o << "<ul style=\"margin:4px 0 0 0;padding-left:18px;\">";
        for (const auto& r : c.reasons)
        {
            o << "<li>" << html_escape(r) << "</li>";
        }
        o << "</ul></div>";

        // The two runs side by side.
        o << "<table data-xwarp=\"sides\" style=\"" << k_table << "\"><thead><tr>" << th("") << th("before: " + html_escape(c.before.label.empty() ? c.before.path : c.before.label))
          << th("after: " + html_escape(c.after.label.empty() ? c.after.path : c.after.label)) << "</tr></thead><tbody>";
        auto side_row = [&](const std::string& name, const std::string& b, const std::string& a)
        { o << "<tr>" << td(html_escape(name)) << td(b, k_num) << td(a, k_num) << "</tr>"; };
        side_row("samples ok", std::to_string(c.before.samples_ok) + "/" + std::to_string(c.before.samples_total),
                 std::to_string(c.after.samples_ok) + "/" + std::to_string(c.after.samples_total));
        if (before && after)
        {
            side_row("cold wall", stat_cell(before->result.cold_wall_ms), stat_cell(after->result.cold_wall_ms));
            side_row("warm wall", stat_cell(before->result.warm_wall_ms), stat_cell(after->result.warm_wall_ms));
        }
        for (const auto& k : c.clocks)
        {
            side_row(clock_label(k.clock),
                     k.before_median ? html_escape(format_ms(*k.before_median)) : "n/a",
                     k.after_median ? html_escape(format_ms(*k.after_median)) : "n/a");
        }
        for (const auto& s : c.structure)
        {
            bool bytes = s.name == "generated source bytes";
            auto fmt = [&](const std::optional<double>& v) { return !v ? std::string("n/a") : bytes ? format_bytes(*v) : format_fixed(*v, 0); };
            side_row(s.name, html_escape(fmt(s.before)), html_escape(fmt(s.after)));
        }
        o << "</tbody></table>";

        o << "<div style=\"" << k_h << "\">Clocks <span style=\"" << k_muted
          << "font-weight:400;\">band = max(1% of before, 2 &times; before MAD)</span></div>";
        o << "<table data-xwarp=\"clocks\" style=\"" << k_table << "\"><thead><tr>" << th("clock") << th("delta") << th("band")
          << th("p") << th("samples") << th("outcome") << "</tr></thead><tbody>";
        for (const auto& k : c.clocks)
        {
            std::string delta = k.delta_ms ? format_ms(*k.delta_ms) : "n/a";
            if (k.delta_pct)
            {
                delta += " (" + format_fixed(*k.delta_pct, 1) + "%)";
            }
            o << "<tr>" << td(clock_label(k.clock)) << td(html_escape(delta), k_num)
              << td(k.band_ms ? html_escape(format_ms(*k.band_ms)) : "n/a", k_num)
              << td(k.p_value ? format_fixed(*k.p_value, 4) : "-", k_num) << td(std::to_string(k.n_before) + " / " + std::to_string(k.n_after), k_num)
              << td(html_escape(k.outcome) + (k.samples_needed ? " (about " + std::to_string(*k.samples_needed) + " a side would settle it)" : ""))
              << "</tr>";
        }
        o << "</tbody></table>";
        for (const auto& k : c.clocks)
        {
            if (!k.note.empty())
            {
                o << "<div style=\"" << k_muted << "\">" << clock_label(k.clock)
                  << ": " << html_escape(k.note) << "</div>";
            }
        }
        o << "<div style=\"" << k_muted << "\">judged on " << html_escape(c.judged_on) << "</div>";

        o << "<div style=\"" << k_h << "\">Workload: " << html_escape(c.workload.status) << "</div><div>"
          << html_escape(c.workload.reason) << "</div>";
        for (const auto& r : c.workload.renames)
        {
            o << "<div>renamed kernel " << mono(r.before) << " &rarr; " << mono(r.after) << "</div>";
        }
        if (c.workload.first_divergence)
        {
            const auto& d = *c.workload.first_divergence;
            auto words = [](const std::optional<launch_record>& l)
            { return l ? l->kernel + " dim=" + l->dim.dump() + " " + l->device + " block_dim=" + std::to_string(l->block_dim) : std::string("(none)"); };
            o << "<div>first divergence at launch #" << d.index + 1 << ": before " << mono(words(d.before)) << ", after "
              << mono(words(d.after)) << "</div>";
        }
        for (const auto& m : c.workload.moved_counts)
        {
            o << "<div>launches of " << mono(m.kernel) << ": " << m.before << " &rarr; " << m.after << "</div>";
        }

        o << "<div style=\"" << k_h << "\">Hash receipts</div><table data-xwarp=\"receipts\" style=\"" << k_table
          << "\"><thead><tr>" << th("module") << th("device") << th("before") << th("after") << th("") << "</tr></thead><tbody>";
        for (const auto& r : c.receipts)
        {
            auto hashes = [](const std::vector<std::string>& v)
            {
                std::string s;
                for (const auto& h : v)
                {
                    s += (s.empty() ? "" : " ") + h.substr(0, 7);
                }
                return s.empty() ? std::string("-") : s;
            };
            o << "<tr>" << td(mono(r.module)) << td(html_escape(r.device)) << td(mono(hashes(r.before)))
              << td(mono(hashes(r.after))) << td(r.changed ? badge("changed", "230,126,34") : badge("unchanged", "128,128,128"))
              << "</tr>";
        }
        o << "</tbody></table>";
        for (const auto& oc : c.option_checks)
        {
            o << "<div data-xwarp=\"option-check\" style=\"" << k_box << "border-color:rgba(231,76,60,0.7);\"><b>option did not arrive</b> "
              << html_escape(oc.message) << (oc.set_at ? " (" + mono(oc.set_at->file + ":" + std::to_string(oc.set_at->line)) + ")" : "")
              << "</div>";
        }
        for (const auto& n : c.notes)
        {
            bool is_option = std::any_of(c.option_checks.begin(), c.option_checks.end(), [&](const option_check& oc) { return oc.message == n; });
            if (!is_option)
            {
                o << "<div style=\"" << k_muted << "\">note: " << html_escape(n) << "</div>";
            }
        }
        o << "</div>";
        return o.str();
    }

    std::string html_page(const std::string& title, const std::string& fragment)
    {
        return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html_escape(title)
               + "</title></head><body style=\"margin:16px;\">\n" + fragment + "\n</body></html>\n";
    }

    guide_sections parse_guide(const std::string& markdown)
    {
        guide_sections out;
        std::istringstream in(markdown);
        std::string line;
        std::string current;
        std::string body;
        auto flush = [&]
        {
            if (!current.empty())
            {
                // trim the trailing rule and blank lines
                while (!body.empty() && (body.back() == '\n' || body.back() == '-' || body.back() == ' '))
                {
                    body.pop_back();
                }
                out[current] = body;
            }
        };
        while (std::getline(in, line))
        {
            if (line.rfind("## ", 0) == 0)
            {
                flush();
                current = line.substr(3);
                body.clear();
                continue;
            }
            if (!current.empty())
            {
                body += line + "\n";
            }
        }
        flush();
        return out;
    }
}
