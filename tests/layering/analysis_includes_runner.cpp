// Must NOT compile: analysis reads the model and never the runner (see CMakeLists.txt, layers).
// tests/layering/check_violation.cmake builds this file and expects the include to be refused.
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/engine/runner/runner.hpp"

int xwarp_layer_violation_probe()
{
    return 0;
}
