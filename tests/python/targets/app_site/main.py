# Needs its own sitecustomize to have run and its lib/ on PYTHONPATH.
import os
import sys

if os.environ.get("APP_SITECUSTOMIZE_RAN") != "1":
    sys.exit("the application's sitecustomize did not run")

import app_helpers  # noqa: E402  (found through PYTHONPATH)
import warp as wp  # noqa: E402

a = wp.ones(8, dtype=float)
wp.launch(app_helpers.double, dim=8, inputs=[a])
print("app", float(a.numpy().sum()))
