// What the HTML pages share (src/render/html_*.cpp): small builders of escaped markup, the
// SVG drawings, and how many rows a page shows. Internal to the render layer.
#ifndef XWARP_RENDER_HTML_PARTS_HPP
#define XWARP_RENDER_HTML_PARTS_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "xwarp/model/history.hpp"
#include "xwarp/model/report.hpp"
#include "xwarp/render/styles.hpp"

namespace xwarp::html_parts
{
    // Rows a report shows before it summarises: the HTML stays small (a few MB at most)
    // whatever the run's size; the JSON keeps everything.
    inline constexpr std::size_t max_identity_rows = 100;
    inline constexpr std::size_t max_module_rows = 500;
    inline constexpr std::size_t max_launch_rows = 200;
    inline constexpr std::size_t max_group_members = 25;  // a module that churned 1,000 times: its heaviest 25

    // ---- markup (html_parts.cpp) ------------------------------------------------------------
    std::string badge(const std::string& text, const std::string& rgb);
    std::string status_rgb(load_status status);
    std::string verdict_rgb(verdict v);
    std::string td(const std::string& inner, const char* css = style::td);
    std::string th(const std::string& inner);
    // A name as the page shows it: at most 120 characters (a cut on a UTF-8 boundary, marked).
    std::string capped(const std::string& text);
    // A name from the measured program, isolated (<bdi>) and monospaced.
    std::string mono(const std::string& text);
    // "... and N more" after a list cut at `shown` of `total`.
    std::string more_rows(std::size_t total, std::size_t shown, const char* what = "more");
    std::string stat_cell(const stat& s);
    std::string opt_int(const std::optional<double>& v);
    std::string heading(const std::string& title, const std::string& note = "");

    // ---- drawings (html_svg.cpp): measured values scaled to pixels, nothing computed ---------
    // The bar chart of module build time.
    void chart(std::ostream& o, const std::vector<identity>& ids);
    // The identity map: per module, each identity it built and why the next was needed.
    void identity_map_svg(std::ostream& o, const summary& s);
    // The build timeline: one lane per process and thread.
    void timeline_svg(std::ostream& o, const build_timeline& t);
    // A sparkline of a series, this run's point ringed.
    std::string sparkline(const std::vector<trend_point>& points, std::int64_t this_run);
}

#endif
