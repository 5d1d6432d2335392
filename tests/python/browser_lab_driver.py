"""Drives JupyterLab in Debian's Chromium with Playwright (run by test_browser_lab.py with the
tools venv's Python): open the overview notebook, run all cells, check the report in the DOM,
save a screenshot. Exits non-zero with a message on any failure."""

import shutil
import sys

from playwright.sync_api import sync_playwright


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
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_text("Run All Cells", exact=True).click()
        table = page.wait_for_selector('.jp-OutputArea-output table[data-xwarp="identities"]', timeout=600_000)
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
