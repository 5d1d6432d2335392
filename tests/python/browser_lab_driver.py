"""Drives JupyterLab in Debian's Chromium with Playwright (run by test_browser_lab.py with the
tools venv's Python): open the overview notebook, run all cells, check the report in the DOM,
save a screenshot. Exits non-zero with a message on any failure."""

import json
import shutil
import sys
import time
import urllib.request

from playwright.sync_api import sync_playwright


def wait_for_kernel(url, timeout_s=120):
    """Until the server says the notebook's session has an xwarp kernel that is idle. The page's
    own indicator can read idle before the session has a kernel; a Run All Cells clicked then
    does nothing, or opens JupyterLab's Select Kernel dialog (seen once, with every prompt empty)."""
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{url}/api/sessions?token=xwarp-test", timeout=5) as reply:
            sessions = json.load(reply)
        last = [(s.get("path"), (s.get("kernel") or {}).get("name"), (s.get("kernel") or {}).get("execution_state"))
                for s in sessions]
        if any(path and path.endswith("overview.ipynb") and name == "xwarp" and state == "idle"
               for path, name, state in last):
            return
        time.sleep(0.5)
    sys.exit(f"the notebook's xwarp kernel was not idle after {timeout_s} s; sessions: {last}")


def choose_xwarp_if_asked(page):
    """JupyterLab asks for a kernel when it thinks the notebook has none: answer with xwarp, and
    say so (the test turns it into a warning)."""
    dialog = page.locator(".jp-Dialog")
    if dialog.count() and "Select Kernel" in dialog.first.inner_text():
        print("a Select Kernel dialog opened: xwarp chosen")
        dialog.first.locator("select").select_option(label="Python 3 (xwarp: Warp compile probe)")
        dialog.first.get_by_role("button", name="Select", exact=True).click()


def run_all(page, attempts=3, started=r"\[(\*|\d+)\]"):
    """Run > Run All Cells, then wait until the first code cell shows it was queued ([*] or a
    number). A click that lands while JupyterLab is still laying out the menu can do nothing;
    try again rather than wait ten minutes for output that was never asked for."""
    for attempt in range(attempts):
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_text("Run All Cells", exact=True).click()
        try:
            page.wait_for_function(
                "pattern => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]"
                ".some(e => new RegExp(pattern).test(e.textContent))",
                arg=started, timeout=15_000)
            return
        except Exception:
            print(f"Run All Cells did not start the cells (attempt {attempt + 1})")
            choose_xwarp_if_asked(page)
            page.keyboard.press("Escape")
    sys.exit("Run All Cells never started the notebook")


class NotebookStopped(RuntimeError):
    pass


def describe(page, screenshot):
    page.screenshot(path=screenshot, full_page=True)
    print("prompts:", page.locator(".jp-InputPrompt").all_inner_texts())
    print("dialogs:", page.locator(".jp-Dialog").all_inner_texts())
    print("kernel status:", page.locator(".jp-Notebook-ExecutionIndicator").first.get_attribute("data-status"))
    for i, text in enumerate(page.locator(".jp-Cell .jp-OutputArea").all_inner_texts()):
        print(f"--- output area {i}:\n{text[-2000:]}")
    sys.stdout.flush()


def wait_for_report_or_stop(page, timeout_s=600):
    """The report's identities table, or an error as soon as the notebook stopped without it: no
    cell queued or running any more (an error in a cell makes the kernel abort the cells queued
    after it, which JupyterLab shows as empty prompts), rather than ten minutes of waiting."""
    selector = '.jp-OutputArea-output table[data-xwarp="identities"]'
    stopped_since = None
    for _ in range(timeout_s):
        table = page.query_selector(selector)
        if table:
            return table
        running = any("[*]" in t for t in page.locator(".jp-CodeCell .jp-InputPrompt").all_inner_texts())
        if running:
            stopped_since = None
        else:
            stopped_since = stopped_since or 0
            stopped_since += 1
            if stopped_since >= 10:  # the table renders within moments of the last reply
                raise NotebookStopped("the notebook stopped running without showing the identities table")
        page.wait_for_timeout(1000)
    raise TimeoutError(f"no identities table after {timeout_s} s")


def main(url, screenshot):
    chromium = shutil.which("chromium")
    if not chromium:
        sys.exit("Debian's chromium is not installed")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-dev-shm-usage"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{url}/lab/tree/overview.ipynb?token=xwarp-test")
        page.wait_for_selector(".jp-Notebook", timeout=120_000)
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)
        wait_for_kernel(url)
        try:
            run_all(page)
            try:
                table = wait_for_report_or_stop(page)
            except NotebookStopped:
                # Once, in CI, the first cell's reply was an error and the kernel aborted the rest;
                # the cell's output was not kept. Say everything the page shows (the test turns
                # it into a warning), then run the notebook once more in the same kernel.
                print("RETRY: the notebook stopped without the report; what the page showed:")
                describe(page, screenshot.replace(".png", "-first-run.png"))
                run_all(page, started=r"\[\*\]")
                table = wait_for_report_or_stop(page)
        except Exception:
            # leave what the page showed beside the screenshot, for whoever reads the failure
            describe(page, screenshot.replace(".png", "-failure.png"))
            raise
        if not table.is_visible():
            sys.exit("the identities table is in the DOM but not visible")
        print("identities table visible")
        page.wait_for_selector('.jp-OutputArea-output [data-xwarp="verdict"]', timeout=600_000)
        findings = page.locator('.jp-OutputArea-output [data-xwarp="finding"]').count()
        print(f"findings shown: {findings}")
        if findings < 1:
            sys.exit("no finding rendered")
        if page.evaluate("document.querySelectorAll('.jp-OutputArea-output .xwarp-report script').length") != 0:
            sys.exit("a script element inside a report")
        news = page.get_by_role("button", name="No", exact=True)
        if news.count():
            news.first.click()
        report = page.locator(".jp-OutputArea-output .xwarp-report").first
        report.scroll_into_view_if_needed()
        page.wait_for_timeout(1500)  # JupyterLab draws cells lazily while scrolling
        report.screenshot(path=screenshot)
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
