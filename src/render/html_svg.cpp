// The SVG drawings of a report page: the build-time chart, the identity map, the build
// timeline and the history's sparklines. Measured values scaled to pixels, nothing computed.
#include "xwarp/render/html.hpp"

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
#include "xwarp/render/printable.hpp"
#include "xwarp/render/styles.hpp"
#include "xwarp/render/text.hpp"

namespace xwarp::html_parts
{
    namespace
    {
        std::string phase_rgb(span_kind kind)
        {
            switch (kind)
            {
                case span_kind::codegen:
                    return "142,68,173";
                case span_kind::header:
                    return "241,196,15";
                case span_kind::lto:
                    return "231,76,60";
                case span_kind::load:
                case span_kind::compile:
                case span_kind::nvrtc:
                    break;
            }
            return "52,152,219";  // compile
        }
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
            if (sp.kind == span_kind::load && ++loads > max_loads)
            {
                break;
            }
            if (sp.kind == span_kind::nvrtc)
            {
                continue;  // NVRTC's own phases are too fine for this picture: the trace export has them
            }
            const int y = top + static_cast<int>(it - t.lanes.begin()) * lane_h;
            const double x0 = x(sp.start_ms);
            const double w = std::max(1.0, x(sp.start_ms + sp.ms) - x0);
            std::string title = word_of(sp.kind) + " " + elide(sp.module, 160) + " " + sp.hash + " on " + sp.device
                                + (sp.block_dim ? " block_dim " + std::to_string(*sp.block_dim) : std::string()) + ": "
                                + format_ms(sp.ms) + " from " + format_ms(sp.start_ms)
                                + (sp.triggered_by.empty() ? std::string() : ", waited by the launch of " + elide(sp.triggered_by.str(), 160));
            if (sp.kind == span_kind::load)
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
          << " pass, from the first process's start; bars: loads (" << badge("compiled", status_rgb(load_status::compiled)) << " "
          << badge("cached", status_rgb(load_status::cached)) << "), beneath them " << badge("codegen", phase_rgb(span_kind::codegen)) << " "
          << badge("compile", phase_rgb(span_kind::compile)) << " " << badge("header", phase_rgb(span_kind::header)) << " "
          << badge("lto", phase_rgb(span_kind::lto))
          << (loads > max_loads ? " &middot; the first " + std::to_string(max_loads) + " loads (warp-probe report --format trace has all)" : "")
          << (t.lanes.size() > lanes ? " &middot; the first " + std::to_string(lanes) + " of " + std::to_string(t.lanes.size())
                                           + " processes and threads (the trace has all)"
                                     : "")
          << "</div>";
    }

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
}
