// Number and time formatting shared by analysis (its sentences) and the renderers.
#ifndef XWARP_MODEL_FORMAT_HPP
#define XWARP_MODEL_FORMAT_HPP

#include <string>

namespace xwarp
{
    std::string format_fixed(double value, int precision);  // "3.14"
    std::string format_ms(double ms);                        // "812 ms", "3.52 s", "2 min 5 s"
    std::string format_bytes(double bytes);                  // "19.4 KB"
    std::string utc_timestamp();                             // "2026-12-02T12:00:00Z", now
}

#endif
