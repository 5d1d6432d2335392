// A budget's results (measure --budget, check, %%warp_probe --expect) as text and HTML: one
// line per limit, ok or OVER, with the module that broke it.
#ifndef XWARP_RENDER_BUDGET_LINES_HPP
#define XWARP_RENDER_BUDGET_LINES_HPP

#include <string>
#include <vector>

#include "xwarp/model/budget.hpp"

namespace xwarp
{
    // `title`: "Budget" for the CI gate, "Expectation" for an exercise.
    std::string render_budget_text(const std::vector<budget_result>& results, const std::string& title);
    std::string render_budget_html(const std::vector<budget_result>& results, const std::string& title);
}

#endif
