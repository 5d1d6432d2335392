#include "xwarp/render/html.hpp"
#include "xwarp/render/history.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "xwarp/model/tuple_hash.hpp"
#include "xwarp/render/printable.hpp"
#include "xwarp/render/sections.hpp"
#include "xwarp/render/styles.hpp"
#include "xwarp/render/text.hpp"

namespace xwarp
{
    namespace
    {
        std::string badge(const std::string& text, const std::string& rgb)
        {
            return style::badge_html(html_escape(text), rgb);
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

        std::string verdict_rgb(verdict v)
        {
            if (v == verdict::improved)
            {
                return "39,174,96";
            }
            if (v == verdict::regressed || v == verdict::invalid)
            {
                return "231,76,60";
            }
            if (v == verdict::not_comparable || v == verdict::unverified)
            {
                return "142,68,173";
            }
            return "128,128,128";
        }

        std::string td(const std::string& inner, const char* css = style::td)
        {
            return style::td_html(inner, css);
        }

        std::string th(const std::string& inner)
        {
            return style::th_html(inner);
        }

        // A name as the page shows it: at most 120 characters (a cut on a UTF-8 boundary, marked);
        // the JSON keeps it whole.
        std::string capped(const std::string& text)
        {
            constexpr std::size_t cap = 120;
            if (text.size() <= cap)
            {
                return text;
            }
            std::size_t cut = cap;
            while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
            {
                --cut;
            }
            return text.substr(0, cut) + "\u2026";
        }

        // A name from the measured program: isolated (<bdi>), so right-to-left text in it never
        // reorders the report's own words around it; capped, so a page of a thousand modules
        // with long generated names stays a page (the JSON keeps every name whole).
        std::string mono(const std::string& text)
        {
            return std::string("<bdi style=\"") + style::mono + "\">" + html_escape(capped(text)) + "</bdi>";
        }

        // Every list in the page stops at a fixed number of rows and says how many it left out:
        // a page's size and render time are bounded by these caps, not by the report's shape.
        std::string more_rows(std::size_t total, std::size_t shown, const char* what = "more")
        {
            if (total <= shown)
            {
                return {};
            }
            return std::string("<div data-xwarp=\"more-rows\" style=\"") + style::muted + "\">" + std::to_string(total - shown)
                   + " " + what + ": the JSON report has all</div>";
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
        void chart(std::ostream& o, const std::vector<identity>& ids)
        {
            if (ids.empty())
            {
                return;
            }
            const std::size_t n = std::min<std::size_t>(ids.size(), 15);
            double top = 0.0;
            for (std::size_t i = 0; i < n; ++i)
            {
                top = std::max(top, ids[i].ms);
            }
            if (top <= 0.0)
            {
                return;
            }
            const int row = 18;
            const int label_w = 260;
            const int bar_w = 420;
            const int height = static_cast<int>(n) * row + 4;
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
        }

        std::string phase_rgb(const std::string& kind)
        {
            if (kind == "codegen")
            {
                return "142,68,173";
            }
            if (kind == "header")
            {
                return "241,196,15";
            }
            if (kind == "lto")
            {
                return "231,76,60";
            }
            return "52,152,219";  // compile
        }

        // The identity map: per module, each identity it built (hash, block_dim, kernels, ms) in
        // the order it loaded, and on each arrow why the next one was needed, as the analysis
        // classified it. The mental model drawn from this run: identity = kernels x options x
        // block_dim x generic instances.
        void identity_map_svg(std::ostream& o, const summary& s)
        {
            struct box
            {
                std::string hash;
                int block_dim = -1;
                int kernels = -1;
                double ms = 0.0;
                std::string arrow;  // why this identity followed the previous one
                bool new_block_dim = false;
            };
            constexpr std::size_t max_modules = 8;
            constexpr std::size_t max_boxes = 6;
            std::vector<std::pair<std::string, std::vector<box>>> rows;
            for (const auto& m : s.modules)
            {
                if (rows.size() == max_modules)
                {
                    break;
                }
                std::vector<box> boxes;
                // This module's identities, found once: looking each box up among every identity
                // made a module that churned 1,000 times cost a second.
                std::vector<const identity*> mine;
                std::map<std::pair<std::string_view, int>, const identity*> by_hash;
                std::vector<int> bds;
                for (const auto& id : s.identities)
                {
                    if (id.module != m.module || id.device != m.device)
                    {
                        continue;
                    }
                    mine.push_back(&id);
                    by_hash.emplace(std::pair<std::string_view, int>(id.hash, id.block_dim.value_or(-1)), &id);
                    if (std::find(bds.begin(), bds.end(), id.block_dim.value_or(-1)) == bds.end())
                    {
                        bds.push_back(id.block_dim.value_or(-1));
                    }
                }
                for (int bd : bds)
                {
                    std::vector<std::string> chain;
                    std::vector<std::string> moves;
                    for (const auto& g : s.rebuilt)
                    {
                        if (g.kind == rebuild_kind::hash_churn && g.module == m.module && g.device == m.device && !g.block_dims.empty()
                            && g.block_dims[0] == bd)
                        {
                            chain.assign(g.hashes.begin(), g.hashes.end());
                            moves = g.moves;
                        }
                    }
                    if (chain.empty())
                    {
                        for (const identity* id : mine)
                        {
                            if (id->block_dim.value_or(-1) == bd)
                            {
                                chain.push_back(id->hash);
                            }
                        }
                    }
                    for (std::size_t i = 0; i < chain.size(); ++i)
                    {
                        box b;
                        b.hash = chain[i];
                        b.block_dim = bd;
                        if (auto it = by_hash.find({std::string_view(chain[i]), bd}); it != by_hash.end())
                        {
                            b.kernels = it->second->kernels;
                            b.ms = it->second->ms;
                        }
                        if (i > 0)
                        {
                            b.arrow = i - 1 < moves.size() && !moves[i - 1].empty() ? moves[i - 1] : "new hash (cause not recorded)";
                        }
                        else if (!boxes.empty())
                        {
                            b.arrow = "block_dim " + std::to_string(boxes.back().block_dim) + " -> " + std::to_string(bd);
                            b.new_block_dim = true;
                        }
                        boxes.push_back(b);
                    }
                }
                rows.emplace_back(m.module + " on " + m.device, boxes);
            }
            if (rows.empty())
            {
                return;
            }
            const int label_w = 190;
            const int box_w = 150;
            const int gap = 185;  // room for about 30 characters of cause on the arrow
            const int row_h = 64;
            std::size_t widest = 1;
            for (const auto& [_, boxes] : rows)
            {
                widest = std::max(widest, std::min(boxes.size(), max_boxes));
            }
            const int width = label_w + static_cast<int>(widest) * (box_w + gap) - gap + 70;
            const int height = static_cast<int>(rows.size()) * row_h + 8;
            o << "<svg data-xwarp=\"identity-map\" role=\"img\" aria-label=\"module identities and why each was built\" width=\""
              << width << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << " " << height
              << "\" style=\"display:block;margin:4px 0 8px 0;font-family:ui-monospace,monospace;\">";
            o << "<defs><marker id=\"xwarp-arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" "
                 "markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"currentColor\"/></marker></defs>";
            for (std::size_t r = 0; r < rows.size(); ++r)
            {
                const int y = static_cast<int>(r) * row_h + 8;
                const auto& [label, boxes] = rows[r];
                o << "<text x=\"" << label_w - 8 << "\" y=\"" << y + 24 << "\" font-size=\"11\" text-anchor=\"end\" "
                  << "fill=\"currentColor\"><title>" << html_escape(capped(label)) << "</title>" << html_escape(elide(label, 28))
                  << "</text>";
                for (std::size_t i = 0; i < boxes.size() && i < max_boxes; ++i)
                {
                    const auto& b = boxes[i];
                    const int x = label_w + static_cast<int>(i) * (box_w + gap);
                    if (i > 0)
                    {
                        o << "<line x1=\"" << x - gap + 2 << "\" y1=\"" << y + 20 << "\" x2=\"" << x - 3 << "\" y2=\"" << y + 20
                          << "\" stroke=\"currentColor\" stroke-width=\"1.2\" marker-end=\"url(#xwarp-arrow)\""
                          << (b.new_block_dim ? " stroke-dasharray=\"4 3\"" : "") << "/>";
                        o << "<text x=\"" << x - gap / 2 << "\" y=\"" << y + 14 << "\" font-size=\"9.5\" text-anchor=\"middle\" "
                          << "fill=\"rgb(192,57,43)\"><title>" << html_escape(b.arrow) << "</title>"
                          << html_escape(b.arrow.size() > 31 ? b.arrow.substr(0, 30) + "\u2026" : b.arrow)
                          << "</text>";
                    }
                    o << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << box_w << "\" height=\"40\" rx=\"5\" "
                      << "fill=\"rgba(52,152,219,0.12)\" stroke=\"rgb(52,152,219)\"/>";
                    o << "<text x=\"" << x + 7 << "\" y=\"" << y + 16 << "\" font-size=\"11\" fill=\"currentColor\">"
                      << html_escape(b.hash.substr(0, 7)) << (b.block_dim >= 0 ? " &#183; bd " + std::to_string(b.block_dim) : "")
                      << "</text>";
                    o << "<text x=\"" << x + 7 << "\" y=\"" << y + 32 << "\" font-size=\"10\" fill=\"currentColor\" "
                      << "fill-opacity=\"0.75\">"
                      << (b.kernels >= 0 ? std::to_string(b.kernels) + (b.kernels == 1 ? " kernel" : " kernels") + " &#183; " : "")
                      << html_escape(format_ms(b.ms)) << "</text>";
                }
                if (boxes.size() > max_boxes)
                {
                    o << "<text x=\"" << label_w + static_cast<int>(max_boxes) * (box_w + gap) - gap + 8 << "\" y=\"" << y + 24
                      << "\" font-size=\"10\" fill=\"currentColor\">+" << boxes.size() - max_boxes << " more</text>";
                }
            }
            o << "</svg>";
        }

        // The build timeline: one lane per process and thread, each load a bar (its colour its
        // status) with its phases beneath, hover titles; measured ms scaled to pixels only.
        void timeline_svg(std::ostream& o, const build_timeline& t)
        {
            double end = t.wall_ms;
            for (const auto& sp : t.spans)
            {
                end = std::max(end, sp.start_ms + sp.ms);
            }
            if (t.spans.empty() || end <= 0.0)
            {
                return;
            }
            constexpr std::size_t max_loads = 400;  // a larger run is summarised in the trace export
            constexpr std::size_t max_lanes = 40;   // processes x threads: the first 40
            const std::size_t lanes = std::min(t.lanes.size(), max_lanes);
            const int label_w = 170;
            const int plot_w = 720;
            const int lane_h = 26;
            const int top = 18;
            const int height = top + static_cast<int>(lanes) * lane_h + 4;
            auto x = [&](double ms) { return label_w + plot_w * ms / end; };
            o << "<svg data-xwarp=\"timeline\" role=\"img\" aria-label=\"build timeline\" width=\"" << label_w + plot_w + 10
              << "\" height=\"" << height << "\" viewBox=\"0 0 " << label_w + plot_w + 10 << " " << height
              << "\" style=\"display:block;margin:4px 0 8px 0;font-family:ui-monospace,monospace;\">";
            for (int k = 0; k <= 4; ++k)
            {
                const double ms = end * k / 4.0;
                o << "<line x1=\"" << format_fixed(x(ms), 1) << "\" y1=\"" << top - 4 << "\" x2=\"" << format_fixed(x(ms), 1)
                  << "\" y2=\"" << height << "\" stroke=\"currentColor\" stroke-opacity=\"0.15\"/>";
                o << "<text x=\"" << format_fixed(x(ms), 1) << "\" y=\"11\" font-size=\"10\" fill=\"currentColor\" "
                  << "text-anchor=\"" << (k == 0 ? "start" : k == 4 ? "end" : "middle") << "\">" << html_escape(format_ms(ms))
                  << "</text>";
            }
            for (std::size_t i = 0; i < lanes; ++i)
            {
                o << "<text x=\"" << label_w - 6 << "\" y=\"" << top + static_cast<int>(i) * lane_h + 15
                  << "\" font-size=\"10\" text-anchor=\"end\" fill=\"currentColor\">" << html_escape(elide(t.lanes[i], 26))
                  << "</text>";
            }
            std::size_t loads = 0;
            for (const auto& sp : t.spans)
            {
                const std::string lane = "pid " + std::to_string(sp.pid) + " / " + (sp.thread.empty() ? "?" : sp.thread);
                const auto it = std::find(t.lanes.begin(), t.lanes.begin() + static_cast<std::ptrdiff_t>(lanes), lane);
                if (it == t.lanes.begin() + static_cast<std::ptrdiff_t>(lanes))
                {
                    continue;
                }
                if (sp.kind == "load" && ++loads > max_loads)
                {
                    break;
                }
                if (sp.kind == "nvrtc")
                {
                    continue;  // NVRTC's own phases are too fine for this picture: the trace export has them
                }
                const int y = top + static_cast<int>(it - t.lanes.begin()) * lane_h;
                const double x0 = x(sp.start_ms);
                const double w = std::max(1.0, x(sp.start_ms + sp.ms) - x0);
                std::string title = sp.kind.str() + " " + elide(sp.module, 160) + " " + sp.hash + " on " + sp.device
                                    + (sp.block_dim ? " block_dim " + std::to_string(*sp.block_dim) : std::string()) + ": "
                                    + format_ms(sp.ms) + " from " + format_ms(sp.start_ms)
                                    + (sp.triggered_by.empty() ? std::string() : ", waited by the launch of " + elide(sp.triggered_by.str(), 160));
                if (sp.kind == "load")
                {
                    o << "<rect x=\"" << format_fixed(x0, 1) << "\" y=\"" << y + 2 << "\" width=\"" << format_fixed(w, 1)
                      << "\" height=\"14\" rx=\"2\" fill=\"rgb(" << status_rgb(sp.status) << ")\" fill-opacity=\"0.55\"><title>"
                      << html_escape(title) << "</title></rect>";
                    if (w > 40)
                    {
                        o << "<text x=\"" << format_fixed(x0 + 3, 1) << "\" y=\"" << y + 13 << "\" font-size=\"10\" "
                          << "fill=\"currentColor\" clip-path=\"inset(0)\">"
                          << html_escape(elide(sp.module, std::max<std::size_t>(4, static_cast<std::size_t>(w / 7)))) << "</text>";
                    }
                }
                else
                {
                    o << "<rect x=\"" << format_fixed(x0, 1) << "\" y=\"" << y + 18 << "\" width=\"" << format_fixed(w, 1)
                      << "\" height=\"5\" fill=\"rgb(" << phase_rgb(sp.kind) << ")\" fill-opacity=\"0.85\"><title>"
                      << html_escape(title) << "</title></rect>";
                }
            }
            o << "</svg>";
            o << "<div style=\"" << style::muted << "font-size:11px;\">sample " << t.sample << ", " << html_escape(t.pass)
              << " pass, from the first process's start; bars: loads (" << badge("compiled", status_rgb("compiled")) << " "
              << badge("cached", status_rgb("cached")) << "), beneath them " << badge("codegen", phase_rgb("codegen")) << " "
              << badge("compile", phase_rgb("compile")) << " " << badge("header", phase_rgb("header")) << " "
              << badge("lto", phase_rgb("lto"))
              << (loads > max_loads ? " &middot; the first " + std::to_string(max_loads) + " loads (warp-probe report --format trace has all)" : "")
              << (t.lanes.size() > lanes ? " &middot; the first " + std::to_string(lanes) + " of " + std::to_string(t.lanes.size())
                                               + " processes and threads (the trace has all)"
                                         : "")
              << "</div>";
        }

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
            row("module work, cold", stat_cell(s.cold_module_ms), "sum of module loads (" + s.module_ms_source + ")");
            row("module work, warm", stat_cell(s.warm_module_ms), "");
            row("native compile", stat_cell(s.native_ms), "clang / NVRTC (" + s.native_ms_source + ")");
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

        // Rows a report shows before it summarises: the HTML stays small (a few MB at most)
        // whatever the run's size; the JSON keeps everything.
        constexpr std::size_t max_identity_rows = 100;
        constexpr std::size_t max_module_rows = 500;
        constexpr std::size_t max_launch_rows = 200;
        constexpr std::size_t max_group_members = 25;  // a module that churned 1,000 times: its heaviest 25

        void identities_table(std::ostream& o, const summary& s)
        {
            o << "<table data-xwarp=\"identities\" style=\"" << style::table << "\"><thead><tr>" << th("ms") << th("builds")
              << th("status") << th("module") << th("hash") << th("device") << th("block_dim") << th("kernels")
              << th("samples") << "</tr></thead><tbody>";
            auto id_row = [&](const identity& id, const std::string& indent)
            {
                o << "<tr>" << td(html_escape(format_fixed(id.ms, 1)), style::num) << td(std::to_string(id.builds), style::num)
                  << td(badge(id.status, status_rgb(id.status))) << td(indent + mono(id.module)) << td(mono(id.hash.substr(0, 7)))
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
                    o << "<tr>" << td(html_escape(format_fixed(other->ms, 1)), style::num) << td(badge(other->status, status_rgb(other->status)))
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
                if (f.measured.is_object())
                {
                    const std::string verdict = field_or(f.measured, "verdict", std::string());
                    o << "<div data-xwarp=\"measured\" style=\"margin-top:2px;\"><span style=\"" << style::muted
                      << "\">measured</span> " << mono(f.lever) << " "
                      << badge(verdict, member_named<xwarp::verdict>(verdict) ? verdict_rgb(*member_named<xwarp::verdict>(verdict)) : "128,128,128")
                      << " " << html_escape(measured_words(f.measured)) << "</div>";
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
    }

    std::string html_escape(const std::string& raw)
    {
        // One text is at most 16 KB on the page (a report's label or error can be any size): the
        // page stays bounded whatever the report holds; the JSON keeps the whole text.
        constexpr std::size_t max_text = 16 * 1024;
        // Control and bidirectional characters become visible escapes first ("\u202e"): a
        // U+202E in a module name would otherwise reverse the report's own text after it.
        const std::string text = printable_block(raw.size() > max_text ? elide(raw, max_text) : raw);
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

    namespace
    {
        // A sparkline of a series of non-negative values, this run's point ringed. The
        // renderer only scales the values the trend computed to pixels.
        std::string sparkline(const std::vector<trend_point>& points, std::int64_t this_run)
        {
            constexpr double w = 160.0, h = 22.0, pad = 3.0;
            double top = 0.0;
            for (const auto& p : points)
            {
                top = std::max(top, p.cold_ms);
            }
            std::ostringstream o;
            o << "<svg width=\"" << w << "\" height=\"" << h << "\" viewBox=\"0 0 " << w << " " << h
              << "\" style=\"vertical-align:middle;\">";
            if (points.empty())
            {
                return o.str() + "</svg>";
            }
            auto x = [&](std::size_t i)
            { return points.size() == 1 ? w / 2 : pad + (w - 2 * pad) * static_cast<double>(i) / static_cast<double>(points.size() - 1); };
            auto y = [&](double v) { return top > 0 ? h - pad - (h - 2 * pad) * v / top : h - pad; };
            o << "<polyline fill=\"none\" stroke=\"rgb(52,152,219)\" stroke-width=\"1.5\" points=\"";
            for (std::size_t i = 0; i < points.size(); ++i)
            {
                o << format_fixed(x(i), 1) << "," << format_fixed(y(points[i].cold_ms), 1) << " ";
            }
            o << "\"/>";
            for (std::size_t i = 0; i < points.size(); ++i)
            {
                const bool here = points[i].run == this_run;
                o << "<circle cx=\"" << format_fixed(x(i), 1) << "\" cy=\"" << format_fixed(y(points[i].cold_ms), 1) << "\" r=\""
                  << (here ? "3" : "1.6") << "\" fill=\"" << (here ? "rgb(230,126,34)" : "rgb(52,152,219)") << "\"><title>@"
                  << points[i].run << ": " << html_escape(format_ms(points[i].cold_ms)) << ", " << points[i].identities
                  << " identities</title></circle>";
            }
            return o.str() + "</svg>";
        }

        std::string history_section(const history_view& v)
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
    }

    std::string render_html(const report& r, const guide_sections& guide, const history_view* history)
    {
        std::ostringstream o;
        render_html(o, r, guide, history);
        return o.str();
    }

    namespace
    {
        std::string heading(const std::string& title, const std::string& note = "")
        {
            return std::string("<div style=\"") + style::heading + "\">" + title
                   + (note.empty() ? "" : std::string(" <span style=\"") + style::muted + "font-weight:400;\">" + note + "</span>")
                   + "</div>";
        }

        std::string whatif_row(const whatif_result& w)
        {
            const auto [clock, saving] = w.quoted();
            const bool measured = w.verdict != verdict::not_applied && w.verdict != verdict::not_run;
            std::string why = w.reason;
            if (const auto counted = w.counted_builds_words(); !counted.empty() && measured)
            {
                why += (why.empty() ? "" : "; ") + counted;
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
            html_report(std::ostream& o, const report& r, const guide_sections& guide, const history_view* history)
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
                    m_o << "<div style=\"margin:2px 0;\">" << badge(m_s.flags[i].id, style::warn_rgb) << " "
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
                        << td(f.saving_ms ? html_escape((*f.saving_ms >= 0 ? "-" : "+") + format_ms(std::fabs(*f.saving_ms)) + " " + f.clock) : "", style::num)
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
                    << html_escape(m_s.load_source) << ", module ms from " << html_escape(m_s.module_ms_source)
                    << ", native ms from " << html_escape(m_s.native_ms_source) << " &middot; "
                    << (m_r.samples.empty() || m_r.samples.front().cold.containment.empty()
                            ? std::string()
                            : "processes held by " + html_escape(m_r.samples.front().cold.containment) + " &middot; ")
                    << html_escape(m_r.env.cpu_model) << " &middot; warp-probe " << html_escape(m_r.env.probe_version)
                    << "</div>";
            }

            std::ostream& m_o;
            const report& m_r;
            const summary& m_s;
            const guide_sections& m_guide;
            const history_view* m_history;
        };
    }

    void render_html(std::ostream& o, const report& r, const guide_sections& guide, const history_view* history)
    {
        html_report(o, r, guide, history).write();
    }

    std::string render_compare_html(const comparison& c, const report* before, const report* after)
    {
        std::ostringstream o;
        o << "<div class=\"xwarp-compare\" data-xwarp=\"compare\" style=\"" << style::root << "\">";
        o << "<div data-xwarp=\"verdict\" style=\"" << style::box << "border-color:rgba(" << verdict_rgb(c.verdict)
          << ",0.8);background:rgba(" << verdict_rgb(c.verdict) << ",0.10);\"><b style=\"font-size:15px;\">"
          << html_escape(word_of(c.verdict)) << (c.indicative ? ", indicative" : "") << "</b> <span style=\"" << style::muted << "\">exit " << c.exit_code << "</span>";
        o << "<ul style=\"margin:4px 0 0 0;padding-left:18px;\">";
        for (const auto& r : c.reasons)
        {
            o << "<li>" << html_escape(r) << "</li>";
        }
        o << "</ul>";
        if (c.until_settled)
        {
            const auto& s = *c.until_settled;
            o << "<div data-xwarp=\"until-settled\" data-settled=\"" << (s.settled ? "true" : "false") << "\" style=\""
              << style::muted << "\">until settled: added " << s.added_before << " sample(s) before and " << s.added_after
              << " after (now " << c.before.samples_total << " and " << c.after.samples_total << ", at most "
              << s.max_samples << " a side); " << (s.settled ? "settled: " : "not settled: ")
              << html_escape(s.stopped_because) << "</div>";
        }
        o << "</div>";

        // The two runs side by side.
        o << "<table data-xwarp=\"sides\" style=\"" << style::table << "\"><thead><tr>" << th("") << th("before: " + html_escape(c.before.label.empty() ? c.before.path : c.before.label))
          << th("after: " + html_escape(c.after.label.empty() ? c.after.path : c.after.label)) << "</tr></thead><tbody>";
        auto side_row = [&](const std::string& name, const std::string& b, const std::string& a)
        { o << "<tr>" << td(html_escape(name)) << td(b, style::num) << td(a, style::num) << "</tr>"; };
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

        o << "<div style=\"" << style::heading << "\">Clocks <span style=\"" << style::muted
          << "font-weight:400;\">band = max(1% of before, 2 &times; before MAD)</span></div>";
        o << "<table data-xwarp=\"clocks\" style=\"" << style::table << "\"><thead><tr>" << th("clock") << th("delta") << th("band")
          << th("p") << th("samples") << th("outcome") << "</tr></thead><tbody>";
        for (const auto& k : c.clocks)
        {
            std::string delta = k.delta_ms ? format_ms(*k.delta_ms) : "n/a";
            if (k.delta_pct)
            {
                delta += " (" + format_fixed(*k.delta_pct, 1) + "%)";
            }
            o << "<tr>" << td(clock_label(k.clock)) << td(html_escape(delta), style::num)
              << td(k.band_ms ? html_escape(format_ms(*k.band_ms)) : "n/a", style::num)
              << td(k.p_value ? format_fixed(*k.p_value, 4) : "-", style::num) << td(std::to_string(k.n_before) + " / " + std::to_string(k.n_after), style::num)
              << td(html_escape(k.outcome) + (k.samples_needed ? " (about " + std::to_string(*k.samples_needed) + " a side would settle it)" : ""))
              << "</tr>";
        }
        o << "</tbody></table>";
        for (const auto& k : c.clocks)
        {
            if (!k.note.empty())
            {
                o << "<div style=\"" << style::muted << "\">" << clock_label(k.clock)
                  << ": " << html_escape(k.note) << "</div>";
            }
        }
        o << "<div style=\"" << style::muted << "\">judged on " << html_escape(c.judged_on) << "</div>";

        o << "<div style=\"" << style::heading << "\">Workload: " << html_escape(word_of(c.workload.status)) << "</div><div>"
          << html_escape(c.workload.reason) << "</div>";
        for (const auto& r : c.workload.renames)
        {
            o << "<div>renamed kernel " << mono(r.before) << " &rarr; " << mono(r.after) << "</div>";
        }
        if (c.workload.first_divergence)
        {
            const auto& d = *c.workload.first_divergence;
            auto words = [](const std::optional<launch_record>& l)
            { return l ? l->kernel + " dim=" + l->dim.text() + " " + l->device + " block_dim=" + std::to_string(l->block_dim) : std::string("(none)"); };
            o << "<div>first divergence at launch #" << d.index + 1 << ": before " << mono(words(d.before)) << ", after "
              << mono(words(d.after)) << "</div>";
        }
        constexpr std::size_t max_compare_rows = 500;  // moved launch counts, hash receipts
        for (std::size_t i = 0; i < c.workload.moved_counts.size() && i < max_compare_rows; ++i)
        {
            const auto& m = c.workload.moved_counts[i];
            o << "<div>launches of " << mono(m.kernel) << ": " << m.before << " &rarr; " << m.after << "</div>";
        }
        o << more_rows(c.workload.moved_counts.size(), max_compare_rows, "more kernels whose launches moved");

        o << "<div style=\"" << style::heading << "\">Hash receipts</div><table data-xwarp=\"receipts\" style=\"" << style::table
          << "\"><thead><tr>" << th("module") << th("device") << th("before") << th("after") << th("") << "</tr></thead><tbody>";
        for (std::size_t i = 0; i < c.receipts.size() && i < max_compare_rows; ++i)
        {
            const auto& r = c.receipts[i];
            auto hashes = [](const std::vector<shared_text>& v)
            {
                std::string s;
                for (const auto& h : v)
                {
                    s += (s.empty() ? "" : " ") + h.str().substr(0, 7);
                }
                return s.empty() ? std::string("-") : s;
            };
            o << "<tr>" << td(mono(r.module)) << td(html_escape(r.device)) << td(mono(hashes(r.before)))
              << td(mono(hashes(r.after))) << td(r.changed ? badge("changed", "230,126,34") : badge("unchanged", "128,128,128"))
              << "</tr>";
        }
        o << "</tbody></table>" << more_rows(c.receipts.size(), max_compare_rows, "more modules' receipts");
        for (const auto& oc : c.option_checks)
        {
            o << "<div data-xwarp=\"option-check\" style=\"" << style::box << "border-color:rgba(231,76,60,0.7);\"><b>option did not arrive</b> "
              << html_escape(oc.message) << (oc.set_at ? " (" + mono(oc.set_at->file + ":" + std::to_string(oc.set_at->line)) + ")" : "")
              << "</div>";
        }
        for (const auto& n : c.notes)
        {
            bool is_option = std::any_of(c.option_checks.begin(), c.option_checks.end(), [&](const option_check& oc) { return oc.message == n; });
            if (!is_option)
            {
                o << "<div style=\"" << style::muted << "\">note: " << html_escape(n) << "</div>";
            }
        }
        o << "</div>";
        return o.str();
    }

    std::string render_preformatted_html(const std::string& text)
    {
        return std::string("<pre style=\"") + style::pre + "\">" + html_escape(text) + "</pre>";
    }

    std::string render_provisional_html(const std::string& banner, const std::string& report_html)
    {
        return std::string("<div data-xwarp=\"provisional\" style=\"opacity:0.8;\"><div style=\"") + style::strong
               + "\">" + html_escape(banner) + "</div>" + report_html + "</div>";
    }

    std::string html_page(const std::string& title, const std::string& fragment)
    {
        std::ostringstream o;
        write_html_page(o, title, [&](std::ostream& out) { out << fragment; });
        return o.str();
    }

    void write_html_page(std::ostream& out, const std::string& title, const std::function<void(std::ostream&)>& fragment)
    {
        out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << html_escape(title)
            << "</title></head><body style=\"margin:16px;\">\n";
        fragment(out);
        out << "\n</body></html>\n";
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
