#!/usr/bin/env python3
"""The layer diagram of references/architecture.md, drawn from the build's own layer list.

CMakeLists.txt declares each layer once: `xwarp_layer(<target> <folder> SOURCES ... DEPENDS ...
PRIVATE_DEPENDS ...)` for the libraries (the folder is the same under src/ and include/xwarp/),
and the fronts' targets (warp-probe, the magics, the engine library behind %load_ext, the kernel) with their
sources under src/fronts/ and their `target_link_libraries`. This prints one line per layer,
bottom up, with the layers it links; `--write` puts that block into architecture.md between its
markers, and tests/python/test_structure.py fails when the two differ.
"""

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- layers:begin -->", "<!-- layers:end -->"
FRONTS = ("warp-probe", "xwarp_magics", "xwarp_engine_c", "xwarp")


def _calls(text, name):
    """(arguments) of each `name(...)` call, comments dropped, in order."""
    text = re.sub(r"#[^\n]*", "", text)
    for match in re.finditer(r"\b" + re.escape(name) + r"\(([^()]*(?:\([^()]*\)[^()]*)*)\)", text):
        yield match.group(1).split()


def layers(cmake_text=None):
    """[(folder, target, [linked targets])] bottom up: the libraries in declaration order, then
    the fronts."""
    text = cmake_text if cmake_text is not None else (ROOT / "CMakeLists.txt").read_text()
    found = []
    for args in _calls(text, "xwarp_layer"):
        if len(args) < 2 or args[0].startswith("$"):
            continue
        target, folder = args[0], args[1]
        links = [a for a in args[2:] if a.startswith("xwarp_")]
        found.append((folder, target, links))
    globs = {args[0]: args[-1] for args in _calls(text, "file") if args and args[0] == "GLOB" and len(args) > 1
             for args in [args[1:]]}
    for target in FRONTS:
        sources = next((args[1:] for kind in ("add_executable", "add_library")
                        for args in _calls(text, kind) if args and args[0] == target), None)
        if sources is None:
            continue
        first = next(a for a in sources if a.startswith("${") or a.endswith(".cpp"))
        path = globs.get(first[2:-1], "") if first.startswith("${") else first
        folder = re.search(r"src/(fronts/[a-z_]+)/", path).group(1)
        links = [a for args in _calls(text, "target_link_libraries") if args and args[0] == target
                 for a in args[1:] if a.startswith("xwarp_")]
        found.append((folder, target, links))
    return found


def diagram(found=None):
    found = layers() if found is None else found
    by_target = {target: folder for folder, target, _ in found}
    title = "layer: src/<layer>/ and include/xwarp/<layer>/"
    width = max(len(title), *(len(folder) for folder, _, _ in found)) + 2
    lines = [f"{title:<{width}}links (what it may include)", f"{'-' * (width - 2):<{width}}{'-' * 26}"]
    for folder, target, links in found:
        named = [by_target.get(link, link) for link in links]
        shown = "base (include/xwarp/version.hpp)" if folder == "base" else folder
        lines.append(f"{shown:<{width}}{', '.join(named) if named else '-'}")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="put the diagram into references/architecture.md")
    args = parser.parse_args()
    text = diagram()
    if not args.write:
        print(text)
        return 0
    guide = ROOT / "references" / "architecture.md"
    page = guide.read_text()
    if BEGIN not in page or END not in page:
        print(f"{guide}: no {BEGIN} ... {END} block", file=sys.stderr)
        return 1
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    guide.write_text(f"{head}{BEGIN}\n```\n{text}\n```\n{END}{tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
