# CS-4: four one-kernel modules, one Python module each: four builds.
import mod_blur
import mod_clamp
import mod_invert
import mod_sharpen
import warp as wp

a = wp.ones(64, dtype=float)
for k in (mod_blur.blur, mod_sharpen.sharpen, mod_clamp.clamp01, mod_invert.invert):
    wp.launch(k, dim=64, inputs=[a])
print(float(a.numpy().sum()))
