"""Time `make audit`'s work cold (empty data cache) and warm (the same again, nothing changed), on this machine.

Each round runs the batch runner's `run_audits` over every audit (or `--audits a,b`), `--jobs 2` as `make audit`
does, with the mirror from AUDIT_MIRROR (or `--mirror`): first cold, with a new empty temporary `AUDIT_DATA_CACHE`
and reports folder, then warm, again in the same two folders. It prints both passes' totals (wall; CPU of this
script and of every process it waited for, directly or not), the split per audit (the runner's wall per notebook)
and per check (each check's `meta.cost`: wall, kernel CPU + child CPU, sandbox jobs), whether the warm findings
equal the cold ones (status and observed, with the golden files' volatile keys dropped), and the machine's CPU
count and load average at the start and end of each pass. With `--repeat N` the tables show medians of N rounds.
The warm pass reuses unchanged audits' reports (`runner.reuse`); `--verdicts-pass` first times a `warm-verdicts` pass
that runs every notebook again with its sandbox verdicts from the verdict cache (in the totals only).

Every figure is a measurement of this run on this machine at its load, never a property of the benchmark.

Usage: AUDIT_MIRROR=../shared/data .venv/bin/python perf/bench_audit.py [--audits A,B] [--repeat N] [--jobs N]
    [--json OUT] [--keep] [--verdicts-pass]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from audit_lib.check_cost import CheckCost  # noqa: E402

EXIT_OK, EXIT_FAILED, EXIT_BAD_ARGUMENTS = 0, 1, 2
PASSES = ("cold", "warm")


@dataclass(frozen=True)
class CheckTime:
    """One check's `meta.cost` in one pass."""

    audit: str
    check: str
    wall_s: float
    cpu_s: float  # kernel + child processes
    sandbox_jobs: int | None


@dataclass(frozen=True)
class AuditTime:
    """One audit notebook in one pass: the runner's wall time, whether it finished, and its load's cost."""

    audit: str
    wall_s: float
    ok: bool
    load: CheckTime | None = None  # the session's load of the inputs (findings' `load_cost`), check "<load>"


@dataclass(frozen=True)
class PassTime:
    """One cold or warm pass of one round."""

    kind: str  # "cold" | "warm"
    round: int
    wall_s: float
    cpu_s: float  # this script and every ended process it waited for (RUSAGE_SELF + RUSAGE_CHILDREN)
    load_start: tuple[float, float, float]
    load_end: tuple[float, float, float]
    audits: tuple[AuditTime, ...]
    checks: tuple[CheckTime, ...]
    findings_differ: tuple[str, ...] | None = None  # warm only: "audit.check" whose stable findings differ from cold


def load_time(audit: str, findings: Mapping[str, Any] | None) -> CheckTime | None:
    """What loading the audit's inputs cost (`load_cost` in its findings), or None when not recorded."""
    cost = CheckCost.from_meta({"cost": (findings or {}).get("load_cost")})
    return None if cost is None else CheckTime(audit, "<load>", cost.wall_s, cost.total_cpu_s, cost.sandbox_jobs)


def check_times(findings_by_audit: Mapping[str, Mapping[str, Any]]) -> tuple[CheckTime, ...]:
    """Every check's recorded cost, in findings order (a check that recorded none is left out)."""
    rows = []
    for audit, findings in findings_by_audit.items():
        for check in findings.get("checks", []):
            cost = CheckCost.from_meta(check.get("meta"))
            if cost is not None:
                rows.append(CheckTime(audit, str(check["id"]), cost.wall_s, cost.total_cpu_s, cost.sandbox_jobs))
    return tuple(rows)


def differing_checks(cold: Mapping[str, Mapping[str, Any]], warm: Mapping[str, Mapping[str, Any]]) -> tuple[str, ...]:
    """The checks (`audit.check`) whose status or observed value differs between two passes, or that one lacks.

    The golden files' volatile keys and timing keys are left out (`tests.golden_findings.stable_checks`)."""
    from tests.golden_findings import stable_checks

    differ = []
    for audit in sorted(set(cold) | set(warm)):
        before = stable_checks(cold[audit]) if audit in cold else {}
        after = stable_checks(warm[audit]) if audit in warm else {}
        differ += [f"{audit}.{check}" for check in sorted(set(before) | set(after))
                   if before.get(check) != after.get(check)]
    if set(cold) != set(warm):
        differ += [f"{audit}.<findings>" for audit in sorted(set(cold) ^ set(warm))]
    return tuple(differ)


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def median_jobs(values: Sequence[int | None]) -> int | None:
    counted = [value for value in values if value is not None]
    return int(statistics.median_low(counted)) if counted and len(counted) == len(values) else None


def totals_lines(passes: Sequence[PassTime], cpus: int) -> list[str]:
    """The machine, then one line per pass: wall, CPU, load at start and end, failed audits, findings check."""
    lines = [f"machine: {cpus} CPU(s); figures are this run's on this machine at its load (machine-dependent)"]
    for item in passes:
        failed = [a.audit for a in item.audits if not a.ok]
        line = (f"round {item.round} {item.kind:<13}  wall {item.wall_s:8.1f} s  CPU {item.cpu_s:8.1f} s  "
                f"load {item.load_start[0]:.2f} -> {item.load_end[0]:.2f}")
        if failed:
            line += f"  FAILED: {', '.join(failed)}"
        if item.findings_differ is not None:
            line += ("  findings: same as cold" if not item.findings_differ
                     else f"  findings differ from cold: {', '.join(item.findings_differ)}")
        lines.append(line)
    rounds = sorted({item.round for item in passes})
    if len(rounds) > 1:
        for kind in PASSES:
            chosen = [item for item in passes if item.kind == kind]
            lines.append(f"median of {len(chosen)} {kind:<4}  wall {median([p.wall_s for p in chosen]):8.1f} s  "
                         f"CPU {median([p.cpu_s for p in chosen]):8.1f} s")
    return lines


def audit_table(passes: Sequence[PassTime]) -> list[str]:
    """Per audit, cold and warm (medians): the notebook's wall time, its load's, and its load's and checks' CPU and
    sandbox jobs."""
    audits = list(dict.fromkeys(a.audit for item in passes for a in item.audits))
    lines = [f"{'audit':<28} {'cold wall':>10} {'warm wall':>10} {'cold load':>10} {'warm load':>10} "
             f"{'cold CPU':>10} {'warm CPU':>10} {'cold jobs':>10} {'warm jobs':>10}"]
    for audit in audits:
        cells = {}
        for kind in PASSES:
            runs = [(a, item) for item in passes if item.kind == kind for a in item.audits if a.audit == audit]
            parts = [([a.load] if a.load else []) + [c for c in item.checks if c.audit == audit] for a, item in runs]
            cells[f"{kind}_wall"] = median([a.wall_s for a, _ in runs])
            cells[f"{kind}_load"] = median([a.load.wall_s for a, _ in runs if a.load])
            cells[f"{kind}_cpu"] = median([sum(c.cpu_s for c in timed) for timed in parts])
            cells[f"{kind}_jobs"] = median_jobs([_jobs_sum(timed) for timed in parts])
        lines.append(f"{audit:<28} {_secs(cells['cold_wall'])} {_secs(cells['warm_wall'])} "
                     f"{_secs(cells['cold_load'])} {_secs(cells['warm_load'])} "
                     f"{_secs(cells['cold_cpu'])} {_secs(cells['warm_cpu'])} "
                     f"{_jobs_text(cells['cold_jobs']):>10} {_jobs_text(cells['warm_jobs']):>10}")
    lines.append("(wall: the notebook's, kernel start to its last cell; load: the session loading its inputs; CPU "
                 "and jobs: its load's and its checks' meta.cost, kernel + child processes)")
    return lines


def check_table(passes: Sequence[PassTime], limit: int | None = None) -> list[str]:
    """Per check (and each audit's `<load>`), slowest cold first: wall, CPU and jobs cold and warm (medians over
    rounds); `limit` rows."""
    keys = list(dict.fromkeys((c.audit, c.check) for item in passes for c in _timed(item)))
    rows = []
    for key in keys:
        row: dict[str, Any] = {"name": f"{key[0]}.{key[1]}"}
        for kind in PASSES:
            found = [c for item in passes if item.kind == kind for c in _timed(item) if (c.audit, c.check) == key]
            row[f"{kind}_wall"] = median([c.wall_s for c in found])
            row[f"{kind}_cpu"] = median([c.cpu_s for c in found])
            row[f"{kind}_jobs"] = median_jobs([c.sandbox_jobs for c in found])
        rows.append(row)
    rows.sort(key=lambda row: (-_orderable(row["cold_wall"]), row["name"]))
    width = max([len(row["name"]) for row in rows] + [len("check")])
    lines = [f"{'check':<{width}} {'cold wall':>10} {'warm wall':>10} {'cold CPU':>10} {'warm CPU':>10} "
             f"{'cold jobs':>10} {'warm jobs':>10}"]
    for row in rows[:limit]:
        lines.append(f"{row['name']:<{width}} {_secs(row['cold_wall'])} {_secs(row['warm_wall'])} "
                     f"{_secs(row['cold_cpu'])} {_secs(row['warm_cpu'])} "
                     f"{_jobs_text(row['cold_jobs']):>10} {_jobs_text(row['warm_jobs']):>10}")
    if limit is not None and len(rows) > limit:
        lines.append(f"... and {len(rows) - limit} faster check(s) (--checks 0 lists all)")
    return lines


def _timed(item: PassTime) -> list[CheckTime]:
    """A pass's loads (`<audit>.<load>`) and checks."""
    return [a.load for a in item.audits if a.load is not None] + list(item.checks)


def _jobs_sum(checks: Sequence[CheckTime]) -> int | None:
    return None if any(c.sandbox_jobs is None for c in checks) else sum(c.sandbox_jobs or 0 for c in checks)


def _secs(value: float) -> str:
    """A table cell of seconds, `-` where no pass measured it."""
    return f"{'-':>10}" if value != value else f"{value:>8.1f} s"


def _jobs_text(jobs: int | None) -> str:
    return "-" if jobs is None else f"{jobs:,}"


def _orderable(value: float) -> float:
    return -1.0 if value != value else value  # a NaN (no such pass) sorts last


# ------------------------------------------------------------------------------------------------ running


def run_pass(kind: str, round_number: int, audits: Sequence[str], *, mirror: Path, cache: Path, reports: Path,
             jobs: int, cold_findings: Mapping[str, Mapping[str, Any]] | None = None, reuse_reports: bool = True
             ) -> tuple[PassTime, dict[str, dict[str, Any]]]:
    """One `run_audits` over `audits` with `cache` as AUDIT_DATA_CACHE; its times and its findings.

    `reuse_reports=False` runs every notebook even when nothing changed (sandbox verdicts still come from the
    verdict cache): the `warm-verdicts` pass."""
    from audit_lib.runner import run_audits

    os.environ["AUDIT_DATA_CACHE"] = str(cache)
    load_start = os.getloadavg()
    cpu_before = _cpu_s()
    started = time.monotonic()
    summary = run_audits(list(audits), mirror=mirror, jobs=jobs, reports_dir=reports,
                         progress=sys.stderr if sys.stderr.isatty() else None, reuse_reports=reuse_reports)
    wall = time.monotonic() - started
    cpu = _cpu_s() - cpu_before
    load_end = os.getloadavg()
    findings = {o.audit: json.loads((reports / f"{o.audit}.findings.json").read_text(encoding="utf-8"))
                for o in summary.outcomes if o.ok and (reports / f"{o.audit}.findings.json").is_file()}
    timed = PassTime(kind, round_number, wall, cpu, load_start, load_end,
                     tuple(AuditTime(o.audit, o.duration_s, o.ok, load_time(o.audit, findings.get(o.audit)))
                           for o in summary.outcomes), check_times(findings),
                     differing_checks(cold_findings, findings) if cold_findings is not None else None)
    return timed, findings


def _cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--audits", help="comma list of audits (default: every audit, as `make audit`)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of cold + warm (tables show medians)")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks at once (default 2, as `make audit`)")
    parser.add_argument("--mirror", type=Path, help="the data mirror (default: AUDIT_MIRROR)")
    parser.add_argument("--json", type=Path, help="also write every pass's figures here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary caches and reports (printed)")
    parser.add_argument("--checks", type=int, default=30, help="list the N slowest checks (default 30; 0: all)")
    parser.add_argument("--verdicts-pass", action="store_true",
                        help="between cold and warm, also time a `warm-verdicts` pass: every notebook run again, "
                             "sandbox verdicts from the verdict cache, no report reused (in the totals only)")
    args = parser.parse_args(argv)
    mirror = args.mirror or (Path(os.environ["AUDIT_MIRROR"]) if os.environ.get("AUDIT_MIRROR") else None)
    if mirror is None or not mirror.is_dir():
        print("error: set AUDIT_MIRROR or --mirror to the data mirror (the bench never downloads)", file=sys.stderr)
        return EXIT_BAD_ARGUMENTS
    if args.repeat < 1 or args.jobs < 1:
        print("error: --repeat and --jobs must be at least 1", file=sys.stderr)
        return EXIT_BAD_ARGUMENTS
    from audit_lib.runner.catalogue import discover_audits

    known = list(discover_audits())
    audits = [name.strip() for name in args.audits.split(",") if name.strip()] if args.audits else known
    unknown = [name for name in audits if name not in known]
    if unknown or not audits:
        print(f"error: unknown audit(s) {', '.join(unknown) or '(none named)'}; known: {', '.join(known)}",
              file=sys.stderr)
        return EXIT_BAD_ARGUMENTS
    passes: list[PassTime] = []
    for round_number in range(1, args.repeat + 1):
        scratch = Path(tempfile.mkdtemp(prefix="bench-audit-"))
        try:
            cold, cold_findings = run_pass("cold", round_number, audits, mirror=mirror, cache=scratch / "cache",
                                           reports=scratch / "reports", jobs=args.jobs)
            passes.append(cold)
            if args.verdicts_pass:
                passes.append(run_pass("warm-verdicts", round_number, audits, mirror=mirror, cache=scratch / "cache",
                                       reports=scratch / "reports", jobs=args.jobs, cold_findings=cold_findings,
                                       reuse_reports=False)[0])
            warm, _ = run_pass("warm", round_number, audits, mirror=mirror, cache=scratch / "cache",
                               reports=scratch / "reports", jobs=args.jobs, cold_findings=cold_findings)
            passes.append(warm)
        finally:
            if args.keep:
                print(f"kept: {scratch}", file=sys.stderr)
            else:
                shutil.rmtree(scratch, ignore_errors=True)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    print("\n".join(totals_lines(passes, cpus)))
    print()
    print("\n".join(audit_table(passes)))
    print()
    print("\n".join(check_table(passes, args.checks or None)))
    if args.json:
        args.json.write_text(json.dumps({"cpus": cpus, "audits": audits, "jobs": args.jobs,
                                         "passes": [asdict(p) for p in passes]}, indent=1) + "\n", encoding="utf-8")
    failed = any(not a.ok for item in passes for a in item.audits)
    return EXIT_FAILED if failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
