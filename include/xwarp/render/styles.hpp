// Every inline style the HTML renderers use, in one place (pages carry no <style>: notebook
// sanitizers drop it), and the few helpers that wrap text in them. Colours with transparency
// read on light and dark backgrounds alike; text keeps the page's own colour (inherit).
#ifndef XWARP_RENDER_STYLES_HPP
#define XWARP_RENDER_STYLES_HPP

#include <string>

namespace xwarp::style
{
    inline constexpr const char* root = "font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:13px;"
                                        "line-height:1.45;color:inherit;max-width:1100px;";
    inline constexpr const char* heading = "font-size:14px;font-weight:600;margin:14px 0 6px 0;";
    inline constexpr const char* table = "border-collapse:collapse;margin:4px 0 8px 0;font-variant-numeric:tabular-nums;";
    inline constexpr const char* th = "text-align:left;padding:3px 10px 3px 0;border-bottom:1px solid rgba(128,128,128,0.5);"
                                      "font-weight:600;white-space:nowrap;";
    inline constexpr const char* td = "padding:3px 10px 3px 0;border-bottom:1px solid rgba(128,128,128,0.2);vertical-align:top;";
    inline constexpr const char* num = "padding:3px 10px 3px 0;border-bottom:1px solid rgba(128,128,128,0.2);text-align:right;"
                                       "white-space:nowrap;vertical-align:top;";
    inline constexpr const char* mono = "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;";
    inline constexpr const char* muted = "opacity:0.75;";
    inline constexpr const char* box = "border:1px solid rgba(128,128,128,0.35);border-radius:6px;padding:8px 10px;margin:6px 0;";
    inline constexpr const char* pre = "margin:0;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;"
                                       "white-space:pre-wrap;";
    inline constexpr const char* small_text = "font-size:13px;";
    inline constexpr const char* strong = "font-weight:600;";

    // RGB triples the badges and bars are drawn in.
    inline constexpr const char* good_rgb = "39,174,96";
    inline constexpr const char* bad_rgb = "231,76,60";
    inline constexpr const char* warn_rgb = "230,126,34";
    inline constexpr const char* info_rgb = "52,152,219";
    inline constexpr const char* odd_rgb = "142,68,173";
    inline constexpr const char* grey_rgb = "128,128,128";

    // The helpers take text that is already HTML (escaped by the caller).
    inline std::string td_html(const std::string& inner, const char* css = td)
    {
        return std::string("<td style=\"") + css + "\">" + inner + "</td>";
    }
    inline std::string th_html(const std::string& inner)
    {
        return std::string("<th style=\"") + th + "\">" + inner + "</th>";
    }
    inline std::string badge_html(const std::string& escaped_text, const std::string& rgb)
    {
        return "<span style=\"display:inline-block;padding:1px 7px;border-radius:9px;font-size:11px;font-weight:600;"
               "background:rgba(" + rgb + ",0.18);border:1px solid rgba(" + rgb + ",0.6);\">" + escaped_text + "</span>";
    }
}

#endif
