"""Verdict stability under load: the same audits run idle and with every core busy must classify failures alike.

Runs the audits (default HumanEval+ and MBPP+) through the batch runner, `python -m audit_lib run AUDIT...
--reports-dir DIR`, into separate folders: once as the machine is (meant to be idle), then while a CPU hog this
script starts keeps every core busy (one busy-loop process per core; stopped in a `finally`, on Ctrl-C and SIGTERM
too, and each hog exits by itself when this script dies) together with a concurrent batch of the same audits in a
third folder, sharing the mirror and data cache (`--no-concurrent` leaves it out). The hog run and the concurrent
run are each compared with the idle run. For every check that classifies failures
(`meta.failure_split`, or HumanEval+'s `original_canonical_vs_plus` known keys on older findings), it prints the
deterministic set and the confirmed-timing set of both runs side by side, "identical" or the differences, the
borderline / not-failing counts (those move with the machine by definition and do not decide; so does an id
confirmed in one run and borderline in the other with flip factors within the borderline margin of each other,
listed as "moved across band"), and each run's wall time and run stamp load (1-minute load average at its start
and end). AUDIT_MIRROR and AUDIT_DATA_CACHE are passed
through to the runner.

Exit code: 0 every compared set is identical; 1 a deterministic or confirmed-timing set differs between two runs
(usable as a CI gate); 3 nothing differs but something could not be compared (a check missing, skipped or errored in
a run, an audit without findings or without a classifying check, or a runner that failed); 2 bad arguments.

Usage: AUDIT_MIRROR=../shared/data .venv/bin/python perf/bench_verdict_stability.py [--audits A B]
    [--param KEY VALUE]... [--hog N] [--skip-idle | --idle-from DIR] [--hog-from DIR] [--no-concurrent |
    --concurrent-from DIR] [--out DIR] [--json OUT]
A quick run on a subset: --param humaneval_plus.task_ids "HumanEval/31,HumanEval/32,HumanEval/127"
    --param mbpp_plus.task_ids "Mbpp/2,Mbpp/3"
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from audit_lib import paths  # noqa: E402
from audit_lib.runner.history import SUMMARY_NAME, load_findings_by_audit  # noqa: E402
from audit_lib.runner.verdict_stability import (  # noqa: E402
    TIMING_STATES,
    ObservedSplit,
    SplitComparison,
    compare_findings,
    overall_agreement,
    sort_ids,
)

DEFAULT_AUDITS = ("humaneval_plus", "mbpp_plus")
EXIT_IDENTICAL, EXIT_DIFFERS, EXIT_BAD_ARGUMENTS, EXIT_NOT_COMPARABLE = 0, 1, 2, 3
EXIT_CODES = {"identical": EXIT_IDENTICAL, "differs": EXIT_DIFFERS, "not_comparable": EXIT_NOT_COMPARABLE}
STOP_GRACE_S = 10.0
# The hog spins until it is stopped, or until its parent (this script) is gone: then it is re-parented, its parent
# id changes, and it exits by itself, so even a SIGKILL of this script leaves no busy process behind.
HOG_SOURCE = """
import os, sys
parent = int(sys.argv[1])
sys.stdout.write("spinning\\n")
sys.stdout.flush()
while os.getppid() == parent:
    for _ in range(200_000):
        pass
"""


@contextlib.contextmanager
def cpu_hog(processes: int) -> Iterator[tuple[int, ...]]:
    """`processes` busy-loop processes, each confirmed spinning before this yields their pids; always stopped."""
    hogs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(processes):
            # its own session: a Ctrl-C meant for the audits does not print a traceback per hog; we stop them
            hogs.append(subprocess.Popen([sys.executable, "-c", HOG_SOURCE, str(os.getpid())], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, start_new_session=True))
        for hog in hogs:
            assert hog.stdout is not None
            if hog.stdout.readline().strip() != b"spinning":
                raise RuntimeError(f"CPU hog process {hog.pid} did not start (exit code {hog.poll()})")
        yield tuple(hog.pid for hog in hogs)
    finally:
        for hog in hogs:
            stop_process(hog, first_signal=signal.SIGTERM)
            if hog.stdout is not None:
                hog.stdout.close()


def stop_process(process: subprocess.Popen[Any], *, first_signal: int, grace_s: float = STOP_GRACE_S) -> None:
    """Send `first_signal`, wait up to `grace_s`, then SIGKILL; always reaps the process."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(first_signal)
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@dataclass(frozen=True)
class BatchRun:
    """One `python -m audit_lib run` into one reports folder (or a folder reused from an earlier run)."""

    label: str
    reports_dir: str
    exit_code: int | None  # None: reused, not run here
    wall_s: float | None
    stamp: dict[str, Any] | None  # the runner's run stamp from summary.json
    hog_processes: int | None  # None: reused, not known here
    command: tuple[str, ...] = ()
    started_at: str | None = None  # UTC, as the run stamps write it; None when reused


def runner_command(audits: Sequence[str], params: Sequence[tuple[str, str]], reports_dir: Path) -> list[str]:
    # --no-cache: each batch runs every verdict itself (the verdict cache would hand the second one the first's)
    command = [sys.executable, "-m", "audit_lib", "run", *audits, "--reports-dir", str(reports_dir), "--no-cache"]
    for key, value in params:
        command += ["-p", key, value]
    return command


def run_batch(label: str, command: Sequence[str], reports_dir: Path, *, hog_processes: int = 0) -> BatchRun:
    """Run the batch runner to completion; on any interruption it is stopped (SIGINT first, like a Ctrl-C)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    print(f"[{label}] {' '.join(command)}", flush=True)
    started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    started = time.monotonic()
    process = subprocess.Popen(list(command), cwd=ROOT, env=env)
    try:
        exit_code = wait_interruptibly(process)
    except BaseException:
        stop_process(process, first_signal=signal.SIGINT)
        raise
    return BatchRun(label, str(reports_dir), exit_code, round(time.monotonic() - started, 2),
                    read_stamp(reports_dir), hog_processes, tuple(command), started_at)


def wait_interruptibly(process: subprocess.Popen[Any], poll_s: float = 0.5) -> int:
    """`process.wait()` in short steps: a Ctrl-C the kernel hands to another thread of this process does not end a
    blocking wait, so the main thread returns to Python code often enough to act on it."""
    while True:
        try:
            return process.wait(timeout=poll_s)
        except subprocess.TimeoutExpired:
            continue


def run_batches_together(batches: Sequence[tuple[str, Sequence[str], Path]], *,
                         hog_processes: int = 0) -> list[BatchRun]:
    """Start every batch at once and wait for all (the concurrent batch competes with the measured one for the
    cores, the sandbox and the data cache); on any interruption every one still running is stopped."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    started = time.monotonic()
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for label, command, _ in batches:
            print(f"[{label}] {' '.join(command)}", flush=True)
            processes.append(subprocess.Popen(list(command), cwd=ROOT, env=env))
        finished: dict[int, tuple[int, float]] = {}
        while len(finished) < len(processes):
            for index, process in enumerate(processes):
                if index not in finished and process.poll() is not None:
                    finished[index] = (process.returncode, round(time.monotonic() - started, 2))
            time.sleep(0.5)
    except BaseException:
        for process in processes:
            stop_process(process, first_signal=signal.SIGINT)
        raise
    return [BatchRun(label, str(reports_dir), finished[index][0], finished[index][1], read_stamp(reports_dir),
                     hog_processes, tuple(command), started_at)
            for index, (label, command, reports_dir) in enumerate(batches)]


def run_under_hog(label: str, command: Sequence[str], reports_dir: Path, processes: int,
                  concurrent: tuple[str, Sequence[str], Path] | None = None) -> list[BatchRun]:
    """The measured batch under the CPU hog, and a concurrent batch (another reports folder) beside it if given."""
    with cpu_hog(processes) as pids:
        print(f"[{label}] CPU hog: {len(pids)} busy-loop process(es), pids {', '.join(map(str, pids))}", flush=True)
        if concurrent is None:
            return [run_batch(label, command, reports_dir, hog_processes=len(pids))]
        return run_batches_together([(label, command, reports_dir), concurrent], hog_processes=len(pids))


def read_stamp(reports_dir: Path) -> dict[str, Any] | None:
    summary = reports_dir / SUMMARY_NAME
    if not summary.is_file():
        return None
    stamp = json.loads(summary.read_text(encoding="utf-8")).get("stamp")
    return dict(stamp) if isinstance(stamp, dict) else None


def reused_run(label: str, reports_dir: Path) -> BatchRun:
    if not reports_dir.is_dir() or not any(reports_dir.glob("*.findings.json")):
        raise SystemExit(f"error: {reports_dir} holds no *.findings.json to reuse as the {label} run")
    stamp = read_stamp(reports_dir)
    return BatchRun(label, str(reports_dir), None, None, stamp, None)


def fresh_findings(run: BatchRun, audits: Sequence[str]) -> dict[str, Any]:
    """The run's findings; a file older than a run made here (the runner keeps it when a notebook fails) is left
    out, so the comparison says the run wrote none instead of comparing a stale result."""
    found = {audit: payload for audit, payload in load_findings_by_audit(Path(run.reports_dir)).items()
             if audit in audits}
    if run.started_at is None:
        return found
    fresh = {audit: payload for audit, payload in found.items()
             if str((payload.get("stamp") or {}).get("started_at", "")) >= run.started_at}
    for audit in sorted(set(found) - set(fresh)):
        print(f"[{run.label}] {audit}.findings.json predates this run (the runner keeps it when a notebook fails): "
              "left out", flush=True)
    return fresh


def _ids_text(ids: Sequence[str], limit: int = 30) -> str:
    shown = ", ".join(ids[:limit])
    return (shown + f", … {len(ids) - limit} more" if len(ids) > limit else shown) or "none"


def _state_text(split: ObservedSplit, state: str, only: Sequence[str] | None = None) -> str:
    ids = sort_ids(split.timing.get(state, ()) if only is None else only)
    return _ids_text([f"{i} ({split.flip_factors[i]:.2f}x)" if i in split.flip_factors else i for i in ids], 10)


def comparison_lines(comparison: SplitComparison, labels: tuple[str, str] = ("idle", "hog")) -> list[str]:
    """One check's sets side by side; `labels` name the reference run and the compared one."""
    first, second = labels
    check = "(any check)" if comparison.check == "*" else comparison.check
    head = f"  {check}: {comparison.agreement.upper().replace('_', ' ')}"
    if comparison.agreement == "not_comparable":
        reason = comparison.reason.replace("idle run", f"{first} run").replace("hog run", f"{second} run")
        return [head + f" ({reason})"]
    idle, hog = comparison.idle, comparison.hog
    assert idle is not None and hog is not None
    lines = [head + f" (unit: {idle.unit}; from {idle.source})", f"    {'':22}{first:>11}{second:>11}"]
    for name, idle_ids, hog_ids, difference in (
            ("deterministic", idle.deterministic, hog.deterministic, comparison.deterministic),
            ("timing confirmed", idle.confirmed, hog.confirmed, comparison.confirmed)):
        verdict = (f"identical: {_ids_text(sort_ids(idle_ids))}" if difference.identical else
                   f"only {first}: {_ids_text(list(difference.only_idle))}; "
                   f"only {second}: {_ids_text(list(difference.only_hog))}")
        lines.append(f"    {name:22}{len(idle_ids):>11}{len(hog_ids):>11}   {verdict}")
    band = comparison.confirmed_at_band
    if not band.identical:
        lines.append(f"    {'(moved across band)':22}{len(band.only_idle):>11}{len(band.only_hog):>11}   confirmed "
                     f"only in {first}: {_state_text(idle, 'confirmed', band.only_idle)}; only in {second}: "
                     f"{_state_text(hog, 'confirmed', band.only_hog)} (borderline in the other run, flip factors "
                     "within the borderline margin: does not decide)")
    for state in TIMING_STATES[1:]:
        counts = (idle.count(state), hog.count(state))
        if state == "unmeasured" and counts == (0, 0):
            continue
        note = f"   {first}: {_state_text(idle, state)}; {second}: {_state_text(hog, state)}" if any(counts) else ""
        lines.append(f"    {'timing ' + state.replace('_', ' '):22}{counts[0]:>11}{counts[1]:>11}{note}")
    return lines


def run_lines(runs: Sequence[BatchRun]) -> list[str]:
    lines = [f"{'run':11}{'hog':>5}{'exit':>8}{'wall s':>9}{'stamp wall s':>14}{'load_start':>12}{'load_end':>10}"
             f"{'cpus':>6}{'workers':>9}  reports"]
    for run in runs:
        stamp = run.stamp or {}
        exit_text = "reused" if run.exit_code is None else str(run.exit_code)
        hog_text = "?" if run.hog_processes is None else str(run.hog_processes)
        wall = "-" if run.wall_s is None else f"{run.wall_s:.1f}"
        lines.append(f"{run.label:11}{hog_text:>5}{exit_text:>8}{wall:>9}{stamp.get('wall_s', '-'):>14}"
                     f"{stamp.get('load_start', '-'):>12}{stamp.get('load_end', '-'):>10}{stamp.get('cpus', '-'):>6}"
                     f"{stamp.get('workers', '-'):>9}  {run.reports_dir}")
    return lines


Pairs = Sequence[tuple[tuple[str, str], Sequence[SplitComparison]]]  # (reference, compared) -> comparisons


def report(runs: Sequence[BatchRun], pairs: Pairs) -> str:
    lines = ["", "runs (load = 1-minute load average from the runner's stamp; the hog's own load shows in load_end):",
             *run_lines(runs), ""]
    for labels, comparisons in pairs:
        lines.append(f"== {labels[0]} vs {labels[1]} " + "=" * 60)
        for audit in dict.fromkeys(c.audit for c in comparisons):
            lines.append(f"{audit}:")
            for comparison in (c for c in comparisons if c.audit == audit):
                lines += comparison_lines(comparison, labels)
        lines.append(f"verdict sets {labels[0]} vs {labels[1]}: "
                     f"{overall_agreement(comparisons).upper().replace('_', ' ')}")
    for run in runs:
        stamp = run.stamp or {}
        if run.label == "idle" and stamp.get("overloaded"):
            lines.append(f"warning: the {run.label} run was not idle: its load ({stamp.get('load_start')} -> "
                         f"{stamp.get('load_end')}) exceeded its {stamp.get('cpus')} cores")
    failed = [run.label for run in runs if run.exit_code not in (None, 0)]
    if failed:
        lines.append(f"runner failed in the {' and '.join(failed)} run(s): see its output above")
    lines.append(f"verdict sets, every pair: {overall_agreement(_flat(pairs)).upper().replace('_', ' ')}")
    return "\n".join(lines)


def _flat(pairs: Pairs) -> list[SplitComparison]:
    return [comparison for _, comparisons in pairs for comparison in comparisons]


def exit_code_for(runs: Sequence[BatchRun], pairs: Pairs) -> int:
    agreement = overall_agreement(_flat(pairs))
    if agreement == "identical" and any(run.exit_code not in (None, 0) for run in runs):
        return EXIT_NOT_COMPARABLE
    return EXIT_CODES[agreement]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--audits", nargs="+", default=list(DEFAULT_AUDITS), metavar="AUDIT",
                        help=f"audits to run (default: {' '.join(DEFAULT_AUDITS)})")
    parser.add_argument("--param", "-p", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"),
                        help="passed to the runner as -p KEY VALUE (AUDIT.KEY for one audit), e.g. a task subset")
    parser.add_argument("--hog", type=int, default=os.cpu_count() or 1, metavar="N",
                        help="busy-loop processes during the second run (default: os.cpu_count())")
    parser.add_argument("--out", type=Path, help="folder for the idle/ and hog/ reports folders "
                                                 "(default: <reports dir>/verdict_stability)")
    idle = parser.add_mutually_exclusive_group()
    idle.add_argument("--skip-idle", action="store_true", help="reuse <out>/idle from an earlier run of this script")
    idle.add_argument("--idle-from", type=Path, metavar="DIR", help="reuse this reports folder as the idle run")
    parser.add_argument("--hog-from", type=Path, metavar="DIR",
                        help="reuse this reports folder as the hog run (no audit runs at all with --idle-from)")
    parser.add_argument("--concurrent", action=argparse.BooleanOptionalAction, default=True,
                        help="run a second batch of the same audits (its own reports folder, same mirror and data "
                             "cache) at the same time as the hog run, and compare it with the idle run too "
                             "(default: on)")
    parser.add_argument("--concurrent-from", type=Path, metavar="DIR",
                        help="reuse this reports folder as the concurrent run")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the runs and comparisons as JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.hog < 1 and args.hog_from is None:
        build_parser().error("--hog must be at least 1")
    out = (args.out or paths.reports_dir() / "verdict_stability").resolve()
    idle_dir = args.idle_from.resolve() if args.idle_from else out / "idle"
    hog_dir = args.hog_from.resolve() if args.hog_from else out / "hog"
    passed_on = "; ".join(f"{name}={os.environ.get(name, '')!r}" for name in ("AUDIT_MIRROR", "AUDIT_DATA_CACHE"))
    print(f"{os.cpu_count()} CPUs, load now {os.getloadavg()[0]:.2f}; {passed_on}", flush=True)
    # SIGTERM (and a closed terminal) end the script through its `finally` blocks, like Ctrl-C does
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda number, _frame: sys.exit(128 + number))
    runs = []
    if args.skip_idle or args.idle_from:
        runs.append(reused_run("idle", idle_dir))
    else:
        runs.append(run_batch("idle", runner_command(args.audits, args.param, idle_dir), idle_dir))
    concurrent_dir = args.concurrent_from.resolve() if args.concurrent_from else out / "concurrent"
    concurrent = None
    if args.concurrent and not args.concurrent_from and not args.hog_from:
        concurrent = ("concurrent", runner_command(args.audits, args.param, concurrent_dir), concurrent_dir)
    if args.hog_from:
        runs.append(reused_run("hog", hog_dir))
    else:
        runs += run_under_hog("hog", runner_command(args.audits, args.param, hog_dir), hog_dir, args.hog, concurrent)
    if args.concurrent_from:
        runs.append(reused_run("concurrent", concurrent_dir))
    findings = {run.label: fresh_findings(run, args.audits) for run in runs}
    pairs = [(("idle", run.label), compare_findings(findings["idle"], findings[run.label], args.audits))
             for run in runs[1:]]
    print(report(runs, pairs))
    code = exit_code_for(runs, pairs)
    if args.json:
        args.json.write_text(json.dumps({"runs": [asdict(run) for run in runs], "agreement":
                                         overall_agreement(_flat(pairs)), "exit_code": code,
                                         "pairs": [{"runs": list(labels), "agreement": overall_agreement(found),
                                                    "comparisons": [c.to_json() for c in found]}
                                                   for labels, found in pairs]}, indent=2) + "\n",
                             encoding="utf-8")
        print(f"JSON: {args.json}")
    return code


if __name__ == "__main__":
    sys.exit(main())
