"""Drives JupyterLab in Debian's Chromium with Playwright (run by test_browser_lab.py with the
tools venv's Python): open the overview notebook, run all cells, check the report in the DOM,
save a screenshot. Exits non-zero with a message on any failure."""

import shutil
import sys

from playwright.sync_api import sync_playwright


def run_all(page, attempts=3):
    """Run > Run All Cells, then wait until the first code cell shows it was queued ([*] or a
    number). A click that lands while JupyterLab is still laying out the menu can do nothing;
    try again rather than wait ten minutes for output that was never asked for."""
    for attempt in range(attempts):
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_text("Run All Cells", exact=True).click()
        try:
            page.wait_for_function(
                "() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]"
                ".some(e => /\\[(\\*|\\d+)\\]/.test(e.textContent))",
                timeout=60_000)
            return
        except Exception:
            print(f"Run All Cells did not start the cells (attempt {attempt + 1})")
            page.keyboard.press("Escape")
    sys.exit("Run All Cells never started the notebook")


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
        try:
            run_all(page)
            table = page.wait_for_selector('.jp-OutputArea-output table[data-xwarp="identities"]', timeout=600_000)
        except Exception:
            # leave what the page showed beside the screenshot, for whoever reads the failure
            page.screenshot(path=screenshot.replace(".png", "-failure.png"), full_page=True)
            print("prompts:", page.locator(".jp-InputPrompt").all_inner_texts())
            print("dialogs:", page.locator(".jp-Dialog").all_inner_texts())
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
