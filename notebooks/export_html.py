#!/usr/bin/env python3
"""Export the lessons as static HTML, to share a class without running Warp.

    python3 notebooks/export_html.py --execute            # run each lesson on the xwarp kernel first
    python3 notebooks/export_html.py --executed DIR       # notebooks executed elsewhere (DIR/NAME.ipynb)

Writes OUT/NAME.html for each lesson (nbconvert's HTML exporter: the reports' HTML outputs stay
inline and self-contained), OUT/NAME.slides.html for the primer and the capstone (nbconvert's
reveal.js slides: one slide per heading), OUT/cheatsheet.html (the one-page cheat sheet of
references/) and OUT/index.html listing them in the course order of notebooks/README.md. OUT defaults to build/notebooks-html. Run it with Debian's python3
(nbconvert, nbclient).
"""

import argparse
import html
import re
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter, SlidesExporter

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def course():
    """(name, title, needs) in the order of the course table in notebooks/README.md."""
    rows = []
    for line in (HERE / "README.md").read_text().splitlines():
        found = re.match(r"\|\s*\d+\s*\|\s*\[([^\]]+)\]\(([\w.]+)\.ipynb\)\s*\|([^|]*)\|([^|]*)\|([^|]*)\|", line)
        if found:
            rows.append((found.group(2), found.group(1), found.group(3).strip(), found.group(5).strip()))
    return rows


def execute(names, into):
    from nbclient import NotebookClient

    for name in names:
        work = Path(tempfile.mkdtemp(prefix="xwarp-export-"))
        try:
            nb = nbformat.read(HERE / f"{name}.ipynb", as_version=4)
            print(f"executing {name} ...", file=sys.stderr)
            NotebookClient(nb, kernel_name="xwarp", timeout=1800, resources={"metadata": {"path": str(work)}}).execute()
            nbformat.write(nb, into / f"{name}.ipynb")
        finally:
            shutil.rmtree(work, ignore_errors=True)


SLIDES = ("primer", "capstone")  # the lessons a class also gets as slides


def as_slides(nb):
    """One slide per markdown heading; the cells after it continue the slide (the reports are
    long: they scroll inside it)."""
    for cell in nb.cells:
        heading = cell.cell_type == "markdown" and cell.source.lstrip().startswith("#")
        cell.metadata["slideshow"] = {"slide_type": "slide" if heading else "-"}
    return nb


def export_cheatsheet(out):
    from nbconvert.filters import markdown2html

    text = (ROOT / "references" / "cheatsheet.md").read_text()
    text = text.replace("[mechanisms.md](mechanisms.md)", "`references/mechanisms.md`")  # not beside the export
    page = ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Cheat sheet: Warp cold start</title><style>"
            "body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;line-height:1.45}"
            "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3rem .5rem;vertical-align:top}"
            "</style></head><body data-xwarp=\"cheatsheet\">" + markdown2html(text) + "</body></html>")
    (out / "cheatsheet.html").write_text(page)


def export(executed, out):
    out.mkdir(parents=True, exist_ok=True)
    exporter = HTMLExporter()
    slides = SlidesExporter()
    items = []
    for name, title, teaches, needs in course():
        source = executed / f"{name}.ipynb"
        if not source.exists():
            print(f"warning: {name} was not executed: left out", file=sys.stderr)
            continue
        body, _ = exporter.from_notebook_node(nbformat.read(source, as_version=4))
        (out / f"{name}.html").write_text(body)
        if name in SLIDES:
            deck, _ = slides.from_notebook_node(as_slides(nbformat.read(source, as_version=4)))
            (out / f"{name}.slides.html").write_text(deck)
        items.append(f'<li><a href="{html.escape(name)}.html">{html.escape(title)}</a> '
                     f'<span style="opacity:0.7">&mdash; {html.escape(teaches)} ({html.escape(needs)})</span></li>')
    index = ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Warp cold start: a course</title></head>"
             "<body style=\"font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;line-height:1.5\">"
             "<h1>Warp's cold start: a course</h1><p>Static pages of executed lessons (xwarp). Each report is "
             "inline; nothing here runs Warp. The <a href=\"cheatsheet.html\">cheat sheet</a> is the handout; "
             "the primer and the capstone are also slides (NAME.slides.html).</p>"
             "<ol data-xwarp=\"course\">" + "".join(items) + "</ol></body></html>")
    export_cheatsheet(out)
    (out / "index.html").write_text(index)
    return len(items)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--executed", type=Path, help="folder of executed notebooks (NAME.ipynb)")
    parser.add_argument("--execute", action="store_true", help="execute every lesson on the xwarp kernel first")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "notebooks-html")
    args = parser.parse_args(argv)
    if bool(args.executed) == args.execute:
        parser.error("give exactly one of --execute or --executed DIR")
    if args.execute:
        with tempfile.TemporaryDirectory(prefix="xwarp-executed-") as tmp:
            execute([name for name, *_ in course()], Path(tmp))
            count = export(Path(tmp), args.out)
    else:
        count = export(args.executed, args.out)
    print(f"{count} lesson(s) exported to {args.out}/index.html")
    return 0 if count else 1


if __name__ == "__main__":
    sys.exit(main())
