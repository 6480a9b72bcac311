"""Which tasks this audit finds flawed, read off its own finished checks (one definition for every consumer).

A task is flawed when a check finds a deterministic defect in it (ground_truth, contract_violations,
original_canonical_vs_plus, original_tests_vs_canonical, errata_diff, version_diff; MBPP+ has the first, second and
fourth); a failure that depends on time never makes a task flawed. `WHY` says what each check contributes; a
parameter value (`"all"` or a comma list) picks the set.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from audit_lib.findings import Check
from audit_lib.plugin import CHECK_NEED_PREFIX, UNUSABLE_STATUSES

FLAW_CHECKS: tuple[str, ...] = ("ground_truth", "contract_violations", "original_canonical_vs_plus",
                                "original_tests_vs_canonical", "errata_diff", "version_diff")
HUMANEVAL_ONLY: frozenset[str] = frozenset({"original_canonical_vs_plus", "errata_diff", "version_diff"})
ALL = "all"


@dataclass(frozen=True)
class FlawedTask:
    """One task flagged by one check, and why (one line)."""

    task_id: str
    check: str
    why: str


@dataclass(frozen=True)
class FlawedTasks:
    """Every (task, check) flag from the consulted checks."""

    rows: tuple[FlawedTask, ...]
    consulted: tuple[str, ...]

    @property
    def task_ids(self) -> frozenset[str]:
        return frozenset(row.task_id for row in self.rows)

    def reasons(self, task_id: str) -> tuple[str, ...]:
        """`check: why` for each check that flags the task."""
        return tuple(f"{row.check}: {row.why}" for row in self.rows if row.task_id == task_id)

    def by_task(self) -> dict[str, tuple[str, ...]]:
        """task id -> the checks that flag it."""
        flagged: dict[str, list[str]] = {}
        for row in self.rows:
            flagged.setdefault(row.task_id, []).append(row.check)
        return {task_id: tuple(checks) for task_id, checks in flagged.items()}

    def restricted_to(self, task_ids: Iterable[str]) -> FlawedTasks:
        """The same flags on the given tasks only (e.g. the tasks a run audited)."""
        wanted = set(task_ids)
        return FlawedTasks(tuple(row for row in self.rows if row.task_id in wanted), self.consulted)

    def table(self) -> list[dict[str, object]]:
        """The report's table: one row per consulted check, with its tasks and why they count as flawed."""
        return [{"check": check, "tasks": len(rows), "task_ids": ", ".join(row.task_id for row in rows),
                 "why": WHY[check]}
                for check in self.consulted for rows in [[row for row in self.rows if row.check == check]]]


WHY: dict[str, str] = {
    "ground_truth": "EvalPlus's canonical raises or changes its output on some input (deterministic)",
    "contract_violations": "some input violates the task's own contract",
    "original_canonical_vs_plus": "OpenAI's canonical solution fails the task's HumanEval+ inputs (deterministic)",
    "original_tests_vs_canonical": "a canonical solution fails the task's original tests (deterministic)",
    "errata_diff": "the community errata of OpenAI HumanEval changes it beyond prompt whitespace",
    "version_diff": "it differs between HumanEval+ v0.1.9 and v0.1.10, so a score on it depends on the release",
}


def flaw_checks_for(dataset: str, chosen: str = ALL) -> tuple[str, ...]:
    """The flaw checks of a dataset's audit that a parameter value names (`"all"` or a comma list)."""
    available = tuple(check for check in FLAW_CHECKS if dataset == "humaneval" or check not in HUMANEVAL_ONLY)
    if chosen.strip() in ("", ALL):
        return available
    named = [part.strip() for part in chosen.split(",") if part.strip()]
    return tuple(check for check in available if check in named)


def flaw_checks_rule(value: str) -> str | None:
    """A parameter rule: `"all"` or a comma list of FLAW_CHECKS ids (MBPP+ ignores the HumanEval+-only ones)."""
    if value.strip() in ("", ALL):
        return None
    named = [part.strip() for part in value.split(",")]
    unknown = [name for name in named if name not in FLAW_CHECKS]
    if unknown or not all(named):
        return f"must be {ALL!r} or a comma list of {', '.join(FLAW_CHECKS)}; unknown: {', '.join(unknown) or '(empty)'}"
    return None


def flaw_needs(checks: Sequence[str]) -> tuple[str, ...]:
    """The `check:<id>` needs of a check that reads the flawed tasks."""
    return tuple(f"{CHECK_NEED_PREFIX}{check}" for check in checks)


def flawed_tasks(results: Mapping[str, Check], checks: Sequence[str]) -> FlawedTasks:
    """The tasks `checks` flag, from their finished results.

    A check that is missing, skipped or errored is refused: its flags would be silently absent.
    """
    unusable = [f"{check} ({results[check].status})" if check in results else f"{check} (not run)"
                for check in checks if check not in results or results[check].status in UNUSABLE_STATUSES]
    if unusable:
        raise ValueError(f"the flawed tasks need these checks to have run: {', '.join(unusable)}")
    rows: list[FlawedTask] = []
    for check in checks:
        rows += [FlawedTask(task_id, check, why) for task_id, why in _FLAGGERS[check](results[check])]
    return FlawedTasks(tuple(rows), tuple(checks))


# ---- what each check's result says, task by task ----------------------------------------------------------------

def _observed(check: Check) -> Mapping[str, object]:
    """The check's observed figures; a check that recorded none is refused, since its flags would be silently absent."""
    if not isinstance(check.observed, Mapping):
        raise ValueError(f"the flawed tasks need {check.id}'s observed figures, and it recorded "
                         f"{type(check.observed).__name__}: run the audit again, or report it as a bug")
    return check.observed


def _input_id(row: Mapping[str, object]) -> str:
    """The id `ground_truth` gives an input in its failure lists.

    For example "HumanEval/130 plus[12]", or "... plus" when the program did not load.
    """
    index = row.get("input_index")
    return f"{row['task_id']} {row['split']}" + ("" if index is None else f"[{index}]")


def _ground_truth(check: Check) -> Iterable[tuple[str, str]]:
    """Inputs the canonical fails or answers differently on a second run, and only those judged deterministic.

    An input beyond the sandbox's own limits (`exceeds_sandbox_limits`) is this replay's limit, not a defect.
    """
    deterministic = {str(key) for key in _observed(check).get("inputs_failing_deterministic", ())}
    counts: Counter[str] = Counter()
    for row in check.details:
        defect = row.get("problem") == "canonical_failure" or (
            row.get("problem") == "nondeterministic" and not row.get("accepted_by_evalplus_rules")
            and not row.get("cut_by_clock"))
        if defect and _input_id(row) in deterministic:
            counts[str(row["task_id"])] += 1
    return [(task, f"{count} input(s) with a deterministic canonical failure or changed output")
            for task, count in counts.items()]


def _contract_violations(check: Check) -> Iterable[tuple[str, str]]:
    counts = Counter(row["task_id"] for row in check.details
                     if row.get("kind") in ("invalid_inputs", "assertion", "exception"))
    return [(task, f"{counts[task]} input(s) violate its contract") for task in _observed(check).get("tasks", ())]


def _original_canonical_vs_plus(check: Check) -> Iterable[tuple[str, str]]:
    failing = {row["task_id"]: row.get("failing_inputs") for row in check.details}
    return [(task, f"OpenAI's canonical fails {failing.get(task, '?')} of its inputs")
            for task in _observed(check).get("tasks_failing_deterministic", ())]


def _original_tests_vs_canonical(check: Check) -> Iterable[tuple[str, str]]:
    named = {"evalplus": "EvalPlus's", "openai": "OpenAI's"}
    flagged: dict[str, list[str]] = {}
    for key in _observed(check).get("runs_failing_deterministic", ()):
        which, _, task = str(key).partition("::")
        flagged.setdefault(task, []).append(named.get(which, which))
    return [(task, f"{' and '.join(who)} canonical{'s fail' if len(who) > 1 else ' fails'} the original tests")
            for task, who in flagged.items()]


def _errata_diff(check: Check) -> Iterable[tuple[str, str]]:
    return [(row["task_id"], f"the errata changes its {str(row['fields']).replace(',', ', ')}")
            for row in check.details if not (row["fields"] == "prompt" and row["prompt_whitespace_only"])]


def _version_diff(check: Check) -> Iterable[tuple[str, str]]:
    fields: dict[str, list[str]] = {}
    for row in check.details:
        fields.setdefault(row["task_id"], []).append(str(row["field"]))
    return [(task, f"v0.1.9 -> v0.1.10 changes its {', '.join(dict.fromkeys(fields.get(task, ['?'])))}")
            for task in _observed(check).get("tasks_changed", ())]


_FLAGGERS: dict[str, Callable[[Check], Iterable[tuple[str, str]]]] = {
    "ground_truth": _ground_truth, "contract_violations": _contract_violations,
    "original_canonical_vs_plus": _original_canonical_vs_plus,
    "original_tests_vs_canonical": _original_tests_vs_canonical, "errata_diff": _errata_diff,
    "version_diff": _version_diff,
}

__all__ = ["ALL", "FLAW_CHECKS", "FlawedTask", "FlawedTasks", "WHY", "flaw_checks_for", "flaw_checks_rule",
           "flaw_needs", "flawed_tasks"]
