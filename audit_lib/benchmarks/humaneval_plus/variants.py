"""EvalPlus's reduced variants (-Mini, -NoExtreme) against the full dataset: what they change, what they stop catching.

A variant is meant to be the full dataset with fewer plus inputs. The structural comparison checks that per task
(identical text fields and base inputs, variant plus inputs drawn from the full ones); the detection comparison takes
the inputs a reference wrong solution fails on the full dataset and asks whether the variant keeps any of them.
Inputs are matched by `compare.canonical_encoding`, so `1` vs `1.0` and a tuple vs a list are different inputs.
The `variants` check built on these comparisons is in `checks_variants`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from audit_lib.benchmarks.humaneval_plus.compare import canonical_encoding
from audit_lib.benchmarks.humaneval_plus.data import Dataset, PlusTask, task_sort_key
from audit_lib.benchmarks.humaneval_plus.groundtruth import GroundTruth
from audit_lib.benchmarks.humaneval_plus.replay import score_split
from audit_lib.benchmarks.humaneval_plus.runs import SPLITS, SplitRun
from audit_lib.sandbox import Unserializable

COMPARED_FIELDS: tuple[str, ...] = ("prompt", "entry_point", "canonical_solution", "contract", "base_input", "atol")
# A change to one of these means the full dataset's verdicts on a candidate no longer carry over to the variant:
# the candidate program is `prompt + body` and the expected outputs come from the canonical (compared with `atol`).
# Changed base inputs need no such caveat: every variant input is looked up by value among the full inputs.
SCORING_FIELDS = frozenset({"prompt", "entry_point", "canonical_solution", "atol"})
# Verdicts that say nothing about the candidate on that input (never run, or no expected output to compare with).
UNJUDGED_VERDICT_KINDS = frozenset({"not_run", "no_expected_output"})

Detection = Literal["detected", "lost", "undetermined", "reference_passes", "not_scored", "task_absent"]


@dataclass(frozen=True)
class VariantData:
    """One variant file as the check receives it: its tasks, or why it is unavailable."""

    name: str
    file: str
    tasks: tuple[PlusTask, ...] | None
    unavailable_reason: str = ""
    schema_notes: tuple[Mapping[str, Any], ...] = ()
    key: str = ""  # the registry key "<dataset>/<file>", named in `meta.missing` when the file is unavailable


@dataclass(frozen=True)
class TaskComparison:
    """One task of a variant against the same task of the full dataset."""

    task_id: str
    in_full: bool
    in_variant: bool
    changed_fields: tuple[str, ...]
    full_plus_inputs: int
    variant_plus_inputs: int
    variant_plus_not_in_full: int  # variant plus inputs equal to no plus input of the full task
    kept_full_plus_indices: tuple[int, ...]  # full plus indices whose input the variant also has

    @property
    def only_drops_plus_inputs(self) -> bool:
        """True when the variant is the full task minus some plus inputs (possibly none)."""
        return self.in_full and self.in_variant and not self.changed_fields and self.variant_plus_not_in_full == 0

    @property
    def drops_plus_inputs(self) -> bool:
        return self.in_full and len(self.kept_full_plus_indices) < self.full_plus_inputs

    @property
    def identical(self) -> bool:
        return self.only_drops_plus_inputs and not self.drops_plus_inputs \
            and self.variant_plus_inputs == self.full_plus_inputs


@dataclass(frozen=True)
class ReferenceVerdicts:
    """Which of one task's full-dataset inputs a reference solution fails, and which it was never judged on."""

    failing_base: frozenset[int] = frozenset()
    failing_plus: frozenset[int] = frozenset()
    unjudged_base: frozenset[int] = frozenset()
    unjudged_plus: frozenset[int] = frozenset()
    failure_kinds: tuple[tuple[str, int], ...] = ()  # (verdict kind, failing inputs), e.g. ("timeout", 1)

    @property
    def failing(self) -> int:
        return len(self.failing_base) + len(self.failing_plus)


@dataclass(frozen=True)
class TaskDetection:
    """Whether a variant still catches a reference solution that fails the full dataset on this task."""

    task_id: str
    detection: Detection
    failing_full: int  # full-dataset inputs (base + plus) the reference fails
    failing_in_variant: int  # variant inputs (base + plus) equal to an input the reference fails
    not_judged: int  # variant inputs with no verdict from the full-dataset runs
    reason: str = ""
    failure_kinds: tuple[tuple[str, int], ...] = ()  # how the reference fails the full dataset

    @property
    def rejected_only_by_timeout(self) -> bool:
        """Every full-dataset failure is a timeout, so the verdict depends on the machine's speed."""
        return bool(self.failure_kinds) and all(kind == "timeout" for kind, _ in self.failure_kinds)


def input_encoding(value: Any) -> bytes:
    """Equal bytes exactly when two inputs are the same value of the same types (1, 1.0 and True differ)."""
    try:
        return canonical_encoding(value)
    except Unserializable:  # not plain data, or nested too deep for the codec: fall back to a typed repr
        return b"repr:" + type(value).__qualname__.encode() + b":" + repr(value).encode("utf-8", "backslashreplace")


def _encodings(inputs: Iterable[Any]) -> list[bytes]:
    return [input_encoding(list(inp) if isinstance(inp, tuple) else inp) for inp in inputs]


class InputEncodings:
    """Each task's base and plus inputs, encoded once for every comparison.

    122,683 plus inputs are compared with every variant; encoding them is most of this check's time."""

    def __init__(self) -> None:
        self._by_task: dict[int, tuple[PlusTask, list[bytes], list[bytes]]] = {}  # holds the task: ids stay unique

    def base(self, task: PlusTask) -> list[bytes]:
        return self._of(task)[1]

    def plus(self, task: PlusTask) -> list[bytes]:
        return self._of(task)[2]

    def _of(self, task: PlusTask) -> tuple[PlusTask, list[bytes], list[bytes]]:
        if id(task) not in self._by_task:
            self._by_task[id(task)] = (task, _encodings(task.base_input), _encodings(task.plus_input))
        return self._by_task[id(task)]


def _changed_fields(full: PlusTask, variant: PlusTask, encodings: InputEncodings) -> tuple[str, ...]:
    changed = []
    for name in COMPARED_FIELDS:
        if name == "base_input":
            if encodings.base(full) != encodings.base(variant):
                changed.append(name)
        elif getattr(full, name) != getattr(variant, name):
            changed.append(name)
    return tuple(changed)


def compare_task(full: PlusTask | None, variant: PlusTask | None,
                 encodings: InputEncodings | None = None) -> TaskComparison:
    """Compare one task; either side may be missing."""
    encodings = encodings or InputEncodings()
    task = full if full is not None else variant
    assert task is not None, "compare_task needs at least one side"
    if full is None or variant is None:
        return TaskComparison(task.task_id, full is not None, variant is not None, (),
                              len(full.plus_input) if full is not None else 0,
                              len(variant.plus_input) if variant is not None else 0, 0, ())
    full_plus = encodings.plus(full)
    variant_plus = encodings.plus(variant)
    full_set, variant_set = set(full_plus), set(variant_plus)
    return TaskComparison(
        task_id=task.task_id, in_full=True, in_variant=True,
        changed_fields=_changed_fields(full, variant, encodings),
        full_plus_inputs=len(full_plus), variant_plus_inputs=len(variant_plus),
        variant_plus_not_in_full=sum(1 for enc in variant_plus if enc not in full_set),
        kept_full_plus_indices=tuple(index for index, enc in enumerate(full_plus) if enc in variant_set))


def compare_variant(full: Sequence[PlusTask], variant: Sequence[PlusTask],
                    encodings: InputEncodings | None = None) -> tuple[TaskComparison, ...]:
    """Per task (the union of both task lists), what the variant keeps, drops, adds or changes."""
    encodings = encodings or InputEncodings()
    full_by_id = {task.task_id: task for task in full}
    variant_by_id = {task.task_id: task for task in variant}
    task_ids = sorted(set(full_by_id) | set(variant_by_id), key=task_sort_key)
    return tuple(compare_task(full_by_id.get(task_id), variant_by_id.get(task_id), encodings)
                 for task_id in task_ids)


def reference_verdicts(tasks: Sequence[PlusTask], dataset: Dataset, runs: Mapping[tuple[str, Any], SplitRun],
                       gt: GroundTruth) -> dict[str, ReferenceVerdicts]:
    """Score a reference solution's runs (from `replay.run_candidate`) input by input; unscored tasks are absent."""
    verdicts: dict[str, ReferenceVerdicts] = {}
    for task in tasks:
        sets: dict[str, set[int]] = {"failing_base": set(), "failing_plus": set(), "unjudged_base": set(),
                                     "unjudged_plus": set()}
        kinds: Counter[str] = Counter()
        scored = False
        for split in SPLITS:
            run = runs.get((task.task_id, split))
            if run is None:
                continue
            scored = True
            for verdict in score_split(task, dataset, run, gt.run(task.task_id, split)):
                if verdict.kind in UNJUDGED_VERDICT_KINDS:
                    sets[f"unjudged_{split}"].add(verdict.index)
                elif not verdict.passed:
                    sets[f"failing_{split}"].add(verdict.index)
                    kinds[verdict.kind] += 1
        if scored:
            verdicts[task.task_id] = ReferenceVerdicts(**{name: frozenset(found) for name, found in sets.items()},
                                                       failure_kinds=tuple(sorted(kinds.items())))
    return verdicts


def detect_task(full: PlusTask | None, variant: PlusTask | None, verdicts: ReferenceVerdicts | None,
                changed_fields: Sequence[str] = (), encodings: InputEncodings | None = None) -> TaskDetection:
    """Does the variant keep at least one input (base or plus) on which the reference fails the full dataset?"""
    encodings = encodings or InputEncodings()
    if full is None or variant is None:
        task_id = full.task_id if full is not None else variant.task_id if variant is not None else "?"
        return TaskDetection(task_id, "task_absent", 0, 0, 0, "task missing from the full dataset or the variant")
    task_id = full.task_id
    if verdicts is None:
        return TaskDetection(task_id, "not_scored", 0, 0, 0, "no reference run for this task")
    if verdicts.failing == 0:
        return TaskDetection(task_id, "reference_passes", 0, 0, 0)
    variant_inputs = encodings.base(variant) + encodings.plus(variant)
    scoring_changes = [name for name in changed_fields if name in SCORING_FIELDS]
    if scoring_changes:
        return TaskDetection(task_id, "undetermined", verdicts.failing, 0, len(variant_inputs),
                             f"the variant changes {', '.join(scoring_changes)}: full-dataset verdicts do not apply",
                             verdicts.failure_kinds)
    # Per distinct full input: "fail" if any occurrence fails, else "pass" if any was judged, else unjudged.
    state: dict[bytes, str] = {}
    for full_inputs, failing, unjudged in ((encodings.base(full), verdicts.failing_base, verdicts.unjudged_base),
                                           (encodings.plus(full), verdicts.failing_plus, verdicts.unjudged_plus)):
        for index, encoding in enumerate(full_inputs):
            verdict = "fail" if index in failing else ("unjudged" if index in unjudged else "pass")
            previous = state.get(encoding)
            if previous == "fail" or (previous == "pass" and verdict == "unjudged"):
                continue
            state[encoding] = verdict
    failing_in_variant = sum(1 for enc in variant_inputs if state.get(enc) == "fail")
    not_judged = sum(1 for enc in variant_inputs if state.get(enc, "unjudged") == "unjudged")
    if failing_in_variant:
        detection: Detection = "detected"
        reason = ""
    elif not_judged:
        detection = "undetermined"
        reason = (f"no kept input fails; {not_judged} variant input(s) have no verdict from the full-dataset runs "
                  "(not among the full inputs, or never run there)")
    else:
        detection = "lost"
        reason = "the variant keeps none of the inputs the reference fails: it would pass this solution"
    return TaskDetection(task_id, detection, verdicts.failing, failing_in_variant, not_judged, reason,
                         verdicts.failure_kinds)


def compare_detection(full: Sequence[PlusTask], variant: Sequence[PlusTask],
                      verdicts: Mapping[str, ReferenceVerdicts]) -> tuple[TaskDetection, ...]:
    """Per task, whether the variant still rejects the reference solution the full dataset rejects."""
    encodings = InputEncodings()
    return task_detections(full, variant, compare_variant(full, variant, encodings), verdicts, encodings)


def task_detections(full: Sequence[PlusTask], variant: Sequence[PlusTask], comparisons: Sequence[TaskComparison],
                    verdicts: Mapping[str, ReferenceVerdicts], encodings: InputEncodings) -> tuple[TaskDetection, ...]:
    """`detect_task` for each comparison of `compare_variant` (the encodings shared with it)."""
    full_by_id = {task.task_id: task for task in full}
    variant_by_id = {task.task_id: task for task in variant}
    return tuple(detect_task(full_by_id.get(c.task_id), variant_by_id.get(c.task_id), verdicts.get(c.task_id),
                             c.changed_fields, encodings) for c in comparisons)


__all__ = ["COMPARED_FIELDS", "InputEncodings", "ReferenceVerdicts", "TaskComparison", "TaskDetection", "VariantData",
           "compare_detection", "compare_task", "compare_variant", "detect_task", "input_encoding",
           "reference_verdicts", "task_detections"]
