"""Open reports/index.html and an audit report in headless Chromium (Debian's package, driven by Playwright)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from audit_lib import runner
from tests.prerequisites import import_declared, require_chromium

LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage",
               "--no-first-run", "--disable-extensions"]

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", autouse=True)
def chromium() -> Path:
    """Skips the module without Chromium; under CI=true its absence is a failure."""
    return require_chromium()


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small real run: the data inventory of two datasets (offline; the mirror is used when configured)."""
    target = tmp_path_factory.mktemp("reports")
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUDIT_DATA_CACHE", str(cache))
        summary = runner.run_audits(["data_inventory"], [("datasets", '["humaneval", "impossible_lcb"]'),
                                                         ("offline", "true")],
                                    reports_dir=target, progress=None)
    assert summary.exit_code() == 0, summary.failed
    return target


@pytest.fixture(scope="module")
def browser(chromium: Path):
    playwright_api = import_declared("playwright.sync_api", "playwright")
    with playwright_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(chromium), args=LAUNCH_ARGS, headless=True)
        yield launched
        launched.close()


def open_page(browser, path: Path):
    """Load a local file; return the page and every console error or uncaught exception it produced."""
    page = browser.new_page()
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


def test_index_page(browser, reports: Path) -> None:
    page, problems = open_page(browser, reports / "index.html")
    assert problems == []
    assert "benchaudit" in page.title()
    assert page.locator("table.audits").count() == 1
    findings = page.locator("#audit-data_inventory table.findings")
    assert findings.count() == 1
    rows = findings.locator("tbody tr")
    assert rows.count() >= 5
    assert page.locator("#audit-data_inventory .badge.status-pass").count() >= 1
    assert page.locator("#audit-data_inventory .badge.status-skipped").count() >= 1  # unmirrored parquet files
    targets = local_targets(page)
    assert reports / "data_inventory.html" in targets
    assert reports / "data_inventory.findings.json" in targets
    for target in targets:
        assert target.is_file(), f"broken link to {target}"
    page.close()


def test_audit_report(browser, reports: Path) -> None:
    page, problems = open_page(browser, reports / "data_inventory.html")
    assert problems == []
    assert page.locator(".ba table.findings").count() == 1
    assert page.locator(".ba table.provenance").count() == 1
    figures = page.locator('img[src^="data:image/png"]')
    assert figures.count() >= 1
    assert figures.first.evaluate("img => img.complete && img.naturalWidth > 0")
    assert page.locator(".jp-CodeCell .jp-InputArea").count() == 0, "code must be hidden without --with-code"
    assert "builder.write()" not in page.inner_text("body")
    assert page.locator("h1", has_text="Data inventory").count() == 1  # markdown cells stay
    for target in local_targets(page):
        assert target.is_file(), f"broken link to {target}"
    page.close()
