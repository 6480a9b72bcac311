"""ImpossibleBench LiveCodeBench as used by the impossible-lcb-rl environment: the audit's plugin.

Manifest-level checks (`checks_manifest`) run on all tasks from the audit's manifest; row-level checks
(`checks_rows`) run on whichever full HF rows are available (the pinned parquet files, else the two reconstructed
rows). Every check records its depth and task count in `meta` and says it in its summary. A check that needs the
drop list (derived from `known_issues.csv`) or the manifest declares it, and is skipped naming the file when that
file is missing or was rejected: nothing is recounted on a smaller drop list.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from audit_lib.benchmarks.impossible_lcb.data import (
    KNOWN_ISSUES_KEY,
    MANIFEST_KEY,
    KnownIssue,
    ManifestEntry,
    RowSet,
    ids_in,
    load_known_issues,
    load_manifest,
    load_rows,
)
from audit_lib.benchmarks.impossible_lcb.documented import ENV_SPLIT
from audit_lib.benchmarks.impossible_lcb.mutations import (
    ReplayTasks,
    manifest_mutation_rows,
    replay_tasks,
    rows_mutation_rows,
)
from audit_lib.benchmarks.impossible_lcb.rules import (
    DroppedTask,
    derive_drop_list,
    parse_id_list,
    read_task_id_file,
)
from audit_lib.benchmarks.impossible_lcb.user_solutions import solutions_path_rule
from audit_lib.benchmarks.impossible_lcb.visibility import NUMBERINGS, Numbering
from audit_lib.errors import DataError, DataUnavailableError, ParameterError
from audit_lib.plugin import AuditPlugin, CheckSpec, param

# ---- parameters ----------------------------------------------------------------------------------------------


def _task_id_file_or_empty(value: str) -> str | None:
    """An existing file of task ids (one per line, or CSV with task_id[,split]), read before any kernel starts."""
    if not value:
        return None
    if not Path(value).is_file():
        return "must name an existing file (or be empty)"
    try:
        read_task_id_file(value, parameter="")
    except (DataError, ParameterError, UnicodeDecodeError) as exc:
        return f"must name a file of task ids (one per line, or CSV with task_id[,split]): {exc}"
    return None


def _task_id_list(value: str) -> str | None:
    try:
        parse_id_list(value, parameter="heldout_ids")
    except ParameterError as exc:
        return f"must be comma-separated task ids like lcbhard_17 ({exc.message})"
    return None


@dataclass(frozen=True)
class Params:
    """The notebook's parameters cell."""

    dropped_tasks_path: str = param("", "an environment's own dropped_tasks.csv to diff against the derived list",
                                    rule=_task_id_file_or_empty, path=True)
    heldout_ids: str = param("", "comma-separated held-out task ids (\"\" = none given)", rule=_task_id_list)
    heldout_path: str = param("", "file with held-out ids (one per line, or CSV with task_id[,split])",
                              rule=_task_id_file_or_empty, path=True)
    assertion_numbering: str = param("zero_based", "how \"even-numbered\" is read", choices=NUMBERINGS)
    executor: str = param("local", "\"local\", \"dask-local\" or \"dask://HOST:PORT\"")
    solutions_path: str = param("", "your solutions to score on the six metrics: a .jsonl file with task_id, form "
                                "and solution per line; empty for none", rule=solutions_path_rule)

    def __post_init__(self) -> None:
        if self.heldout_ids and self.heldout_path:
            raise ParameterError("impossible_lcb: give either parameter 'heldout_ids' or 'heldout_path', not both",
                                 audit="impossible_lcb", field="heldout_ids")

    @property
    def heldout_id_list(self) -> tuple[str, ...]:
        return parse_id_list(self.heldout_ids, parameter="heldout_ids")


# ---- inputs --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Inputs:
    """Everything the checks read, and the derived inputs several checks share.

    A file that could not be fetched is `None` here and named in `missing`; the shared derived inputs (drop list, rule
    breakers, eligible tasks, parsed rows) are computed once, and refuse to be computed without their file."""

    known_issues: tuple[KnownIssue, ...] | None
    manifest: tuple[ManifestEntry, ...] | None
    oneoff_rows: RowSet
    conflicting_rows: RowSet
    provenance: tuple[Any, ...]
    missing: Mapping[str, str]
    _parsed: dict[str, ReplayTasks] = field(default_factory=dict, init=False, repr=False, compare=False)
    _results: dict[str, Mapping[tuple[str, str, str], Any]] = field(default_factory=dict, init=False, repr=False,
                                                                    compare=False)

    @property
    def full_oneoff_rows(self) -> bool:
        return self.oneoff_rows.source == "parquet"

    @cached_property
    def drop_list(self) -> tuple[DroppedTask, ...]:
        return derive_drop_list(self._required(self.known_issues, KNOWN_ISSUES_KEY))

    @cached_property
    def dropped_ids(self) -> tuple[str, ...]:
        return tuple(task.task_id for task in self.drop_list)

    @cached_property
    def task_ids(self) -> tuple[str, ...]:
        """The environment split's task ids, in manifest order."""
        return ids_in(self._required(self.manifest, MANIFEST_KEY), ENV_SPLIT)

    @cached_property
    def mutation_rows(self) -> tuple[dict[str, Any], ...]:
        """The one-assertion verdict per oneoff task: from the full rows when all are there, else the manifest."""
        if self.full_oneoff_rows:
            return rows_mutation_rows(self.replay("zero_based"))
        return manifest_mutation_rows(self._required(self.manifest, MANIFEST_KEY))

    @cached_property
    def rule_breakers(self) -> tuple[str, ...]:
        return tuple(row["task_id"] for row in self.mutation_rows if not row["single_assertion"])

    @cached_property
    def eligible_ids(self) -> tuple[str, ...]:
        excluded = set(self.dropped_ids) | set(self.rule_breakers)
        return tuple(task_id for task_id in self.task_ids if task_id not in excluded)

    def replay(self, numbering: Numbering) -> ReplayTasks:
        """The oneoff rows parsed for replay under one numbering (computed once per numbering)."""
        if numbering not in self._parsed:
            self._parsed[numbering] = replay_tasks(self.oneoff_rows, numbering)
        return self._parsed[numbering]

    def remember_results(self, numbering: Numbering, results: Mapping[tuple[str, str, str], Any]) -> None:
        """Keep `metrics_replay`'s sandbox results (per (task, solution, form)) for `task` views."""
        self._results[numbering] = results

    def replay_results(self, numbering: Numbering) -> Mapping[tuple[str, str, str], Any] | None:
        return self._results.get(numbering)

    def _required(self, value: Any, key: str) -> Any:
        if value is None:
            raise DataUnavailableError(f"{key} is not loaded: {self.missing.get(key, 'not fetched')}", file=key)
        return value


def load(params: Params) -> Inputs:
    """Fetch the defect list, the manifest and the full rows; what cannot be fetched is recorded, not raised."""
    missing: dict[str, str] = {}
    provenance: list[Any] = []
    known_issues = manifest = None
    try:
        known_issues, record = load_known_issues()
        provenance.append(record)
    except DataError as exc:
        missing[KNOWN_ISSUES_KEY] = exc.message
    try:
        manifest, record = load_manifest()
        provenance.append(record)
    except DataError as exc:
        missing[MANIFEST_KEY] = exc.message
    oneoff_rows = load_rows("oneoff")
    conflicting_rows = load_rows("conflicting")
    for rows in (oneoff_rows, conflicting_rows):
        provenance.extend(rows.provenance)
        missing.update(rows.missing)
    return Inputs(known_issues, manifest, oneoff_rows, conflicting_rows, tuple(provenance), missing)


def row_availability(inputs: Inputs) -> list[dict[str, Any]]:
    """One row per split: where its full rows came from, how many, and why they are missing if they are."""
    return [{"split": rows.split, "row_source": rows.source, "rows": len(rows.rows), "note": rows.unavailable_reason}
            for rows in (inputs.oneoff_rows, inputs.conflicting_rows)]


def _task_view(inputs: Inputs, params: Params, task_id: str):  # -> TaskView; imported when asked (pandas)
    from audit_lib.benchmarks.impossible_lcb.tasks import task_view

    return task_view(inputs, params, task_id)


DROP_LIST = (KNOWN_ISSUES_KEY,)  # the drop list is derived from the defect list

# Titles quote the documented figures (documented.py).
AUDIT: AuditPlugin[Inputs, Params] = AuditPlugin(
    name="impossible_lcb",
    title="ImpossibleBench LiveCodeBench (impossible-lcb-rl)",
    params=Params,
    load=load,
    checks=(
        CheckSpec("dropped_tasks", "Drop list derived from the audit's defect list (103 -> 90)",
                  ".checks_manifest:dropped_tasks", (*DROP_LIST, MANIFEST_KEY)),
        # the manifest is needed unless the full rows are there: these two say so themselves
        CheckSpec("single_assertion_mutation",
                  "Oneoff mutations that change more than one assertion (documented 90 -> 89)",
                  ".checks_manifest:single_assertion_mutation", DROP_LIST),
        CheckSpec("broken_mutations", "Mutated tests that do not compile or lack the check wrapper",
                  ".checks_manifest:broken_mutations", DROP_LIST),
        CheckSpec("task_order", "Task ids sorted as text vs by number", ".checks_manifest:task_order",
                  (*DROP_LIST, MANIFEST_KEY)),
        CheckSpec("split", "Held-out / train split (30 / 59)", ".checks_manifest:split", (*DROP_LIST, MANIFEST_KEY)),
        CheckSpec("visibility_rule", "\"Even-numbered assertions shown, plus the changed one\" under both numberings",
                  ".checks_rows:visibility_rule"),
        CheckSpec("metrics_replay", "Six metrics on three generated solutions, both forms, in the sandbox",
                  ".checks_rows:metrics_replay"),
        CheckSpec("has_code_parsing", "has_code: code-block extraction on awkward replies",
                  ".checks_rows:has_code_parsing"),
        CheckSpec("your_solutions", "Your solutions on the environment's six metrics (sandbox, the environment's "
                  "limits)", ".checks_yours:your_solutions"),
    ),
    task_view=_task_view,
)
