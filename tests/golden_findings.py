"""Golden findings: each check's status and the stable part of its `observed`, pinned per audit run.

A golden file `tests/golden/<name>.json` holds what a full (or fixed-subset) run on the real-data mirror
concluded. `compare` lists every difference check by check; `update` is the only way to change a golden file,
and it appends the old and new values with a required one-line reason to the file's `history`.

    python -m tests.golden_findings update NAME --reason "why the figures changed"   # runs it on AUDIT_MIRROR
    python -m tests.golden_findings update NAME --findings FILE --reason "..."       # or takes a finished run
    python -m tests.golden_findings compare NAME [--findings FILE]

Volatile values (timings, and figures that depend on how fast the machine is) are left out by rule, in one
place (`VOLATILE`), so a golden file never pins a property of the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"
# HumanEval+ tasks where OpenAI's canonical fails by value (/22, /91, /125, /140: also what -Mini stops detecting)
# or raises (/64), contract violations (/32, /116), the version diff (/1, /28), errata that change the canonical
# (/95, /163), and /0. Timeout-only tasks (/31, /39, /55, ...) are slow and machine-dependent: `make regression`.
HUMANEVAL_SUBSET = ",".join(f"HumanEval/{n}" for n in (0, 1, 22, 28, 32, 64, 91, 95, 116, 125, 140, 163))
# MBPP+ contract violations (/267, /734), an empty plus_input (/793), special oracles (/558, /581), a canonical
# that fails MBPP's own assertion (/120), one whose original tests assert on a returned `re.Match` (/737: its truth
# value is the job's `bool`), and /2.
MBPP_SUBSET = ",".join(f"Mbpp/{n}" for n in (2, 120, 267, 558, 581, 734, 737, 793))
# One cheat per way of winning that no clock decides: an exit (os._exit, atexit), a lying __eq__, a patched comparison
# helper, the readable answer key and a forged result channel; the timing cheats are left to `make audit`.
EXPLOITS_SUBSET = ("os_exit_in_call,atexit_hook,always_equal,patch_numpy_allclose,answer_key_from_package,"
                   "forge_result_channel")
# ... and speed curves (failing counts on machines 0.25x-4x as fast, computed from this machine's CPU times)
TIMING_KEY = re.compile(r"(^|_)(s|ms|sec|secs|seconds|duration|elapsed|wall|cpu|time|times|timing|speed)($|_)")
DROPPED = "<volatile>"


@dataclass(frozen=True)
class VolatileRule:
    """What of one check depends on the machine: its status, or keys anywhere in its observed value."""

    status: bool = False
    keys: tuple[str, ...] = ()


# Figures that depend on machine speed (EvalPlus's time limits are wall-clock), keyed (audit, check id). Timing
# verdicts are confirmed on CPU time by quiet reruns (issue 14): their lists and counts (keys with `timing`) and the
# speed curves are dropped by `TIMING_KEY`; the deterministic lists are pinned unless named here.
_EVALPLUS_VOLATILE: dict[str, VolatileRule] = {
    # a task can fail by timeout only, so the count of failing tasks moves with load; wrong values do not. The
    # timing verdicts come from quiet reruns timed on this machine (`tasks_failing_deterministic` is pinned)
    "original_canonical_vs_plus": VolatileRule(keys=("tasks_disagreeing", "timeout", "tasks_failing_timing",
                                                     "timing_confirmed", "timing_borderline", "timing_not_a_failure",
                                                     "timing_unmeasured", "speed_curve")),
    # which tasks a reduced variant "accepts" includes the timeout-only ones
    "variants": VolatileRule(keys=("tasks_detection_lost", "tasks_detection_lost_timeout_only",
                                   "tasks_detection_lost_deterministic", "tasks_detection_lost_timing",
                                   "tasks_detection_undetermined", "reference_failing_tasks", "not_judged_inputs")),
    # judged on the canonical's CPU time, re-run alone: still a property of this machine's speed (a borderline
    # input flips with it), so only what no clock decides is pinned (inputs timed, the deterministic list)
    "time_limit_sensitivity": VolatileRule(status=True, keys=("inputs_over_floor", "inputs_rerun", "slowdown_headroom",
                                                              "p50", "p90", "p99")),
    # an input at the ground-truth time limit (Mbpp/255) is recorded as over the sandbox's limits, or not; and
    # Mbpp/2's tuple(set(...)) order follows the string hash seed, so it differs from a cached run of another
    # process but not from one of the same zygote; Mbpp/255's input 85 ends in a timeout on one run and in the
    # memory limit on the next, which counts as a nondeterminism EvalPlus's rules would reject, and alone it ends
    # in either (a MemoryError is deterministic, a timeout is timing): so its deterministic list moves too
    # how many inputs a clock or a supervisor kill cut on either pass depends on the load
    "ground_truth": VolatileRule(status=True, keys=("exceeds_sandbox_limits", "nondeterministic_inputs",
                                                    "nondeterministic_rejected_by_rules",
                                                    "inputs_failing_deterministic", "cut_by_clock_inputs")),
}
VOLATILE: dict[tuple[str, str], VolatileRule] = {
    (audit, check): rule for audit in ("humaneval_plus", "mbpp_plus") for check, rule in _EVALPLUS_VOLATILE.items()}


@dataclass(frozen=True)
class GoldenRun:
    """One golden file: which audit run produces it, with which parameters."""

    golden: str
    audit: str
    params: tuple[tuple[str, str], ...] = ()
    full_only: bool = False  # only under `make regression`


RUNS: tuple[GoldenRun, ...] = (
    GoldenRun("intentspec", "intentspec"),
    GoldenRun("impossible_lcb", "impossible_lcb"),
    GoldenRun("codeinsights_edge_case", "codeinsights_edge_case"),
    GoldenRun("unconventional_problems", "unconventional_problems"),
    GoldenRun("data_inventory", "data_inventory"),
    GoldenRun("harness_exploits.subset", "harness_exploits", (("harness_exploits.cheats", EXPLOITS_SUBSET),)),
    GoldenRun("humaneval_plus.subset", "humaneval_plus", (("humaneval_plus.task_ids", HUMANEVAL_SUBSET),)),
    GoldenRun("mbpp_plus.subset", "mbpp_plus", (("mbpp_plus.task_ids", MBPP_SUBSET),)),
    GoldenRun("humaneval_plus", "humaneval_plus", full_only=True),
    GoldenRun("mbpp_plus", "mbpp_plus", full_only=True),
)


def golden_run(name: str) -> GoldenRun:
    for run in RUNS:
        if run.golden == name:
            return run
    raise KeyError(f"no golden run {name!r}; known: {', '.join(r.golden for r in RUNS)}")


def run_audit(run: GoldenRun, mirror: Path, out_dir: Path) -> dict[str, Any]:
    """Execute one golden run through the batch runner and return its findings JSON."""
    from audit_lib.runner import run_audits

    summary = run_audits([run.audit], run.params, mirror=mirror, jobs=1, reports_dir=out_dir, progress=None)
    if summary.failed:
        raise RuntimeError("; ".join(o.failure.describe() for o in summary.failed if o.failure))
    return json.loads((out_dir / f"{run.audit}.findings.json").read_text(encoding="utf-8"))


def stable_value(value: Any, rule: VolatileRule = VolatileRule()) -> Any:
    """`value` with timing keys and the rule's keys replaced by a marker (so a missing key still shows)."""
    if "*" in rule.keys:
        return DROPPED
    if isinstance(value, Mapping):
        return {key: (DROPPED if TIMING_KEY.search(str(key)) or key in rule.keys else stable_value(item, rule))
                for key, item in value.items()}
    if isinstance(value, list):
        return [stable_value(item, rule) for item in value]
    return value


def stable_checks(findings: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Check id -> {status, observed} with volatile parts replaced, from a findings JSON document."""
    audit = str(findings["audit"])
    pinned: dict[str, dict[str, Any]] = {}
    for check in findings["checks"]:
        rule = VOLATILE.get((audit, check["id"]), VolatileRule())
        pinned[check["id"]] = {"status": DROPPED if rule.status else check["status"],
                               "observed": stable_value(check.get("observed"), rule)}
    return pinned


@dataclass(frozen=True)
class Difference:
    """One way a run differs from its golden file."""

    check: str
    field: str
    golden: Any
    run: Any

    def describe(self) -> str:
        return (f"{self.check}: {self.field}\n    golden: {_short(self.golden)}\n    run:    {_short(self.run)}")


def compare(golden: Mapping[str, Any], findings: Mapping[str, Any]) -> list[Difference]:
    """Every difference between a golden file and a run's findings, check by check (missing and extra too)."""
    expected: Mapping[str, Mapping[str, Any]] = golden["checks"]
    observed = stable_checks(findings)
    differences: list[Difference] = []
    for check_id in sorted(set(expected) | set(observed)):
        if check_id not in observed:
            differences.append(Difference(check_id, "check", "present", "missing from the run"))
            continue
        if check_id not in expected:
            differences.append(Difference(check_id, "check", "not in the golden file", observed[check_id]))
            continue
        for field_name in ("status", "observed"):
            differences.extend(_diff(check_id, field_name, expected[check_id][field_name],
                                     observed[check_id][field_name]))
    return differences


def _diff(check_id: str, where: str, golden: Any, run: Any) -> list[Difference]:
    if isinstance(golden, Mapping) and isinstance(run, Mapping):
        found: list[Difference] = []
        for key in sorted(set(golden) | set(run), key=str):
            found.extend(_diff(check_id, f"{where}.{key}", golden.get(key, "<absent>"), run.get(key, "<absent>")))
        return found
    if golden != run:
        return [Difference(check_id, where, golden, run)]
    return []


def golden_path(name: str) -> Path:
    return GOLDEN_DIR / f"{name}.json"


def load_golden(name: str) -> dict[str, Any]:
    path = golden_path(name)
    if not path.is_file():
        raise FileNotFoundError(f"no golden file {path.name} in tests/golden/: create it with "
                                f"`python -m tests.golden_findings update {name} --findings FILE --reason ...`")
    return json.loads(path.read_text(encoding="utf-8"))


def update(name: str, findings: Mapping[str, Any], reason: str, *, params: Mapping[str, Any] | None = None) -> Path:
    """Write the golden file from a run, appending the changed values and the reason to its history."""
    if not reason.strip() or "\n" in reason:
        raise ValueError("a golden update needs a one-line reason (--reason)")
    path = golden_path(name)
    previous = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    changes = [] if previous is None else [
        {"check": d.check, "field": d.field, "old": d.golden, "new": d.run} for d in compare(previous, findings)]
    if previous is not None and not changes:
        print(f"{path.name}: no change; nothing written")
        return path
    history = list(previous.get("history", [])) if previous else []
    history.append({"date": datetime.now(timezone.utc).strftime("%Y-%m-%d"), "reason": reason.strip(),
                    "changes": changes if previous else "created"})
    document = {
        "audit": findings["audit"],
        "params": dict(params if params is not None else findings.get("params", {})),
        "checks": stable_checks(findings),
        "history": history,
    }
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1, sort_keys=False, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{path.name}: {len(changes)} change(s) written" if previous else f"{path.name}: created")
    return path


def report_differences(name: str, differences: Sequence[Difference]) -> str:
    lines = [f"{len(differences)} difference(s) from tests/golden/{name}.json:"]
    lines += [d.describe() for d in differences]
    lines.append(f"If the change is intended: python -m tests.golden_findings update {name} --reason '<why>'")
    return "\n".join(lines)


def _short(value: Any, limit: int = 400) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.golden_findings", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    upd = commands.add_parser("update", help="rewrite a golden file from a run's findings, with a reason")
    upd.add_argument("name", help="golden file name (e.g. intentspec, humaneval_plus.subset)")
    upd.add_argument("--findings", type=Path, help="a finished run's <audit>.findings.json (default: run the "
                                                   "audit now on the mirror in AUDIT_MIRROR)")
    upd.add_argument("--reason", required=True, help="one line: why the pinned figures change")
    cmp_ = commands.add_parser("compare", help="print the differences between a run and its golden file")
    cmp_.add_argument("name")
    cmp_.add_argument("--findings", type=Path)
    args = parser.parse_args(argv)
    if args.findings is not None:
        findings = json.loads(args.findings.read_text(encoding="utf-8"))
    else:
        mirror = os.environ.get("AUDIT_MIRROR")
        if not mirror:
            parser.error("without --findings the audit runs on the real data: set AUDIT_MIRROR")
        with tempfile.TemporaryDirectory(prefix="golden-") as scratch:
            findings = run_audit(golden_run(args.name), Path(mirror), Path(scratch))
    if args.command == "update":
        update(args.name, findings, args.reason)
        return 0
    differences = compare(load_golden(args.name), findings)
    print(report_differences(args.name, differences) if differences else f"{args.name}: matches its golden file")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
