#include "xwarp/model/format.hpp"

#include <charconv>
#include <cstdint>
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

    std::size_t first_invalid_utf8(std::string_view text)
    {
        for (std::size_t i = 0; i < text.size();)
        {
            const auto b = static_cast<unsigned char>(text[i]);
            const std::size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
            if (n == 0 || i + n > text.size())
            {
                return i;
            }
            std::uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1Fu) : n == 3 ? (b & 0x0Fu) : (b & 0x07u);
            for (std::size_t k = 1; k < n; ++k)
            {
                const auto c = static_cast<unsigned char>(text[i + k]);
                if ((c >> 6) != 0x2)
                {
                    return i;
                }
                cp = (cp << 6) | (c & 0x3Fu);
            }
            const bool overlong = (n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
            if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            {
                return i;
            }
            i += n;
        }
        return text.size();
    }
}

#include "xwarp/model/results.hpp"

namespace xwarp
{
    std::string whatif_result::conditions_words() const
    {
        std::string words;
        if (busy_cpus_baseline && busy_cpus_replay)
        {
            words = "conditions: other processes kept " + format_fixed(*busy_cpus_baseline, 1)
                    + " CPUs busy during the baseline's cold passes and " + format_fixed(*busy_cpus_replay, 1)
                    + " during the replay's (medians)";
            if (std::fabs(*busy_cpus_replay - *busy_cpus_baseline) >= 1.0)
            {
                words += ": unlike loads, which move every clock (a quieter machine settles it)";
            }
        }
        if (!caches_not_empty_at_start.empty())
        {
            std::string kinds;
            for (const auto& k : caches_not_empty_at_start)
            {
                kinds += (kinds.empty() ? "" : ", ") + k;
            }
            words += (words.empty() ? "conditions: " : "; ") + std::string("the replay's cold passes started with the ") + kinds
                     + " not empty";
        }
        return words;
    }
}
