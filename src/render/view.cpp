// Each result's view: which renderer writes each part, and the notebook's cut of a report.
#include "xwarp/render/view.hpp"

#include <ostream>
#include <sstream>

#include "xwarp/model/format.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/render/budget_lines.hpp"
#include "xwarp/render/history_text.hpp"
#include "xwarp/render/text.hpp"
#include "xwarp/render/trace.hpp"
#include "xwarp/render/warmup_file.hpp"

namespace xwarp
{
    using nlohmann::json;

    void write_view(std::ostream& out, const view& v, view_part part)
    {
        // a part the view does not have writes nothing
        const auto write = [](std::ostream& to, const view::writer& w)
        {
            if (w)
            {
                w(to);
            }
        };
        switch (part)
        {
            case view_part::text: write(out, v.text); break;
            case view_part::html: write(out, v.html); break;
            case view_part::page: write_html_page(out, v.title, [&](std::ostream& fragment) { write(fragment, v.html); }); break;
            case view_part::data: write(out, v.data); break;
        }
    }

    std::string view_text(const view& v, view_part part)
    {
        std::ostringstream out;
        write_view(out, v, part);
        return out.str();
    }

    json view_bundle(const view& v)
    {
        json bundle = json::object();
        const auto part = [](const view::writer& w)
        {
            std::ostringstream out;
            w(out);
            return out.str();
        };
        if (v.text)
        {
            bundle[text_mime] = part(v.text);
        }
        if (v.html)
        {
            bundle[html_mime] = part(v.html);
        }
        if (v.data && !v.mime.empty())
        {
            bundle[v.mime] = json::parse(part(v.data));
        }
        return bundle;
    }

    namespace
    {
        view::writer report_text(const report& r, report_words words)
        {
            switch (words)
            {
                case report_words::fix: return [&r](std::ostream& out) { out << render_fix_text(r); };
                case report_words::whatif: return [&r](std::ostream& out) { out << render_whatif_text(r); };
                case report_words::whole: break;
            }
            return [&r](std::ostream& out) { render_text(out, r); };
        }

        view::writer report_html(const report& r, const report_page& page)
        {
            return [&r, guide = page.guide, history = page.history](std::ostream& out)
            {
                static const guide_sections no_guide;
                render_html(out, r, guide ? *guide : no_guide, history);
            };
        }

        view::writer json_writer(json data)
        {
            return [data = std::move(data)](std::ostream& out)
            { out << data.dump(2, ' ', false, json::error_handler_t::replace) << '\n'; };
        }

        view::writer preformatted(std::string text)
        {
            return [text = std::move(text)](std::ostream& out) { out << render_preformatted_html(text); };
        }

        view::writer plain(std::string text)
        {
            return [text = std::move(text)](std::ostream& out) { out << text; };
        }
    }

    view report_view(const report& r, const report_page& page, report_words words)
    {
        return {page.title, report_text(r, words), report_html(r, page), report_mime,
                [&r](std::ostream& out)
                {
                    write_report_json(out, r, 2);
                    out << '\n';
                }};
    }

    view notebook_report_view(const report& r, const report_page& page, report_words words)
    {
        view::writer whole = report_text(r, words);
        view::writer text = [whole](std::ostream& out)
        {
            std::ostringstream all;
            whole(all);
            std::string shown = std::move(all).str();
            if (shown.size() > notebook_text_bytes)
            {
                const std::size_t total = shown.size();
                const std::size_t cut = shown.rfind('\n', notebook_text_bytes);
                shown.resize(cut == std::string::npos ? notebook_text_bytes : cut + 1);
                shown += "... the text goes on for " + format_bytes(static_cast<double>(total - shown.size()))
                         + " more: warp-probe report, or the file %warp_export writes, holds it whole\n";
            }
            out << shown;
        };
        return {page.title, std::move(text), report_html(r, page), report_mime,
                [&r](std::ostream& out) { out << notebook_report_data(r).dump(-1, ' ', false, json::error_handler_t::replace); }};
    }

    json notebook_report_data(const report& r)
    {
        const std::string whole = report_json_text(r);
        if (whole.size() <= notebook_report_bytes)
        {
            return json::parse(whole);
        }
        report outline = r;
        for (auto& s : outline.samples)
        {
            for (run_result* pass : {&s.cold, s.warm ? &*s.warm : nullptr})
            {
                if (pass != nullptr)
                {
                    pass->module_loads.clear();
                    pass->launches.clear();
                    pass->processes.clear();
                }
            }
        }
        outline.warnings.push_back("the notebook's copy of this report leaves out the samples' records ("
                                   + format_bytes(static_cast<double>(whole.size()))
                                   + " whole): the summary's tables hold what they say; %warp_export writes the report whole");
        json out = report_to_json(outline);
        // A run of thousands of identities has summary tables of thousands of rows: each long
        // list keeps its first rows (the tables are sorted by what is at stake), fewer until the
        // copy fits, and the warning names what was cut.
        for (const std::size_t keep : {std::size_t{500}, std::size_t{50}, std::size_t{5}})
        {
            if (out.dump().size() <= notebook_report_bytes)
            {
                break;
            }
            std::vector<std::string> cut;
            for (auto& [key, value] : out["summary"].items())
            {
                if (value.is_array() && value.size() > keep)
                {
                    cut.push_back(key + " (" + std::to_string(value.size()) + ")");
                    value.erase(value.begin() + static_cast<std::ptrdiff_t>(keep), value.end());
                }
            }
            if (!cut.empty())
            {
                std::string names;
                for (const auto& c : cut)
                {
                    names += (names.empty() ? "" : ", ") + c;
                }
                out["warnings"].push_back("and keeps the first " + std::to_string(keep) + " rows of the summary's " + names
                                          + ": %warp_export writes them all");
            }
        }
        return out;
    }

    view provisional_view(const std::string& banner, const report& so_far)
    {
        return {"", plain(banner + "\n" + render_text(so_far)),
                [banner, &so_far](std::ostream& out) { out << render_provisional_html(banner, render_html(so_far)); }, "",
                nullptr};
    }

    view trace_view(const report& r)
    {
        return {"", nullptr, nullptr, "application/json",
                [&r](std::ostream& out) { out << render_trace(r).dump(1, ' ', false, json::error_handler_t::replace) << "\n"; }};
    }

    view comparison_view(const comparison& c, const report* before, const report* after)
    {
        return {"warp-probe compare", [&c](std::ostream& out) { out << render_compare_text(c); },
                [&c, before, after](std::ostream& out) { out << render_compare_html(c, before, after); }, comparison_mime,
                json_writer(comparison_to_json(c))};
    }

    view budget_view(const std::vector<budget_result>& results, const std::string& title, bool met, const std::string& asked)
    {
        return {title, plain(render_budget_text(results, title)),
                [html = render_budget_html(results, title)](std::ostream& out) { out << html; }, expectation_mime,
                json_writer({{"met", met}, {"expect", asked}})};
    }

    view warmup_view(const warmup_plan& plan, const std::string& title)
    {
        // A plan written to no file (a notebook's) is shown: it is what the runtime would read.
        const bool plan_shown = plan.script_path.empty() && !plan.plan_text.empty();
        const std::string text = render_warmup_text(plan);
        std::string html = render_preformatted_html(text);
        if (plan_shown)
        {
            html += "<details><summary>warp_warmup.json (the plan; the runtime is the same for every plan)</summary>"
                    + render_preformatted_html(plan.plan_text) + "</details>";
        }
        return {title, plain(plan_shown ? text + "\n" + plan.plan_text : text),
                [html = std::move(html)](std::ostream& out) { out << html; }, warmup_plan_mime, json_writer(json(plan))};
    }

    view history_list_view(const std::vector<history_run>& runs, const std::string& store)
    {
        return {"warp-probe history", plain(render_history_list(runs, store)),
                [html = render_history_list_html(runs, store)](std::ostream& out) { out << html; }, "", nullptr};
    }

    view session_runs_view(const std::vector<std::pair<std::string, report>>& runs, const std::string& preface)
    {
        return {"this notebook's runs", plain(preface + render_session_runs(runs)),
                [html = render_session_runs_html(runs)](std::ostream& out) { out << html; }, "", nullptr};
    }

    view text_view(std::string text)
    {
        return {"", plain(text), preformatted(text), "", nullptr};
    }
}
