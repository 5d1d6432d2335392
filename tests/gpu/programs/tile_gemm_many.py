# The what-if table's tile-GEMM program: two modules, each a tile GEMM of its own shape (its own
# MathDx LTO artifacts), both defined up front, forward only, built one after another at their
# first launches. It leaves enable_backward at Warp's default, as most programs do.
import warp as wp


def make_gemm(name, tile):
    @wp.kernel(module=name)
    def gemm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
        i, j = wp.tid()
        a = wp.tile_load(A, shape=(tile, tile))
        b = wp.tile_load(B, shape=(tile, tile))
        c = wp.tile_matmul(a, b)
        wp.tile_store(C, c)

    return gemm


gemms = [(make_gemm(name, tile), tile) for name, tile in (("gemm_16", 16), ("gemm_32", 32))]
for gemm, tile in gemms:
    A = wp.ones((tile, tile), dtype=float, device="cuda:0")
    B = wp.ones((tile, tile), dtype=float, device="cuda:0")
    C = wp.zeros((tile, tile), dtype=float, device="cuda:0")
    for _ in range(20):  # steady-state launches for the mathdx-off comparison
        wp.launch_tiled(gemm, dim=(1, 1), inputs=[A, B, C], block_dim=64)
    wp.synchronize()
    print(gemm.module.name, float(C.numpy()[0, 0]))
