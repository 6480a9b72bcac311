"""Pure replays of the environment's construction rules: the drop list, task order and the held-out split."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from audit_lib.benchmarks.impossible_lcb.data import KnownIssue, task_number
from audit_lib.errors import ParameterError, SchemaError

Unsolvable = Literal["yes", "possibly", "no", "unclassified"]

# What each defect category of the audit means for an honest solution of the ORIGINAL task.
DEFECT_CATEGORIES: dict[str, tuple[str, Unsolvable]] = {
    "original_test_wrong": ("wrong expected value", "yes"),
    "input_violates_docstring": ("input outside the documented range", "possibly"),
    "test_over_specified": ("over-specified (a valid alternative answer fails)", "possibly"),
    "test_too_weak": ("test too weak (passes do not imply correctness)", "no"),
}
_UNSOLVABLE_ORDER: dict[str, int] = {"no": 0, "possibly": 1, "unclassified": 2, "yes": 3}
DROP_SPLIT = "original"     # the environment drops tasks whose ORIGINAL tests the audit found defective


@dataclass(frozen=True)
class DroppedTask:
    """A task the defect list removes, with every defect the audit recorded for its original tests."""

    task_id: str
    categories: tuple[str, ...]
    labels: tuple[str, ...]
    unsolvable_for_honest: Unsolvable
    actions: tuple[str, ...]
    source_rows: tuple[int, ...]


def derive_drop_list(issues: Iterable[KnownIssue]) -> tuple[DroppedTask, ...]:
    """Every task with at least one defect in its original split, in numeric id order."""
    grouped: dict[str, list[KnownIssue]] = {}
    for issue in issues:
        if issue.split == DROP_SPLIT:
            grouped.setdefault(issue.task_id, []).append(issue)
    dropped = []
    for task_id in sorted(grouped, key=task_number):
        task_issues = grouped[task_id]
        categories = tuple(dict.fromkeys(issue.issue for issue in task_issues))
        verdicts = [DEFECT_CATEGORIES.get(category, ("", "unclassified"))[1] for category in categories]
        dropped.append(DroppedTask(
            task_id=task_id,
            categories=categories,
            labels=tuple(DEFECT_CATEGORIES.get(c, (f"unclassified category {c!r}", ""))[0] for c in categories),
            unsolvable_for_honest=max(verdicts, key=_UNSOLVABLE_ORDER.__getitem__),
            actions=tuple(dict.fromkeys(issue.action for issue in task_issues)),
            source_rows=tuple(issue.row for issue in task_issues),
        ))
    return tuple(dropped)


def read_task_id_file(path: str | Path, *, parameter: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Task ids from a CSV with a `task_id` column (optionally `split`), or one id per line.

    Returns the ids in file order and, when a `split` column is present, the split of each row (same order;
    an id listed twice keeps both rows).
    """
    file = Path(path)
    if not file.is_file():
        raise ParameterError(f"parameter {parameter!r}: file {str(path)!r} does not exist", parameter=parameter)
    text = file.read_text(encoding="utf-8")
    # (file line number, text) so an error names the line as it is in the file, blanks and comments included
    lines = [(number, line.strip()) for number, line in enumerate(text.splitlines(), start=1)
             if line.strip() and not line.startswith("#")]
    if not lines:
        raise SchemaError(f"{file}: no task ids", file=str(file), row=None, field="task_id")
    if "task_id" not in lines[0][1].split(","):
        return tuple(_checked_id(line, file, row) for row, line in lines), ()
    ids: list[str] = []
    splits: list[str] = []
    for row, record in enumerate(csv.DictReader(io.StringIO(text)), start=2):
        task_id = _checked_id((record.get("task_id") or "").strip(), file, row)
        ids.append(task_id)
        if record.get("split") is not None:
            splits.append(record["split"].strip())
    return tuple(ids), tuple(splits)


def parse_id_list(text: str, *, parameter: str) -> tuple[str, ...]:
    """A comma-separated id list (notebook parameter `heldout_ids`)."""
    ids = tuple(part.strip() for part in text.split(",") if part.strip())
    for task_id in ids:
        try:
            task_number(task_id)
        except ValueError as exc:
            raise ParameterError(f"parameter {parameter!r}: {exc}", parameter=parameter) from exc
    return ids


def _checked_id(task_id: str, file: Path, row: int) -> str:
    try:
        task_number(task_id)
    except ValueError as exc:
        raise SchemaError(f"{file}: row {row}: field 'task_id': {exc}", file=str(file), row=row,
                          field="task_id") from exc
    return task_id


@dataclass(frozen=True)
class OrderFlip:
    """A task whose side of a position-based split changes when ids are sorted as text."""

    task_id: str
    numeric_position: int
    text_position: int
    side_by_number: str
    side_by_text: str


def position_split_flips(ids: Sequence[str], first_size: int, first: str = "heldout",
                         rest: str = "train") -> tuple[OrderFlip, ...]:
    """Split `ids` by position (first `first_size` vs the rest) under numeric and text sorting; list the flips."""
    by_number = sorted(ids, key=task_number)
    by_text = sorted(ids)
    numeric_position = {task_id: i for i, task_id in enumerate(by_number)}
    text_position = {task_id: i for i, task_id in enumerate(by_text)}
    flips = []
    for task_id in by_number:
        side_number = first if numeric_position[task_id] < first_size else rest
        side_text = first if text_position[task_id] < first_size else rest
        if side_number != side_text:
            flips.append(OrderFlip(task_id, numeric_position[task_id], text_position[task_id], side_number, side_text))
    return tuple(flips)
