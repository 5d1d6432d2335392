"""CS-2 with several causes in one function: the driver's compute cache turned off, a per-run
kernel cache directory (timestamped, removed at exit), cache_kernels off and a cache clear."""
import atexit
import os
import shutil
import tempfile
import time

import warp as wp


@wp.kernel
def relax(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * 0.5 + 1.0


def setup_caches():
    os.environ["CUDA_CACHE_DISABLE"] = "1"
    run_dir = tempfile.mkdtemp(prefix=f"warp-cache-{time.time_ns()}-")
    atexit.register(shutil.rmtree, run_dir, True)
    wp.config.kernel_cache_dir = run_dir
    wp.config.cache_kernels = False
    wp.init()
    wp.clear_kernel_cache()


setup_caches()
a = wp.zeros(1024, dtype=float)
for _ in range(3):
    wp.launch(relax, dim=a.shape[0], inputs=[a])
wp.synchronize()
print("ok", a.numpy()[0])
