#include "xwarp/render/budget_lines.hpp"
#include "xwarp/render/styles.hpp"

#include <algorithm>
#include <sstream>

#include "xwarp/render/html.hpp"
#include "xwarp/render/printable.hpp"

namespace xwarp
{
    namespace
    {
        // How a limit ended, in the column before its message.
        const char* mark(const budget_result& b)
        {
            if (!b.exceeded)
            {
                return "  ok    ";
            }
            if (!b.judged)
            {
                return "  NOT JUDGED ";
            }
            if (judged_against_a_run(b.kind))
            {
                return "  CHANGED ";
            }
            if (b.kind == limit_kind::option)
            {
                return "  NOT MET ";
            }
            return b.at_least ? "  UNDER " : "  OVER  ";
        }

        bool any_over(const std::vector<budget_result>& results)
        {
            return std::any_of(results.begin(), results.end(), [](const budget_result& b) { return b.exceeded; });
        }
    }

    std::string render_budget_text(const std::vector<budget_result>& results, const std::string& title)
    {
        std::string text = title + (any_over(results) ? ": not met\n" : ": met\n");
        for (const auto& b : results)
        {
            text += std::string(mark(b)) + b.message + "\n";
        }
        return printable_block(text);
    }

    std::string render_budget_html(const std::vector<budget_result>& results, const std::string& title)
    {
        const bool over = any_over(results);
        std::ostringstream o;
        const char* rgb = over ? style::bad_rgb : style::good_rgb;
        o << "<div data-xwarp=\"expect\" data-met=\"" << (over ? "false" : "true")
          << "\" style=\"margin:6px 0;padding:6px 10px;border-left:4px solid rgb(" << rgb << ");background:rgba(" << rgb
          << ",0.08);" << style::small_text << "\"><div style=\"" << style::strong << "\">" << html_escape(title)
          << (over ? ": not met" : ": met") << "</div>";
        for (const auto& b : results)
        {
            o << "<div style=\"" << style::mono << "\">" << html_escape(mark(b)) << html_escape(b.message) << "</div>";
        }
        o << "</div>";
        return o.str();
    }
}
