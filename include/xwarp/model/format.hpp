// Number and time formatting shared by analysis (its sentences) and the renderers.
#ifndef XWARP_MODEL_FORMAT_HPP
#define XWARP_MODEL_FORMAT_HPP

#include <string>
#include <string_view>

namespace xwarp
{
    std::string format_fixed(double value, int precision);  // "3.14"
    std::string format_ms(double ms);                        // "812 ms", "3.52 s", "2 min 5 s"
    std::string format_bytes(double bytes);                  // "19.4 KB"
    std::string utc_timestamp();                             // "2026-12-02T12:00:00Z", now

    // The offset of the first byte that does not begin or continue a UTF-8 sequence (an
    // overlong form and a surrogate count as not), or text.size() when every byte does.
    std::size_t first_invalid_utf8(std::string_view text);
    inline bool valid_utf8(std::string_view text) { return first_invalid_utf8(text) == text.size(); }
}

#endif
