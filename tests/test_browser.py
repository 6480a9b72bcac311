"""Open reports/index.html and audit reports in headless Chromium (Debian's package, driven by Playwright) at
1400 px: alerts in the first screen, a legend, no horizontal overflow, no machine path, sortable tables, and the
evidence that travels inside the report. Screenshots land in the test's tmp dir."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from audit_lib import runner
from tests.prerequisites import import_declared, require_chromium
from tests.toy_audit.audit import AUDIT as TOY

LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage",
               "--no-first-run", "--disable-extensions"]

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", autouse=True)
def chromium() -> Path:
    """Skips the module without Chromium; under CI=true its absence is a failure."""
    return require_chromium()


VIEWPORT = {"width": 1400, "height": 900}
ALERTS_WITHIN_PX = 900
# Word counts 7, 6, 5, 4, 3, 2 (and 1): with max_repeats 1, six words are over the limit, one evidence row each.
TOY_TEXT = " ".join(["alpha"] * 7 + ["bravo"] * 6 + ["charlie"] * 5 + ["delta"] * 4 + ["echo"] * 3 + ["fox"] * 2
                    + ["golf"])


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small real run into one folder: the data inventory of two datasets (offline; the mirror is used when
    configured) and the toy audit with a defect, a skipped and an errored check, run twice with a different limit so
    the index marks what changed."""
    target = tmp_path_factory.mktemp("reports")
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUDIT_DATA_CACHE", str(cache))
        try:
            summary = runner.run_audits(["data_inventory"], [("datasets", '["humaneval", "impossible_lcb"]'),
                                                             ("offline", "true")],
                                        reports_dir=target, progress=None)
            assert summary.exit_code() == 0, summary.failed
        except (TypeError, AttributeError):  # its plugin is not on the contract yet: run the notebook directly
            inventory_without_the_runner(target)
        earlier = runner.run_audits(["toy_audit"], [("text", TOY_TEXT), ("max_repeats", "5")], reports_dir=target,
                                    plugins={"toy_audit": TOY}, progress=None)
        assert earlier.exit_code() == 0, earlier.failed
        toy = runner.run_audits(["toy_audit"], [("text", TOY_TEXT), ("max_repeats", "1")], reports_dir=target,
                                plugins={"toy_audit": TOY}, progress=None)
    assert toy.exit_code() == 0, toy.failed
    return target


def inventory_without_the_runner(target: Path) -> None:
    """The data inventory executed by papermill, exported and indexed as the runner would publish it."""
    from audit_lib.runner.html import export_html
    from audit_lib.runner.index_page import write_index_and_summary
    from tests.notebook_helpers import execute_notebook

    execute_notebook("data_inventory", {"datasets": ["humaneval", "impossible_lcb"], "offline": True}, target)
    export_html(target / "data_inventory.ipynb", target / "data_inventory.html", with_code=False,
                title="data_inventory")
    files = {"notebook": "data_inventory.ipynb", "findings": "data_inventory.findings.json",
             "html": "data_inventory.html"}
    outcome = {"audit": "data_inventory", "notebook": "data_inventory", "params": {}, "ok": True, "duration_s": 0.0,
               "failure": None, "files": files, "status": "ok"}
    write_index_and_summary(target, [outcome], {"kernel": "benchaudit"})


@pytest.fixture(scope="module")
def browser(chromium: Path):
    playwright_api = import_declared("playwright.sync_api", "playwright")
    with playwright_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(chromium), args=LAUNCH_ARGS, headless=True)
        yield launched
        launched.close()


def open_page(browser, path: Path):
    """Load a local file at 1400 px; return the page and every console error or uncaught exception it produced."""
    page = browser.new_page(viewport=VIEWPORT, accept_downloads=True)
    problems: list[str] = []
    page.on("console", lambda message: problems.append(f"console {message.type}: {message.text}")
            if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("requestfailed", lambda request: problems.append(f"request failed: {request.url}"))
    page.goto(path.as_uri(), wait_until="load")
    return page, problems


def local_targets(page) -> list[Path]:
    """Every link on the page that points at a file (not the web, not an in-page anchor)."""
    targets = []
    for href in page.eval_on_selector_all("a[href]", "nodes => nodes.map(n => n.href)"):
        parts = urlsplit(href)
        if parts.scheme == "file":
            targets.append(Path(unquote(parts.path)))
    return targets


def machine_paths(page, reports: Path) -> list[str]:
    """Absolute paths of this machine anywhere in the page's markup (embedded images and evidence blobs aside)."""
    markup = page.content()
    markup = re.sub(r'<script type="application/gzip\+base64"[^>]*>[^<]*</script>', "", markup)
    markup = re.sub(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+", "", markup)
    checkout_parent = str(Path(__file__).resolve().parents[2]) + "/"  # where this checkout lives on this machine
    needles = ["/root/", checkout_parent, "/tmp/", "/home/", str(Path.home()) + "/", str(reports)]
    return [needle for needle in needles if needle in markup]


def check_first_screen(page, reports: Path, screenshot: Path) -> None:
    """What every page owes a reader: alerts in the first screen, the legend, no overflow, no machine path."""
    page.screenshot(path=str(screenshot))
    alerts = page.locator("#alerts")
    assert alerts.count() == 1
    assert alerts.bounding_box()["y"] < ALERTS_WITHIN_PX
    assert page.locator("ul.legend li").count() == 5
    legend = page.inner_text("ul.legend")
    for status in ("pass", "quirk", "defect", "error", "skipped"):
        assert status in legend.lower()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "the page overflows"
    assert machine_paths(page, reports) == []


def first_column(page, table: str) -> list[str]:
    return page.eval_on_selector_all(f"{table} tbody tr", "rows => rows.map(r => r.cells[0].innerText.trim())")


def test_index_page(browser, reports: Path, tmp_path: Path) -> None:
    page, problems = open_page(browser, reports / "index.html")
    assert problems == []
    assert "benchaudit" in page.title()
    check_first_screen(page, reports, tmp_path / "index.png")
    page.screenshot(path=str(tmp_path / "index-full.png"), full_page=True)
    since = page.locator("#since-previous")
    assert since.bounding_box()["y"] < ALERTS_WITHIN_PX and "1 check changed" in since.inner_text()
    alert = page.locator("#alerts li.alert", has_text="6 word(s) repeat more than 1 times")
    assert alert.count() == 1 and alert.locator(".status-defect").count() == 1
    assert alert.locator("a").get_attribute("href") == "toy_audit.html#check-repeats"
    assert page.locator("table.audits").count() == 1
    order = first_column(page, "table.audits")
    page.click("table.audits thead th:nth-child(1)")
    page.click("table.audits thead th:nth-child(1)")  # the second click sorts descending
    assert first_column(page, "table.audits") == sorted(order, reverse=True)
    toy = page.locator("#audit-toy_audit")
    assert toy.get_attribute("open") is None  # sections are collapsed under the alerts and the overview
    page.click('table.audits a[href="#audit-toy_audit"]')
    page.wait_for_function("document.querySelector('#audit-toy_audit').open", timeout=5000)  # on hashchange
    assert toy.get_attribute("open") is not None
    assert toy.locator("table.findings .badge.status-defect").first.is_visible()
    repeats = toy.locator("table.findings tr", has_text="repeats")
    assert repeats.locator(".changed").first.is_visible()  # its count of repeated words changed since the last run
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    overflowing = page.evaluate("Array.from(document.querySelectorAll('td, th'))"
                                ".filter(cell => cell.scrollWidth > cell.clientWidth + 1).length")
    assert overflowing == 0, "cells whose text runs out of them"
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    targets = local_targets(page)
    assert reports / "toy_audit.html" in targets and reports / "toy_audit.findings.json" in targets
    for target in targets:
        assert target.is_file(), f"broken link to {target}"
    page.close()


def test_index_summarises_the_data_inventory_in_one_collapsed_row(browser, reports: Path) -> None:
    page, problems = open_page(browser, reports / "index.html")
    assert problems == []
    assert page.locator("table.audits tbody tr", has_text="data_inventory").count() == 1
    inventory = page.locator("#audit-data_inventory")
    assert inventory.get_attribute("open") is None  # its files are collapsed
    assert inventory.locator("table.findings tbody tr").count() >= 5
    assert inventory.locator(".badge.status-pass").count() >= 1
    assert inventory.locator(".badge.status-skipped").count() >= 1  # unmirrored parquet files
    assert not inventory.locator("table.findings").first.is_visible()
    page.close()


def test_toy_report(browser, reports: Path, tmp_path: Path) -> None:
    page, problems = open_page(browser, reports / "toy_audit.html")
    assert problems == []
    check_first_screen(page, reports, tmp_path / "toy_audit.png")
    assert page.locator("h1", has_text="Toy audit").count() == 1
    assert page.locator("#alerts li.alert").count() == 1
    page.click("#alerts a.alert-evidence")
    assert page.evaluate("location.hash") == "#check-repeats"
    table = "#check-repeats table.data"
    assert first_column(page, table)[0] == "alpha"
    page.click(f"{table} thead th:nth-child(2)")  # count, ascending
    assert first_column(page, table) == ["fox", "echo", "delta", "charlie", "bravo", "alpha"]
    page.fill("#check-repeats input.table-filter", "char")
    assert page.locator(f"{table} tbody tr:visible").count() == 1
    with page.expect_download() as download_info:
        page.click("#check-repeats a.evidence-download")
    download = download_info.value
    assert download.suggested_filename == "toy_audit.repeats.csv"
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    assert saved.read_text(encoding="utf-8").splitlines() == [
        "word,count", "alpha,7", "bravo,6", "charlie,5", "delta,4", "echo,3", "fox,2"]
    assert "PosixPath" not in page.inner_text("body")
    assert page.locator(".jp-CodeCell .jp-InputArea").count() == 0, "code must be hidden without --with-code"
    for target in local_targets(page):
        assert target.is_file(), f"broken link to {target}"
    page.close()


def test_audit_report(browser, reports: Path, tmp_path: Path) -> None:
    page, problems = open_page(browser, reports / "data_inventory.html")
    assert problems == []
    check_first_screen(page, reports, tmp_path / "data_inventory.png")
    assert page.locator(".ba table.findings").count() >= 1
    assert page.locator(".ba table.provenance").count() == 1
    figures = page.locator('img[src^="data:image/png"]')
    assert figures.count() >= 1
    assert figures.first.evaluate("img => img.complete && img.naturalWidth > 0")
    assert page.locator(".jp-CodeCell .jp-InputArea").count() == 0, "code must be hidden without --with-code"
    assert "builder.write()" not in page.inner_text("body") and "PosixPath" not in page.inner_text("body")
    assert page.locator("h1", has_text="Data inventory").count() == 1  # markdown cells stay
    assert page.locator("a.evidence-download").count() >= 1
    for target in local_targets(page):
        assert target.is_file(), f"broken link to {target}"
    page.close()
