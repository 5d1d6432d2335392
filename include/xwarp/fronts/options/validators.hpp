// Option checks the fronts share (CLI and magics), with messages a user can act on: the
// range in words and the value given, never CLI11's numeric limits.
#ifndef XWARP_FRONT_OPTIONS_VALIDATORS_HPP
#define XWARP_FRONT_OPTIONS_VALIDATORS_HPP

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

namespace xwarp
{
    inline CLI::Validator whole_number(long lo, long hi)
    {
        const std::string range = "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
        return CLI::Validator(
            [lo, hi, range](std::string& text) -> std::string
            {
                errno = 0;
                char* end = nullptr;
                const long v = std::strtol(text.c_str(), &end, 10);
                if (text.empty() || *end != '\0' || errno != 0 || v < lo || v > hi)
                {
                    return "expected " + range + ", got '" + text + "'";
                }
                return {};
            },
            "INT " + std::to_string(lo) + ".." + std::to_string(hi));
    }

    // A sample count, or the word auto (sample until the measurement settles).
    inline CLI::Validator sample_count(long lo, long hi)
    {
        const CLI::Validator number = whole_number(lo, hi);
        return CLI::Validator(
            [number, lo, hi](std::string& text) -> std::string
            {
                if (text == "auto")
                {
                    return {};
                }
                std::string copy = text;
                if (number(copy).empty())
                {
                    return {};
                }
                return "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi)
                       + " or auto, got '" + text + "'";
            },
            "INT|auto");
    }

    // A duration in seconds: finite, above zero, at most a week.
    inline CLI::Validator positive_seconds()
    {
        return CLI::Validator(
            [](std::string& text) -> std::string
            {
                errno = 0;
                char* end = nullptr;
                const double v = std::strtod(text.c_str(), &end);
                if (text.empty() || *end != '\0' || errno != 0 || !std::isfinite(v) || v <= 0.0 || v > 604800.0)
                {
                    return "expected seconds above 0 and at most 604800 (a week), got '" + text + "'";
                }
                return {};
            },
            "SECONDS");
    }
}

#endif
