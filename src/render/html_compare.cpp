// The compare page: the verdict and its reasons, the two runs side by side, the clocks, the
// workload check and the hash receipts.
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

namespace xwarp
{
    using namespace html_parts;

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
            side_row(clock_name(k.clock),
                     k.before_median ? html_escape(format_ms(*k.before_median)) : "n/a",
                     k.after_median ? html_escape(format_ms(*k.after_median)) : "n/a");
        }
        for (const auto& s : c.structure)
        {
            const bool bytes = s.in_bytes;
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
            o << "<tr>" << td(clock_name(k.clock)) << td(html_escape(delta), style::num)
              << td(k.band_ms ? html_escape(format_ms(*k.band_ms)) : "n/a", style::num)
              << td(k.p_value ? format_fixed(*k.p_value, 4) : "-", style::num) << td(std::to_string(k.n_before) + " / " + std::to_string(k.n_after), style::num)
              << td(html_escape(word_of(k.outcome)) + (k.samples_needed ? " (about " + std::to_string(*k.samples_needed) + " a side would settle it)" : ""))
              << "</tr>";
        }
        o << "</tbody></table>";
        for (const auto& k : c.clocks)
        {
            if (!k.note.empty())
            {
                o << "<div style=\"" << style::muted << "\">" << clock_name(k.clock)
                  << ": " << html_escape(k.note) << "</div>";
            }
        }
        for (const auto& k : c.clocks)
        {
            if (k.load_delta_ms && k.outcome == clock_outcome::machine_busy)
            {
                o << "<div style=\"" << style::muted << "\">" << clock_name(k.clock)
                  << ": the other processes' load could explain " << html_escape(format_ms(std::fabs(*k.load_delta_ms)))
                  << " of the change</div>";
            }
        }
        o << "<div style=\"" << style::muted << "\">judged on " << html_escape(c.judged_on.sentence()) << "</div>";

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
}
