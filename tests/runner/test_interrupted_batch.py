"""A batch keeps its index current after each audit, and an interrupted one publishes what finished and leaves
nothing behind: no staging folder, no lock file, no kernel still running."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import threading
import time
from pathlib import Path

import pytest
from notebook_factory import plugin_for, write_notebook

from audit_lib import runner

HANG_LIMIT_S = 240  # only a hang reaches it (each wait; the test as a whole has 4 of them)

FINISHES = [
    "from audit_lib.findings import Check, FindingsBuilder\n"
    "builder = FindingsBuilder('first', {})\n"
    "builder.add(Check('count', 'count', 'pass', observed=1))\n"
    "builder.write()",
]


def hangs(pid_file: Path) -> list[str]:
    return [f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep({HANG_LIMIT_S * 2})"]


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + HANG_LIMIT_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: still not the case after {HANG_LIMIT_S} s")
        time.sleep(0.1)


def process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:  # a zombie holds nothing: it has ended
        return stat.read().rsplit(")", 1)[1].split()[0] == "Z"


@pytest.mark.timeout(4 * HANG_LIMIT_S)
@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals need the main thread")
def test_an_interrupted_batch_publishes_what_finished_and_leaves_nothing_behind(tmp_path: Path) -> None:
    pid_file = tmp_path / "kernel.pid"
    plugins = {"first": plugin_for(write_notebook(tmp_path / "nb", "first", "limit = 1\n", FINISHES)),
               "second": plugin_for(write_notebook(tmp_path / "nb", "second", "limit = 1\n", hangs(pid_file)))}
    reports = tmp_path / "reports"
    seen_mid_run: dict[str, object] = {}

    def interrupt_once_the_second_audit_runs() -> None:
        try:
            wait_for(pid_file.exists, "the second audit's kernel started")
            index = (reports / "index.html").read_text() if (reports / "index.html").is_file() else ""
            report = (reports / "first.html").read_text()
            links = re.findall(r'class="index-link" href="([^"]+)"', report)
            seen_mid_run.update(index_names_first="audit-first" in index, links=links,
                                links_live=all((reports / link).is_file() for link in links))
        finally:
            os.kill(os.getpid(), signal.SIGTERM)  # what `kill` or a CI timeout sends; handled as Ctrl-C

    def as_interrupt(signum: int, frame: object) -> None:  # a safety net: a runner without its own handler
        raise KeyboardInterrupt  # would otherwise let SIGTERM end the test session

    previous = signal.signal(signal.SIGTERM, as_interrupt)
    watcher = threading.Thread(target=interrupt_once_the_second_audit_runs, daemon=True)
    watcher.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            runner.run_audits(["first", "second"], reports_dir=reports, plugins=plugins, jobs=1,
                              progress=io.StringIO())
    finally:
        signal.signal(signal.SIGTERM, previous)
    watcher.join(timeout=HANG_LIMIT_S)

    # Mid-run, the first audit's report and the index it links to were both there.
    assert seen_mid_run == {"index_names_first": True, "links": ["index.html"], "links_live": True}
    # After the interrupt: the index names what finished, and nothing of the run is left.
    index = (reports / "index.html").read_text()
    assert "audit-first" in index
    assert "This run was interrupted.</b> Audits it did not finish: <code>second</code>" in index
    assert json.loads((reports / "summary.json").read_text())["run"]["interrupted"] == ["second"]
    left = sorted(path.name for path in reports.iterdir())
    assert left == ["first.findings.json", "first.html", "first.ipynb", "index.html", "summary.json"], left
    kernel = int(pid_file.read_text())
    wait_for(lambda: process_gone(kernel), f"the interrupted audit's kernel (pid {kernel}) ended")
