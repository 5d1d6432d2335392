#include "xwarp/model/format.hpp"

#include <charconv>
#include <cmath>
#include <ctime>

namespace xwarp
{
    std::string format_fixed(double value, int precision)
    {
        if (!std::isfinite(value))
        {
            return "n/a";
        }
        // std::to_chars: what printf's %.*f / %.2e write, without a stream per figure (a report
        // formats tens of thousands) and whatever locale the embedding process set
        char text[64];
        std::to_chars_result written;
        if (std::fabs(value) >= 1e12)
        {
            // no figure this tool measures is that large: a number from a damaged report is
            // shown short, never as hundreds of digits
            written = std::to_chars(text, text + sizeof text, value, std::chars_format::scientific, 2);
        }
        else
        {
            written = std::to_chars(text, text + sizeof text, value, std::chars_format::fixed, precision);
        }
        return written.ec == std::errc() ? std::string(text, written.ptr) : std::string("n/a");
    }

    std::string format_ms(double ms)
    {
        const double a = std::fabs(ms);
        if (!std::isfinite(ms))
        {
            return "n/a";
        }
        if (a >= 1e10)  // over 115 days: not a build time; short and plain
        {
            return format_fixed(ms, 0) + " ms";
        }
        if (a < 1.0)
        {
            return format_fixed(ms, 2) + " ms";
        }
        if (a < 1000.0)
        {
            return format_fixed(ms, 0) + " ms";
        }
        if (a < 120000.0)
        {
            return format_fixed(ms / 1000.0, 2) + " s";
        }
        const double total_s = ms / 1000.0;
        const long minutes = static_cast<long>(total_s / 60.0);
        return std::to_string(minutes) + " min " + format_fixed(total_s - 60.0 * static_cast<double>(minutes), 0) + " s";
    }

    std::string format_bytes(double bytes)
    {
        if (!std::isfinite(bytes) || bytes >= 1e15)
        {
            return format_fixed(bytes, 0) + " B";
        }
        if (bytes < 1024.0)
        {
            return format_fixed(bytes, 0) + " B";
        }
        if (bytes < 1024.0 * 1024.0)
        {
            return format_fixed(bytes / 1024.0, 1) + " KB";
        }
        return format_fixed(bytes / (1024.0 * 1024.0), 1) + " MB";
    }

    std::string utc_timestamp()
    {
        std::time_t t = std::time(nullptr);
        std::tm tm{};
        gmtime_r(&t, &tm);
        char buf[32];
        std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
        return buf;
    }
}
