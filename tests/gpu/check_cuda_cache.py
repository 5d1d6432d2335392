"""Reads a report of tests/gpu/device_session.sh's cudacache step and prints what a GPU run says
of NVRTC's cache: the environment's answer (whether this NVRTC caches), the cuda-cache-empty
finding's evidence, the keep-cuda-cache and keep-lto-cache replays (verdict, the clock that judged
them, saving) and every pass's CUDA cache at its start and end. Exits 1 when the report
contradicts itself: NVRTC caches, CUDA modules were built, and yet no finding names the cache, or
the replay's warm-CUDA-cache passes started from an empty CUDA cache."""

import json
import sys


def main(path):
    r = json.load(open(path))
    env = r["environment"]
    print(f"nvrtc_cache: {env.get('nvrtc_cache')} (first {env.get('nvrtc_cache_first_ms')} ms, "
          f"second {env.get('nvrtc_cache_second_ms')} ms, CUDA_CACHE_MAXSIZE {env.get('cuda_cache_maxsize')})")
    problems = []
    found = [f for f in r["findings"] if f["mechanism"] in ("cuda-cache-empty", "lto-cache-empty")]
    for f in found:
        print(f"finding {f['mechanism']}: {f['evidence']}")
        print(f"  cause {json.dumps(f.get('cause'))}")
    cuda_builds = sum(1 for l in r["samples"][0]["cold"]["module_loads"]
                      if l["status"] == "compiled" and str(l["device"]).startswith("cuda"))
    print(f"CUDA builds in sample 1's cold pass: {cuda_builds}")
    if env.get("nvrtc_cache") == "caches" and cuda_builds and not any(f["mechanism"] == "cuda-cache-empty" for f in found):
        problems.append("NVRTC caches and CUDA modules built, but no cuda-cache-empty finding")
    for w in r.get("whatif", []):
        print(f"whatif {w['lever']}: {w['verdict']} judged on {w.get('judged_on')} saving {w.get('saving_ms')} ms (band {w.get('band_ms')}) "
              f"builds {json.dumps(w.get('builds'))}")
        print(f"  reason: {w.get('reason')}")
    for s in r["samples"]:
        for name in ("cold", "warm"):
            p = s.get(name)
            if not p:
                continue
            caches = {c["kind"]: f"{c['files_before']}->{c['files_after']} files, {c['bytes_after'] / 1e6:.1f} MB"
                      for c in p.get("caches", [])}
            cpu = [l.get("cpu_ms") for l in p["module_loads"] if l["status"] == "compiled"]
            ins = [l.get("instructions") for l in p["module_loads"] if l["status"] == "compiled"]
            print(f"sample {s['index']} {name}: wall {p['wall_ms']:.0f} ms caches {caches} "
                  f"module cpu_ms {cpu} instructions {ins}")
    for line in problems:
        print("PROBLEM: " + line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
