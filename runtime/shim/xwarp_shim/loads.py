"""Module loads: every load that did work, with its hash, device, block_dim, timings, the test
that paid for it and a snapshot of what the module held."""

import os

from . import state, thread_clocks
from .attribution import current_test
from .calls import preload_depth
from .snapshot import config_mismatch, snapshot
from .state import perf
from .values import hex_of
from .wrapping import frame_stack, hide


def hook_load(Module):
    orig = getattr(Module, "load", None)
    if orig is None:
        return False
    rec = state.rec

    def load(self, device, block_dim=None, *args, **kwargs):
        if state.lever is not None and not self.execs:
            state.lever.before_first_load(self)
        # Read the requested block_dim before the call: Warp <= 1.14 writes it into
        # self.options during load.
        options = self.options
        bd = block_dim if block_dim is not None else options.get("block_dim")
        stack = frame_stack()
        frame = {}
        stack.append(frame)
        clocks = thread_clocks.start()
        t0 = perf()
        try:
            result = orig(self, device, block_dim, *args, **kwargs)
        except BaseException as exc:
            stack.pop()
            if not getattr(exc, "_xwarp_seen", False):
                try:
                    exc._xwarp_seen = True
                except Exception:
                    pass
                record_load(rec, self, None, device, bd, frame, t0, clocks, exc)
            raise
        stack.pop()
        # Fast path: Warp returned an executable it already had. Nothing to record.
        if result is None or getattr(result, "_xwarp_seen", False):
            return result
        try:
            result._xwarp_seen = True
        except Exception:
            pass
        record_load(rec, self, result, device, bd, frame, t0, clocks, None)
        return result

    Module.load = hide(load)
    return True


def record_load(rec, module, result, device, bd, frame, t0, clocks, error):
    total_ms = (perf() - t0) * 1000.0
    try:
        cache_dir = getattr(rec.cfg, "kernel_cache_dir", None)
        if cache_dir:
            # resolved now: a link the program made inside the probe's cache, pointing at a kept
            # one, is the kept one (and may be gone when the records are read)
            rec.load_cache_dirs.add(os.path.realpath(str(cache_dir)))
    except Exception:
        pass
    try:
        thread_clock_fields = thread_clocks.since(clocks)
        if result is not None:
            hash_hex = hex_of(getattr(result, "module_hash", None))
            dev = str(getattr(result, "device", device))
            block_dim = getattr(result, "block_dim", None) or bd
        else:
            hashers = getattr(module, "hashers", {}) or {}
            h = hashers.get(bd)
            hash_hex = None
            if h is not None:
                get = getattr(h, "get_hash", None) or getattr(h, "get_module_hash", None)
                hash_hex = hex_of(get()) if get else None
            dev = str(device)
            try:
                dev = str(rec.ctx.runtime.get_device(device))
            except Exception:
                pass
            block_dim = bd
        if error is not None:
            status = "error"
        elif "compiled" in frame:
            status = "compiled" if frame["compiled"] else "cached"
        elif frame.get("warp_status") in ("compiled", "cached", "error"):
            status = frame["warp_status"]
        elif rec.hooks.get("status") == "compile-call":
            status = "cached"  # Warp 1.9-1.11 call compile() only when they build
        else:
            status = "unknown"
        event = {
            "type": "load",
            "module": module.name,
            "hash": hash_hex,
            "device": dev,
            "block_dim": block_dim,
            "status": status,
            "warp_ms": frame.get("warp_ms"),
            "total_ms": round(total_ms, 3),
            "t_start_ms": round((t0 - rec.t0) * 1000.0, 3),
            "thread": state.threading.current_thread().name,
        }
        event.update(thread_clock_fields)
        if preload_depth[0] > 0:
            event["via_preload"] = True
        launching = state.tls.__dict__.get("launching")
        if launching is not None:
            event["triggered_by"] = launching
        test = current_test()
        if test:
            event["test"] = test
            if status == "compiled":
                paid = rec.builds_by_test.setdefault(test, [0, 0.0])
                paid[0] += 1
                paid[1] += frame.get("warp_ms") or total_ms
        for key in (
            "native_ms",
            "native_kind",
            "codegen_ms",
            "source_bytes",
            "output_suffix",
            "ltoir_inputs",
            "lto",
            "first_in_thread",
            "pch_ms",
            "phases",
        ):
            if key in frame:
                event[key] = frame[key]
        if error is not None:
            event["error"] = f"{type(error).__name__}: {error}"[:2000]
        event["snapshot"] = snapshot(module, bd)
        mismatch = config_mismatch(module, rec.cfg)
        if mismatch:
            event["config_mismatch"] = mismatch
        rec.emit(event)
    except Exception as exc:
        rec.emit({"type": "shim_error", "where": "load", "error": repr(exc)})
