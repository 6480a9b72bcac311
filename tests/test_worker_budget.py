"""The shared worker budget: never more jobs at once than slots, across processes."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest

from audit_lib import worker_budget


def _hold_a_slot(folder: str, log: str, index: int) -> None:
    import os

    os.environ[worker_budget.BUDGET_DIR_ENV] = folder
    with worker_budget.worker_slot():
        with open(log, "a") as handle:
            handle.write(f"start {time.monotonic()}\n")
        time.sleep(0.3)
        with open(log, "a") as handle:
            handle.write(f"end {time.monotonic()}\n")


def _max_overlap(lines: list[str]) -> int:
    events = sorted((float(t), 1 if kind == "start" else -1) for kind, t in (line.split() for line in lines))
    running = peak = 0
    for _, delta in events:
        running += delta
        peak = max(peak, running)
    return peak


@pytest.mark.parametrize("slots", [1, 2])
def test_processes_share_the_budget(tmp_path: Path, slots: int) -> None:
    worker_budget.create_budget(tmp_path / "budget", slots)
    log = tmp_path / "log"
    processes = [multiprocessing.get_context("fork").Process(target=_hold_a_slot,
                                                             args=(str(tmp_path / "budget"), str(log), i))
                 for i in range(4)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(30)
    lines = log.read_text().splitlines()
    assert len(lines) == 8
    assert _max_overlap(lines) == slots


def test_without_a_budget_folder_nothing_is_held(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(worker_budget.BUDGET_DIR_ENV, raising=False)
    with worker_budget.worker_slot() as slot:
        assert slot is None


def test_size_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(worker_budget.WORKERS_ENV, "3")
    assert worker_budget.budget_size() == 3
    monkeypatch.setenv(worker_budget.WORKERS_ENV, "zero")
    assert worker_budget.budget_size() >= 1
