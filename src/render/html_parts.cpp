// The markup every HTML page shares, html_escape, the page around a fragment, and the guide's
// sections for the findings.
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
    namespace html_parts
    {
        std::string badge(const std::string& text, const std::string& rgb)
        {
            return style::badge_html(html_escape(text), rgb);
        }

        std::string status_rgb(load_status status)
        {
            switch (status)
            {
                case load_status::compiled: return "230,126,34";
                case load_status::cached: return "39,174,96";
                case load_status::error: return "231,76,60";
                default: return "128,128,128";
            }
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

        std::string td(const std::string& inner, const char* css)
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
        std::string more_rows(std::size_t total, std::size_t shown, const char* what)
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

        std::string heading(const std::string& title, const std::string& note)
        {
            return std::string("<div style=\"") + style::heading + "\">" + title
                   + (note.empty() ? "" : std::string(" <span style=\"") + style::muted + "font-weight:400;\">" + note + "</span>")
                   + "</div>";
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

