// Where an installed (or built) xwarp keeps its data files: the shim the probe injects and the
// mechanism guide the HTML report quotes, the lessons' exercises. One small unit, so that a front finds them without
// reaching into the runner.
#ifndef XWARP_INSTALL_LAYOUT_HPP
#define XWARP_INSTALL_LAYOUT_HPP

#include <string>

namespace xwarp
{
    // $XWARP_SHIM_DIR, else <exe dir>/../share/xwarp/shim, else the build tree's. Empty when
    // none holds sitecustomize.py and the xwarp_shim package.
    std::string default_shim_dir();

    // The text of the installed mechanism guide (share/xwarp/references/mechanisms.md, found
    // beside the shim); empty when it is not installed.
    std::string installed_guide_text();

    // The lessons' exercises as shipped (share/xwarp/exercises.json, beside the shim: each
    // exercise's limits and broken form, written by notebooks/make_notebooks.py); empty when
    // it is not installed.
    std::string installed_exercises_text();
}

#endif
