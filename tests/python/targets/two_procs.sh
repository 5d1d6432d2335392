#!/bin/sh
# A shell script that starts two Python processes, each compiling its own module.
set -e
"$PYTHON" clean.py
"$PYTHON" late_kernel_fixed.py
