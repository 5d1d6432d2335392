"""What the lessons say about Warp 1.19, held against Warp: each statement a teacher's reading
corrected is checked here against a run or against what Warp's own code does (a snippet run with
a private kernel cache), and against the lesson's text, so that neither drifts. Claims about a
lesson's own run are checked where it runs (test_teaching_notebooks.py's claims)."""

import json
import re
import subprocess
import textwrap

import nbformat
import pytest

from conftest import PROBE, ROOT, TARGETS, VENV_PYTHON

NB = ROOT / "notebooks"


def prose(name):
    nb = nbformat.read(NB / f"{name}.ipynb", as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def code_cells(name):
    nb = nbformat.read(NB / f"{name}.ipynb", as_version=4)
    return [c.source for c in nb.cells if c.cell_type == "code"]


def warp_snippet(code, tmp_path):
    """Runs `code` with Warp in a fresh interpreter whose kernel cache is private; its output."""
    header = f"import warp as wp\nwp.config.kernel_cache_dir = {str(tmp_path / 'cache')!r}\n"
    script = tmp_path / "snippet.py"  # a file: Warp reads a kernel's source from it
    script.write_text(header + textwrap.dedent(code))
    done = subprocess.run([str(VENV_PYTHON), str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout + done.stderr


def test_cs5_shows_on_the_cpu_with_cpu_blocks_and_the_gpu_lesson_says_so(tmp_path):
    out = tmp_path / "r.json"
    done = subprocess.run([str(PROBE), "measure", "--quiet", "--samples", "1", "--history", "off", "--json", str(out),
                           "--", str(VENV_PYTHON), "cpu_blocks.py"], cwd=TARGETS, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert "CS-5" in {f["mechanism"] for f in report["findings"]}
    assert {i["block_dim"] for i in report["summary"]["identities"]} == {64, 128}
    gpu = prose("gpu_mechanisms")
    assert "CS-5 and CS-7 only show on CUDA" not in gpu
    assert "`wp.config.enable_cpu_blocks = True`" in gpu and "cs5_block_dims_cpu.ipynb" in gpu


def test_nvrtc_keeps_its_own_precompiled_headers_from_cuda_13_as_the_gpu_lesson_says(tmp_path):
    out = warp_snippet("""
        import threading
        wp.init()
        rt = wp._src.context.runtime
        rt.toolkit_version = (13, 0)
        print("nvrtc 13:", rt.get_nvrtc_pch_dir())
        rt.toolkit_version = (12, 8)
        print("nvrtc 12 per thread:", rt.get_nvrtc_pch_dir() is not None)
        dirs = [rt.get_clang_pch_dir()]
        t = threading.Thread(target=lambda: dirs.append(rt.get_clang_pch_dir()))
        t.start(); t.join()
        print("clang per thread:", dirs[0] != dirs[1])
    """, tmp_path)
    assert "nvrtc 13: None" in out and "nvrtc 12 per thread: True" in out and "clang per thread: True" in out
    gpu = prose("gpu_mechanisms")
    assert "NVRTC alike" not in gpu
    assert "from 13.0 on it passes NVRTC only `-pch`" in gpu


def test_the_recorded_gpu_programs_hold_the_setups_kernels_where_the_lesson_says(tmp_path):
    programs = ROOT / "tests" / "gpu" / "programs"
    with_setup = {"lesson_two_block_dims", "lesson_one_block_dim", "lesson_pch_on", "lesson_pch_off"}
    without = {"lesson_tiles", "lesson_tiles_no_mathdx", "ptx_module"}
    recorded = {p.stem for p in (NB / "recorded" / "h200").glob("*.json")}
    assert recorded == with_setup | without
    cells = "\n".join(code_cells("gpu_mechanisms"))
    mark = "# --- the lesson's cell (notebooks/make_notebooks.py reads from here on) ---\n"
    for name in recorded:
        source = (programs / f"{name}.py").read_text()
        has = "def scale" in source and "def shift" in source
        assert has == (name in with_setup), name
        # one source: the lesson shows each recorded program from its cell mark on
        before, cell = source.split(mark)
        assert cell.strip() in cells, name
        if name in with_setup:
            assert "def scale" in before and "def scale" not in cell, name
    gpu = prose("gpu_mechanisms")
    assert "each cell and the\nsetup's definitions run as one script" not in gpu
    assert "the tile and PTX cells without them" in gpu


def test_a_unique_module_is_hashed_at_decoration_so_a_later_global_does_not_reach_it(tmp_path):
    out = warp_snippet("""
        @wp.kernel(module="unique")
        def uk(a: wp.array(dtype=float)):
            a[wp.tid()] = 1.0

        @wp.kernel
        def nk(a: wp.array(dtype=float)):
            a[wp.tid()] = 2.0

        print("hashed at decoration:", sorted(uk.module.hashers))
        unique_before = uk.module.get_module_hash(256)
        named_before = nk.module.get_module_hash(256)
        wp.config.mode = "debug"
        nk.module.mark_modified()
        print("unique kept its hash:", uk.module.get_module_hash(256) == unique_before)
        print("named module rehashed:", nk.module.get_module_hash(256) != named_before)
    """, tmp_path)
    assert "hashed at decoration: [256]" in out
    assert "unique kept its hash: True" in out and "named module rehashed: True" in out
    guide = (ROOT / "references" / "mechanisms.md").read_text()
    assert 'Not for `module="unique"` kernels: their module is hashed when the\nkernel is decorated' in guide
    assert "Except for `module=\"unique\"` kernels" in (ROOT / "references" / "cheatsheet.md").read_text()


def test_the_block_dim_is_hashed_on_the_cpu_and_the_device_is_not(tmp_path):
    out = warp_snippet("""
        import inspect

        @wp.kernel
        def k(a: wp.array(dtype=float)):
            a[wp.tid()] = 1.0

        m = k.module
        print("block_dim hashed:", m.get_module_hash(1) != m.get_module_hash(64))
        print("hash inputs:", list(inspect.signature(m.get_module_hash).parameters))
    """, tmp_path)
    assert "block_dim hashed: True" in out and "hash inputs: ['block_dim']" in out
    glossary = (NB / "glossary.md").read_text()
    assert "The device itself is not hashed, but its block_dim is" in glossary
    assert "on the CPU too: 1 whatever a launch asks" in " ".join(glossary.split())


def test_a_tape_through_a_kernel_without_backward_gives_partial_gradients_and_warns_at_every_backward(tmp_path):
    out = warp_snippet("""
        @wp.kernel(enable_backward=False)
        def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
            y[wp.tid()] = x[wp.tid()] * x[wp.tid()]

        @wp.kernel
        def double(x: wp.array(dtype=float), z: wp.array(dtype=float)):
            z[wp.tid()] = 2.0 * x[wp.tid()] + z[wp.tid()]

        x = wp.array([1.0, 2.0, 3.0], dtype=float, requires_grad=True)
        y = wp.zeros(3, dtype=float, requires_grad=True)
        z = wp.zeros(3, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(square, dim=3, inputs=[x], outputs=[y])
            wp.launch(double, dim=3, inputs=[x], outputs=[z])
            wp.launch(double, dim=3, inputs=[y], outputs=[z])
        for _ in range(2):
            tape.zero()
            tape.backward(grads={z: wp.ones(3, dtype=float)})
        print("x.grad", x.grad.numpy().tolist())
    """, tmp_path)
    # the true gradient of 2x + 2x^2 is 2 + 4x: the skipped kernel's part is missing, the rest is there
    assert "x.grad [2.0, 2.0, 2.0]" in out
    assert out.count("may produce incorrect gradients") == 2, "one warning per recorded launch per backward()"
    cs10 = nbformat.read(NB / "cs10_unused_backward.ipynb", as_version=4)
    text = "\n".join(c.source for c in cs10.cells if c.cell_type == "markdown")
    assert "a tape's gradients are zeros" not in text
    assert "wrong, not zeros" in text and "for every recorded launch of such a kernel at every `backward()`" in text


def test_the_noise_band_is_pointed_to_where_it_is_defined():
    overview = prose("overview")
    assert "the what-if lesson\nsays how it is measured" not in overview
    assert "[glossary](glossary.md) says how it is measured" in overview
    assert re.search(r"\*\*noise band\*\* —", (NB / "glossary.md").read_text())


def test_the_primer_says_a_warm_cache_still_loads_each_identity():
    primer = prose("primer")
    assert "churn costs nothing" not in primer
    assert "it still **loads two identities** from the cache" in primer  # held against the run: its claims


@pytest.mark.quick
def test_registering_overloads_is_not_shown_with_an_assignment_the_text_says_is_unneeded():
    for path in NB.glob("*.ipynb"):
        for code in code_cells(path.stem):
            assert not re.search(r"^\w+\s*=\s*wp\.overload\(", code, re.M), path.name


@pytest.mark.quick
def test_the_whatif_lesson_measures_a_program_no_other_lesson_probes():
    def probe_bodies(name):
        return {c.split("\n", 1)[1].strip() for c in code_cells(name) if c.startswith("%%warp_probe")}

    whatif = probe_bodies("whatif")
    for path in NB.glob("*.ipynb"):
        if path.stem != "whatif":
            assert not whatif & probe_bodies(path.stem), path.name


def all_prose():
    return "\n".join(prose(p.stem) for p in sorted(NB.glob("*.ipynb"))) + "\n" + (NB / "glossary.md").read_text()


def test_the_cpu_precompiled_header_is_written_per_block_dim_as_the_lessons_now_say(tmp_path):
    out = warp_snippet("""
        import os
        wp.config.enable_cpu_blocks = True
        wp.init()

        @wp.kernel
        def k(a: wp.array(dtype=float)):
            a[wp.tid()] = a[wp.tid()] + 1.0

        a = wp.zeros(128, dtype=float)
        wp.launch(k, dim=128, inputs=[a], block_dim=64)
        wp.launch(k, dim=128, inputs=[a], block_dim=128)
        wp.synchronize()
        folder = wp._src.context.runtime.get_clang_pch_dir()
        names = sorted(f for _, _, fs in os.walk(folder) for f in fs if f.endswith(".pch"))
        print("headers:", len(names), " ".join(n.split("_")[1] for n in names))
    """, tmp_path)
    assert "headers: 2 bd128 bd64" in out, out
    text = all_prose()
    assert "compiled once and reused by every later build" not in text
    assert "`builtin_bd64_...pch`" in prose("overview") and "builtin_bd64_...pch" in (NB / "glossary.md").read_text()


def test_compile_time_trace_writes_nothing_for_a_cpu_build_and_the_primer_says_cuda(tmp_path):
    out = warp_snippet("""
        import os
        wp.config.compile_time_trace = True
        wp.init()

        @wp.kernel
        def k(a: wp.array(dtype=float)):
            a[wp.tid()] = 1.0

        wp.launch(k, dim=4, inputs=[wp.zeros(4, dtype=float)])
        wp.synchronize()
        files = [f for _, _, fs in os.walk(wp.config.kernel_cache_dir) for f in fs]
        print("trace files:", [f for f in files if "trace" in f.lower()], "built:", any(f.endswith(".o") for f in files))
    """, tmp_path)
    assert "trace files: [] built: True" in out, out
    assert "writes a trace of each CUDA build's phases (NVRTC's, CUDA toolkit 12.8 or later; a CPU build" in all_prose()


def test_the_block_dim_is_in_the_hash_so_cpu_and_cuda_are_two_identities(tmp_path):
    out = warp_snippet("""
        wp.init()

        @wp.kernel
        def k(a: wp.array(dtype=float)):
            a[wp.tid()] = 1.0

        m = wp.get_module(k.__module__)
        print("same hash at 1 and 256:", m.get_module_hash(1) == m.get_module_hash(256))
    """, tmp_path)
    assert "same hash at 1 and 256: False" in out, out
    glossary = (NB / "glossary.md").read_text()
    assert "The device is not hashed:" not in glossary
    assert "two hashes, two folders, two\nbuilds" in glossary or "two hashes, two folders, two builds" in glossary
    assert "> the CUDA block_dim, and the generic instances" not in all_prose()


def test_the_gpu_statements_name_their_conditions():
    text = all_prose()
    # PTX compiled at every load only where the driver is older than Warp's toolkit
    assert "a module emitted as PTX, where the\nGPU driver is older than Warp's CUDA toolkit" in text
    # NVRTC's precompiled headers: from 12.8 (none below), per thread up to 13.0
    assert "from 12.8 up to 13.0 (below 12.8 NVRTC has no precompiled headers)" in prose("gpu_mechanisms")


def test_the_lesson_numbers_and_counts_are_the_courses():
    rows = [line for line in (NB / "README.md").read_text().splitlines() if re.match(r"\| \d+ \| \[", line)]
    lessons = {int(r.split("|")[1]): r for r in rows if ".ipynb" in r}
    gpu = next(n for n, r in lessons.items() if "gpu_mechanisms.ipynb" in r)
    assert f"| `pch-off`, `mathdx-off` |" in prose("whatif")
    row = next(line for line in prose("whatif").splitlines() if line.startswith("| `pch-off`, `mathdx-off` |"))
    cpu_blocks = next(n for n, r in lessons.items() if "cs5_block_dims_cpu.ipynb" in r)
    assert row.rstrip().endswith(f"| {cpu_blocks} (`pch-off`), {gpu} |"), row
    notebooks = len(list(NB.glob("*.ipynb")))
    words = {12: "twelve", 13: "thirteen", 14: "fourteen", 15: "fifteen"}
    assert f"the course: {words[notebooks]} notebooks" in (ROOT / "references" / "notebook.md").read_text()


def test_fast_math_changes_only_the_hash_on_the_cpu_and_max_unroll_changes_the_code(tmp_path):
    # Warp's CPU build never passes fast_math to Clang: a late fast_math rebuilds the module from
    # the same source. max_unroll changes the code itself, so the what-if lesson uses it.
    out = warp_snippet("""
        import glob, os

        @wp.func
        def churn(v: wp.vec3, s: float):
            for j in range(6):
                v = v * wp.sin(s + float(j))
            return v

        @wp.kernel
        def k(a: wp.array(dtype=wp.vec3)):
            a[wp.tid()] = churn(a[wp.tid()], 1.0)

        a = wp.zeros(4, dtype=wp.vec3)
        sources = []
        for options in ({}, {"fast_math": True}, {"max_unroll": 2}):
            wp.set_module_options(options)
            wp.launch(k, dim=4, inputs=[a])
            h = k.module.get_module_hash(1).hex()[:7]
            (path,) = glob.glob(os.path.join(wp.config.kernel_cache_dir, "**", f"*{h}*.cpp"), recursive=True)
            sources.append(open(path).read().replace(h, "HASH"))
        print("fast_math same source:", sources[0] == sources[1])
        print("max_unroll same source:", sources[1] == sources[2])
    """, tmp_path)
    assert "fast_math same source: True" in out and "max_unroll same source: False" in out
    whatif = "\n".join(code_cells("whatif"))
    assert "max_unroll" in whatif and "fast_math" not in whatif
    assert "on the CPU\nWarp never passes it to the compiler" in prose("whatif")
    # the capstone's late option is one the CPU compiler gets (optimization_level: Clang's -O)
    capstone = "\n".join(code_cells("capstone"))
    assert "fast_math" not in capstone and '"optimization_level": 3' in capstone


def test_aot_binaries_serve_only_their_variant_and_a_stripped_hash_runs_old_code(tmp_path):
    # the preload lesson's section on Warp's other start-up tools, each statement run on this Warp
    def module(name, factor, block_dim_option):
        option = 'wp.set_module_options({"block_dim": 1})\n' if block_dim_option else ""
        (tmp_path / f"{name}.py").write_text(
            f"import warp as wp\n{option}\n@wp.kernel\ndef scale(a: wp.array(dtype=float)):\n"
            f"    a[wp.tid()] = a[wp.tid()] * {factor}\n")

    def build(name, strip):
        warp_snippet(f"import {name}\nwp.compile_aot_module({name}, device='cpu', module_dir={str(tmp_path / name)!r}, "
                     f"strip_hash={strip})\n", tmp_path)

    def run(name, strip):
        # a kernel cache of its own: whatever it loads comes from the AOT folder or is built here
        return warp_snippet(f"""
            import {name}
            wp.config.kernel_cache_dir = {str(tmp_path / (name + '-run'))!r}
            try:
                wp.load_aot_module({name}, device='cpu', module_dir={str(tmp_path / name)!r}, strip_hash={strip})
            except FileNotFoundError as e:
                print("not found:", e)
                raise SystemExit(0)
            a = wp.ones(4, dtype=float)
            wp.launch({name}.scale, dim=4, inputs=[a], device='cpu')
            print("result", a.numpy()[0], "variants", sorted(k[1] for k in {name}.scale.module.execs))
        """, tmp_path)

    # the module's default block_dim (256) is not the CPU launch's (1): the launch builds again
    module("aot_default", 2.0, False)
    build("aot_default", False)
    out = run("aot_default", False)
    assert "(cached)" in out and "(compiled)" in out and "variants [1, 256]" in out, out
    # with block_dim 1 the AOT binary is the variant the launch uses: nothing is built
    module("aot_cpu", 2.0, True)
    build("aot_cpu", False)
    out = run("aot_cpu", False)
    assert "(compiled)" not in out and "result 2.0 variants [1]" in out, out
    # the kernel changes after the build: with the hash kept the load fails; stripped, old code runs
    module("aot_cpu", 3.0, True)
    assert "not found:" in run("aot_cpu", False)
    module("aot_stripped", 2.0, True)
    build("aot_stripped", True)
    module("aot_stripped", 3.0, True)
    out = run("aot_stripped", True)
    assert "(compiled)" not in out and "result 2.0" in out, out  # 3.0 is what the source says now
    text = " ".join(prose("cs13_serial_builds").split())
    assert "builds it at the module's `block_dim` option (256, a CUDA default) while CPU launches run at block_dim 1" in text
    assert "instead of running old code, which is what `strip_hash=True` does silently" in text


def test_the_lto_cache_is_a_cache_of_its_own_and_the_preload_default_is_serial(tmp_path):
    out = warp_snippet("""
        import os
        wp.init()
        print("max_workers default:", wp.config.load_module_max_workers)
        lto = os.path.join(wp.config.kernel_cache_dir, "lto")
        os.makedirs(lto)
        open(os.path.join(lto, "artifact.ltoir"), "w").close()
        os.makedirs(os.path.join(wp.config.kernel_cache_dir, "wp_module_abc"))
        wp.clear_kernel_cache()
        print("after clear_kernel_cache:", sorted(os.listdir(wp.config.kernel_cache_dir)))
        wp.clear_lto_cache()
        print("after clear_lto_cache:", sorted(os.listdir(wp.config.kernel_cache_dir)))
    """, tmp_path)
    assert "max_workers default: 0" in out, out
    assert "after clear_kernel_cache: ['lto']" in out and "after clear_lto_cache: []" in out, out
    text = " ".join(prose("cs13_serial_builds").split())
    assert "`0` (serial) by default; `None` picks min(CPUs, 4)" in text
    assert "`wp.clear_kernel_cache()` leaves it" in text


def test_a_cpu_launch_that_gives_no_block_dim_runs_at_one_even_with_cpu_blocks_on_and_the_option_is_experimental(tmp_path):
    out = warp_snippet("""
        wp.config.enable_cpu_blocks = True
        wp.init()
        from warp._src.context import _resolve_launch_block_dim
        cpu = wp.get_device("cpu")
        print("none:", _resolve_launch_block_dim(cpu, None), "given 64:", _resolve_launch_block_dim(cpu, 64))
        wp.config.enable_cpu_blocks = False
        print("off, given 64:", _resolve_launch_block_dim(cpu, 64))
        import warp.config, inspect
        print("experimental:", "experimental" in inspect.getsource(warp.config).split("enable_cpu_blocks", 1)[1][:200])
    """, tmp_path)
    assert "none: 1 given 64: 64" in out and "off, given 64: 1" in out and "experimental: True" in out, out
    glossary = " ".join((NB / "glossary.md").read_text().split())
    assert "a CPU launch that gives none runs at 1 even then" in glossary
    assert "the experimental `wp.config.enable_cpu_blocks`" in glossary
    cs5 = " ".join(prose("cs5_block_dims_cpu").split())
    assert "*experimental*" in cs5 and "a launch that gives none still runs at 1" in cs5
    assert "unless `wp.config.enable_cpu_blocks` is on)" not in " ".join(prose("overview").split())
    # the mental-model box of every mechanism lesson: with the default config a launch asking for
    # block_dim=64 runs at 1 ("off, given 64: 1" above), so no lesson says a launch can ask for more
    boxes = 0
    for path in sorted(NB.glob("*.ipynb")):
        text = " ".join(re.sub(r"^> ?", "", prose(path.stem), flags=re.M).split())  # the box is a quote
        assert "1 unless a launch asks for more" not in text, path.name
        boxes += bool(re.search(r"on the CPU always 1, whatever a launch asks, unless the experimental "
                                r"`wp.config.enable_cpu_blocks` is on|the CPU runs 1 whatever a launch asks, unless "
                                r"the experimental `wp.config.enable_cpu_blocks` is on and the launch gives one", text))
    assert boxes >= 12, boxes  # the 11 mechanism lessons' box, and the overview's own


def test_a_cuda_modules_source_begins_with_its_block_dim_as_the_cs5_lesson_now_says(tmp_path):
    out = warp_snippet("""
        from warp._src import codegen
        print("cuda header starts:", codegen.cuda_module_header.lstrip().splitlines()[0])
    """, tmp_path)
    assert "cuda header starts: #define WP_TILE_BLOCK_DIM {block_dim}" in out, out
    cs5 = " ".join(prose("cs5_block_dims_cpu").split())
    assert "there is no such header per block_dim" not in cs5
    assert "`#define WP_TILE_BLOCK_DIM` and its value, before Warp's headers" in cs5
    # the mental model of every lesson: the block_dim, not "the CUDA block_dim"
    for name in ("cs1_kernels_after_load", "cs5_block_dims_cpu", "cs10_unused_backward"):
        assert "the CUDA block_dim" not in " ".join(prose(name).split()), name


def test_cpu_binaries_are_built_for_this_cpu_by_default_as_the_aot_paragraph_says(tmp_path):
    out = warp_snippet("""
        print("default flags:", wp.config.cpu_compiler_flags)
    """, tmp_path)
    assert "default flags: -march=native" in out, out
    text = " ".join(prose("cs13_serial_builds").split())
    assert "`wp.config.cpu_compiler_flags` starts with `-march=native`" in text


def test_warp_emits_ptx_for_a_gpu_its_nvrtc_cannot_target_whatever_the_driver(tmp_path):
    out = warp_snippet("""
        from types import SimpleNamespace
        from warp._src.context import Device
        old_driver = SimpleNamespace(driver_version=(12, 0), toolkit_version=(13, 0))
        new_gpu = SimpleNamespace(is_cpu=False, is_cubin_supported=False, runtime=old_driver)
        known_gpu = SimpleNamespace(is_cpu=False, is_cubin_supported=True, runtime=old_driver)
        print("new gpu, old driver:", Device.get_cuda_output_format(new_gpu))
        print("known gpu, old driver:", Device.get_cuda_output_format(known_gpu))
    """, tmp_path)
    assert "new gpu, old driver: ptx" in out and "known gpu, old driver: cubin" in out, out
    guide = " ".join((ROOT / "references" / "mechanisms.md").read_text().split())
    assert "whenever the NVRTC it carries cannot build a CUBIN for the device's architecture" in guide
    assert "Warp only emits PTX on its own when the driver is new enough" not in guide
    gpu = " ".join(prose("gpu_mechanisms").split())
    assert "On a GPU newer than Warp's NVRTC (`is_cubin_supported` false) Warp emits PTX whatever the driver" in gpu
    assert "(CUBIN whenever the driver is older than its toolkit) removes it;" not in gpu


def test_warp_passes_nvrtc_a_precompiled_header_so_the_cs5_lesson_does_not_call_every_gpu_build_full(tmp_path):
    out = warp_snippet("""
        import inspect
        from warp._src import build
        nvrtc = inspect.signature(build.build_cuda).parameters  # the NVRTC build takes the header's switch and folder
        print("pch passed to nvrtc:", "use_precompiled_headers" in nvrtc and "pch_dir" in nvrtc)
        print("default on:", wp.config.use_precompiled_headers)
    """, tmp_path)
    assert "pch passed to nvrtc: True" in out and "default on: True" in out, out
    cs5 = " ".join(prose("cs5_block_dims_cpu").split())
    assert "every build is a full NVRTC compile" not in cs5
    assert "On a GPU Warp passes NVRTC a precompiled header too (`wp.config.use_precompiled_headers`" in cs5


@pytest.mark.quick
def test_the_own_program_lesson_takes_load_lines_from_the_recorder_and_names_the_tail_it_keeps():
    tail_bytes = re.search(r"output_tail_bytes = (\d+);", (ROOT / "src" / "engine" / "runner" / "runner.cpp").read_text())
    assert tail_bytes, "the runner's output tail constant moved"
    text = " ".join(prose("own_script").split())
    assert "the report keeps what the program printed" not in text
    assert f"keeps only the last {int(tail_bytes.group(1)):,} bytes of what the program printed" in text
    assert any('cold.get("module_loads", [])' in c for c in code_cells("own_script"))


@pytest.mark.quick
def test_the_second_session_and_the_replay_cost_are_said_one_way():
    table = (NB / "README.md").read_text()
    order = re.findall(r"^\| (\d+) \| \[[^]]+\]\((\w+)\.ipynb\)", table, re.M)
    numbered = {name: int(n) for n, name in order}
    second = ["option_not_arrived", "cs2_cache_thrown_away", "module_granularity", "cs10_unused_backward",
              "cs13_serial_builds", "cs5_block_dims_cpu", "gpu_mechanisms", "capstone"]
    assert [numbered[n] for n in second] == sorted(numbered[n] for n in second)
    readme = " ".join(table.split())
    assert ("the import-order trap, CS-2, module granularity (CS-4 and CS-9), CS-10 (with its gradient check), "
            "CS-13, CS-5 on the CPU, the GPU lesson") in readme
    own = " ".join(prose("own_script").split())
    assert "trap](option_not_arrived.ipynb), CS-2, module granularity, CS-10, CS-13, CS-5 on the CPU, the GPU lesson" in own
    # what a replay costs: the lesson's words against the probe's own --help
    done = subprocess.run([str(PROBE), "measure", "--help"], capture_output=True, text=True, timeout=60)
    assert "default: 6 x one cold run" in done.stdout
    whatif = " ".join(prose("whatif").split())
    assert "within a budget of six times the first sample's cold wall time" in whatif
    assert "about six cold runs" not in whatif


def test_the_lesson_list_names_every_lesson_of_the_course():
    listed = " ".join((ROOT / "references" / "notebook.md").read_text().split())
    for words in ("the primer", "CS-5 on the CPU (`cs5_block_dims_cpu`", "the capstone", "the PTX load (`ptx-load-compile`)"):
        assert words in listed, words


@pytest.mark.quick
def test_the_90_minute_path_is_timed_for_a_reader_and_fits():
    """The path's minutes are the reader's, estimated from what each notebook holds (prose at 150
    words a minute, code cells, reports to read, the probes' wait, the exercise): each lesson's row
    in notebooks/README.md is the bench's estimate, the rows add up to 90 and the lessons fit in
    them with set-up and slack. The capstone's task names no fix, and no cell points at the
    solutions."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("lesson_path", ROOT / "bench" / "lesson_path.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    course, path, _ = bench.promised()
    assert len(path) >= 6
    readme = (NB / "README.md").read_text()
    section = readme.split("## A 90-minute path", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in section.splitlines()
            if re.match(r"\|\s*\d+\s*\|", line)]
    assert sum(int(r[0]) for r in rows) == 90, rows
    for minutes, lesson, _ in rows:
        link = re.search(r"\]\(([\w.]+)\.ipynb\)", lesson)
        if link:
            reader, _ = bench.estimate(link.group(1), bench.seconds_said(course[link.group(1)]))
            assert int(minutes) == round(reader), (link.group(1), minutes, reader)
    lessons = sum(bench.estimate(n, bench.seconds_said(course[n]))[0] for n in path)
    set_up = sum(int(r[0]) for r in rows if "set-up" in r[1])
    assert lessons + set_up <= 90 - 5, lessons  # at least 5 minutes of slack are left
    capstone = nbformat.read(NB / "capstone.ipynb", as_version=4)
    task = next(c.source for c in capstone.cells if c.cell_type == "markdown" and c.source.startswith("## Exercise"))
    task = task.split("First run the program")[0]  # the task; the limits after it are the checker's
    assert not re.search(r"named module|optimization_level|overload|instances registered", task), task
    for nb_path in NB.glob("*.ipynb"):
        cells = nbformat.read(nb_path, as_version=4).cells
        assert not any("lesson_solutions" in c.source for c in cells), nb_path.name
