// Text from a report that reaches a terminal or a page: module and file names, messages and
// the command's output come from the measured program and the report file, so a renderer
// never prints them raw. Control characters (an escape sequence that retitles or clears the
// terminal, a newline that breaks a table row) and bidirectional controls (U+202E reverses
// the text after it) are shown as visible escapes; bytes that are not UTF-8 too.
#ifndef XWARP_RENDER_PRINTABLE_HPP
#define XWARP_RENDER_PRINTABLE_HPP

#include <string>
#include <string_view>

#include "xwarp/model/comparison.hpp"
#include "xwarp/model/report.hpp"

namespace xwarp
{
    // One line: every control character escaped ("\n", "\x1b", "\u202e").
    std::string one_line(std::string_view text);

    // one_line(text) added to out: a copy only where a byte needs its escape.
    void append_one_line(std::string& out, std::string_view text);

    // A block of lines (a stderr tail): newlines and tabs kept, everything else escaped.
    std::string printable_block(std::string_view text);
    // printable_block of a page just made, taken over: given back as it is, not copied, when
    // nothing in it needs an escape (a 10,000-identity report's text page is 2 MB). Its texts
    // from a report were escaped as they went in, so its backslashes are escapes: kept as they are.
    std::string printable_page(std::string page);

    // A long name shortened for a heading ("first...last (10000 characters)"); the full name
    // is shown once elsewhere (the identities table).
    std::string elide(std::string_view text, std::size_t max_chars = 96);

    // Copies whose every string from the measured program or the report file is one_line()
    // (or printable_block() for output tails): what the text renderer prints.
    report printable_copy(const report& r);
    // The same with only the first `findings_kept` findings and, without tables, none of the
    // summary's identities, rebuilt groups, module totals, launches per kernel and timeline
    // spans: the text renderer prints those (and the findings it lists on one line each) from
    // the report a row at a time, each name through one_line() (a module name beyond 96
    // characters elided but in the identities table), and a copy of them was most of its
    // memory on a large report. The text report prints no module totals and no finding's
    // cause: without tables, the findings kept have none.
    report printable_outline(const report& r, std::size_t findings_kept, bool with_tables);
    // A comparison's copy likewise, without its hash receipts: the text renderer prints each
    // receipt's module, device and hash prefixes from the comparison through one_line(). A copy
    // of them was a third of the text page's time at 50,000 modules.
    comparison_outline printable_outline(const comparison& c);
}

#endif
