"""`python -m audit_lib {run,list,fetch,sources,sandbox}`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from audit_lib import paths, sandbox
from audit_lib.data import cli as data_cli
from audit_lib.errors import ParameterError
from audit_lib.findings import STATUSES
from audit_lib.runner import (
    DEFAULT_CELL_TIMEOUT_S,
    EXIT_BAD_ARGUMENTS,
    EXIT_BUSY,
    EXIT_GATE,
    Gate,
    ReportsFolderBusyError,
    missing_inputs,
    parse_fail_on,
    rejected_inputs,
    run_audits,
)
from audit_lib.runner.catalogue import discover_audits
from audit_lib.runner.slowest import slowest_checks, slowest_lines
from audit_lib.verdict_cache.tally import cache_lines


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m audit_lib",
                                     description="Audit code-generation benchmarks with parameterised notebooks.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = subparsers.add_parser(
        "run", help="execute audit notebooks and write HTML reports and reports/index.html",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="CI gates (--fail-on takes a set of statuses, not a threshold):\n"
               "  --fail-on skipped        all data present: fail when any check lacks an input\n"
               "  --fail-on error          no broken checks: fail when any check could not run\n"
               "  --fail-on defect         no defects\n"
               "  --fail-on skipped,error  both of the first two; add quirk to fail on quirks too\n"
               "Quirks and defects found on SYNTHETIC data never fail a gate (nor are JUnit failures) unless\n"
               "--include-synthetic; error and skipped gate on any data.\n\n"
               "exit codes: 0 every notebook ran (and the --fail-on gate passed); 1 a notebook failed (this wins\n"
               "over 3); 2 bad arguments, refused before any kernel starts (reports/ untouched); 3 the --fail-on\n"
               f"gate tripped; {EXIT_BUSY} --no-wait and another run holds the reports folder; 130 interrupted")
    run.add_argument("audits", nargs="*", metavar="AUDIT", help="audits to run (default: all; see `list`)")
    run.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"),
                     help="set a notebook parameter (KEY for every selected audit declaring it, AUDIT.KEY for one)")
    run.add_argument("--only", type=_check_list, default=(), metavar="CHECK[,CHECK...]",
                     help="run only these checks and what they need (e.g. --only your_samples); the report holds "
                          "only them")
    run.add_argument("--mirror", help="local mirror folder laid out as <dataset>/<file> (sets AUDIT_MIRROR)")
    run.add_argument("--executor", help="executor for sandbox jobs: local, dask-local, dask://HOST:PORT "
                                        "(sets AUDIT_EXECUTOR and the notebooks' `executor` parameter)")
    run.add_argument("--with-code", action="store_true", help="keep code cells in the HTML reports")
    run.add_argument("--jobs", "-j", type=int, default=1, help="notebooks to run at once (default 1)")
    run.add_argument("--fail-on", type=parse_fail_on, metavar="STATUS[,STATUS...]",
                     help="exit 3 when any check has one of these statuses (skipped, quirk, error, defect; a comma "
                          "list). A single word means exactly that status: `--fail-on skipped` fails only on a "
                          "missing input, not on findings: list every status you mean)")
    run.add_argument("--include-synthetic", action="store_true",
                     help="let quirks and defects found on SYNTHETIC data fail the gate and be JUnit failures")
    run.add_argument("--no-wait", action="store_true",
                     help=f"refuse at once (exit {EXIT_BUSY}) when another run holds the reports folder, instead "
                          "of waiting for it")
    run.add_argument("--no-cache", action="store_true",
                     help="recompute everything: re-run audits whose code, data and parameters are unchanged, and "
                          "serve no sandbox verdict from data_cache/verdicts/ (fresh ones are still stored)")
    run.add_argument("--reports-dir", type=Path, help="where to write reports (default: reports/)")
    run.add_argument("--junit", type=Path, metavar="FILE",
                     help="also write a JUnit XML file: one testsuite per audit, one testcase per check "
                          "(defect = failure, error = error, skipped = skipped, quirk passes; a check on synthetic "
                          "data has the property synthetic=true)")
    run.add_argument("--kernel", help="Jupyter kernel (default: benchaudit when registered, else python3)")
    run.add_argument("--cell-timeout", type=int, default=DEFAULT_CELL_TIMEOUT_S,
                     help=f"seconds one cell may run (default {DEFAULT_CELL_TIMEOUT_S})")
    run.set_defaults(func=_run)

    listing = subparsers.add_parser("list", help="show the audits and each notebook's parameters")
    listing.set_defaults(func=_list)

    diff = subparsers.add_parser(
        "diff", help="checks whose status or observed value changed between two runs",
        epilog=f"exit codes: 0 compared (any changes are printed); 2 bad or missing folders; {EXIT_GATE} "
               "--fail-on-change and a check changed. Folders are printed relative to the reports folder.")
    diff.add_argument("old", nargs="?", help="a run folder (reports/runs/<time>) or a reports folder")
    diff.add_argument("new", nargs="?", help="the same; default: the last two recorded runs")
    diff.add_argument("--reports-dir", type=Path, help="where the runs are recorded (default: reports/)")
    diff.add_argument("--fail-on-change", action="store_true",
                      help=f"exit {EXIT_GATE} when any check changed (default: exit 0 whatever changed)")
    diff.set_defaults(func=_diff)

    data_cli.register(subparsers)
    sandbox.register_cli(subparsers)
    return parser


def _check_list(value: str) -> tuple[str, ...]:
    checks = tuple(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))
    if not checks:
        raise argparse.ArgumentTypeError("name at least one check id (e.g. --only your_samples)")
    return checks


def _run(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise ParameterError(f"--jobs must be at least 1, got {args.jobs}", field="jobs")
    try:
        summary = run_audits(args.audits, [tuple(pair) for pair in args.parameter], mirror=args.mirror,
                             executor=args.executor, with_code=args.with_code, jobs=args.jobs,
                             reports_dir=args.reports_dir, kernel_name=args.kernel, cell_timeout_s=args.cell_timeout,
                             junit=args.junit, include_synthetic=args.include_synthetic,
                             wait_for_lock=not args.no_wait, only=args.only, no_cache=args.no_cache)
    except ReportsFolderBusyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BUSY
    for outcome in summary.outcomes:
        if outcome.reused_from is not None:
            print(f"reused  {outcome.audit}  (its report from run {outcome.reused_from}: code, data and parameters "
                  "unchanged; --no-cache re-runs it)")
        elif outcome.ok:
            print(f"ok      {outcome.audit}  ({outcome.duration_s:.1f}s)")
        else:
            assert outcome.failure is not None
            print(f"FAILED  {outcome.audit}  at {outcome.failure.describe()}")
    for audit, statuses in summary.check_statuses.items():
        tally = ", ".join(f"{statuses.count(status)} {status}" for status in STATUSES if status in statuses)
        print(f"        {audit}: {tally or 'no checks'}")
    missing = missing_inputs(summary.checks)
    if missing:
        print(f"missing data ({len(missing)} file(s); their checks are reported as skipped). Set AUDIT_MIRROR or "
              "--mirror to a folder laid out as <dataset>/<file>, or fetch them online with "
              "`python -m audit_lib fetch`:")
        for dataset, files, audits in _group_by_dataset(missing):
            shown = ", ".join(files[:4]) + (f" and {len(files) - 4} more" if len(files) > 4 else "")
            print(f"    {dataset}/: {shown}  (needed by {', '.join(audits)})")
    rejected = rejected_inputs(summary.checks)
    if rejected:
        print(f"rejected data ({len(rejected)} file(s): a copy was found but refused, so their checks are reported "
              "as skipped). Each skipped check's reason names the copy; replace it with a good one, then run "
              "`python -m audit_lib fetch --refresh DATASET` (an unpinned file that changed upstream: "
              "`python -m audit_lib fetch --accept DATASET/FILE`):")
        for key, (code, audits) in sorted(rejected.items()):
            print(f"    {key}: {REFUSAL_TEXT.get(code, code)}  (needed by {', '.join(audits)})")
    fresh = {outcome.audit for outcome in summary.outcomes if outcome.ok and outcome.reused_from is None}
    for line in cache_lines({audit: checks for audit, checks in summary.checks.items() if audit in fresh}):
        print(line)
    for line in slowest_lines(slowest_checks({audit: checks for audit, checks in summary.finished_checks.items()
                                              if audit in fresh})):
        print(line)
    gate = Gate.of(args.fail_on, include_synthetic=args.include_synthetic)
    if gate is not None:
        for audit, count in summary.gate_hits(gate).items():
            print(f"--fail-on {gate.label}: {audit} has {count} check(s) with status {gate.label.replace(',', ' or ')}")
        for audit, count in summary.gate_exempted(gate).items():
            print(f"--fail-on {gate.label}: {audit} has {count} finding(s) on SYNTHETIC data, not gated "
                  "(--include-synthetic gates them)")
    print(f"reports: {summary.index_path}")
    return summary.exit_code(gate)


REFUSAL_TEXT = {"checksum_mismatch": "checksum does not match (pin or lock.json)",
                "corrupt_file": "does not parse (truncated or damaged)"}


def _group_by_dataset(missing: dict[str, list[str]]) -> list[tuple[str, list[str], list[str]]]:
    grouped: dict[str, tuple[list[str], list[str]]] = {}
    for key, audits in sorted(missing.items()):
        dataset, _, file = key.partition("/")
        files, users = grouped.setdefault(dataset, ([], []))
        files.append(file)
        users.extend(audit for audit in audits if audit not in users)
    return [(dataset, files, users) for dataset, (files, users) in grouped.items()]


def _list(args: argparse.Namespace) -> int:
    audits = discover_audits()
    if not audits:
        print("no audits are registered (audit_lib.benchmarks)")
        return 0
    for audit in audits.values():
        suffix = f" — {audit.title}" if audit.title else ""
        print(f"{audit.name}{suffix}")
        root = paths.project_root()
        shown = audit.notebook.relative_to(root) if audit.notebook.is_relative_to(root) else audit.notebook
        print(f"    notebook: {shown}")
        for name, value in audit.fixed_params.items():
            print(f"    fixed   {name} = {value!r}")
        for parameter in audit.parameters:
            if parameter.name in audit.fixed_params:
                continue
            help_text = f"  # {parameter.help}" if parameter.help else ""
            print(f"    -p {parameter.name} ({parameter.type_name}, default {parameter.default!r}){help_text}")
    return 0


def _diff(args: argparse.Namespace) -> int:
    from audit_lib.runner.history import diff_runs, resolve_diff_folders, shown_folder

    reports_dir = args.reports_dir or paths.reports_dir()
    old, new = resolve_diff_folders(reports_dir, args.old, args.new)
    changes = diff_runs(old, new)
    print(f"{shown_folder(old, reports_dir)} -> {shown_folder(new, reports_dir)}: {len(changes)} check(s) changed")
    for change in changes:
        print(change.describe())
    return EXIT_GATE if args.fail_on_change and changes else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except ParameterError as exc:  # includes UnknownAuditError: raised before any kernel starts
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_ARGUMENTS
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
