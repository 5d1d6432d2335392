# Fails after its first launch.
import warp as wp


@wp.kernel
def k(a: wp.array(dtype=float)):
    a[wp.tid()] = 1.0


a = wp.zeros(4, dtype=float)
wp.launch(k, dim=4, inputs=[a])
raise SystemExit("target failed on purpose")
