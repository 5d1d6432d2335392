# lto-rebuilt: two modules use the same tile GEMM shape (the same MathDx LTO artifacts), and
# wp.clear_lto_cache() between their first launches throws the first module's artifacts away,
# so the second module builds them again.
import warp as wp

TILE = 32


def make_gemm(name):
    @wp.kernel(module=name)
    def gemm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
        i, j = wp.tid()
        a = wp.tile_load(A, shape=(TILE, TILE))
        b = wp.tile_load(B, shape=(TILE, TILE))
        c = wp.tile_matmul(a, b)
        wp.tile_store(C, c)

    return gemm


first = make_gemm("gemm_first")
second = make_gemm("gemm_second")
A = wp.ones((TILE, TILE), dtype=float, device="cuda:0")
B = wp.ones((TILE, TILE), dtype=float, device="cuda:0")
C = wp.zeros((TILE, TILE), dtype=float, device="cuda:0")
wp.launch_tiled(first, dim=(1, 1), inputs=[A, B, C], block_dim=64)
wp.synchronize()
wp.clear_lto_cache()
wp.launch_tiled(second, dim=(1, 1), inputs=[A, B, C], block_dim=64)
wp.synchronize()
print(float(C.numpy()[0, 0]))
