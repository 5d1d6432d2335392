# The GPU lesson's CS-7 cell with MathDx off: the same GEMM without LTO artifacts.
# --- the lesson's cell (notebooks/make_notebooks.py reads from here on) ---
import warp as wp

wp.config.enable_mathdx_gemm = False

TILE = 32

@wp.kernel
def gemm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    i, j = wp.tid()
    a = wp.tile_load(A, shape=(TILE, TILE))
    b = wp.tile_load(B, shape=(TILE, TILE))
    c = wp.tile_matmul(a, b)
    wp.tile_store(C, c)

A = wp.ones((TILE, TILE), dtype=float, device="cuda:0")
B = wp.ones((TILE, TILE), dtype=float, device="cuda:0")
C = wp.zeros((TILE, TILE), dtype=float, device="cuda:0")
wp.launch_tiled(gemm, dim=(1, 1), inputs=[A, B, C], block_dim=64)
wp.synchronize()
