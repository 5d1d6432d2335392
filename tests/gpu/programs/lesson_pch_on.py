# The GPU lesson's CS-12 cell, as a script: precompiled headers on (the default).
import warp as wp

@wp.kernel
def scale(a: wp.array(dtype=float)):
    a[wp.tid()] *= 2.0

@wp.kernel
def shift(a: wp.array(dtype=float)):
    a[wp.tid()] += 1.0

a = wp.zeros(1 << 16, dtype=float, device="cuda:0")

# --- the lesson's cell (notebooks/make_notebooks.py reads from here on) ---
wp.launch(scale, dim=a.shape, inputs=[a])
wp.launch(shift, dim=a.shape, inputs=[a])
wp.synchronize()
