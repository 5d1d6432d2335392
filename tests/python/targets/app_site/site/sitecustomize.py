# The application's own sitecustomize: the probe's shim must still let it run.
import os

os.environ["APP_SITECUSTOMIZE_RAN"] = "1"
