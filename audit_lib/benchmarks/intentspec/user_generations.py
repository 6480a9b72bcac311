"""A user's generations in the data supplement's layout: `<model>__HumanEval_<n>.jsonl`, one `{"solution": ...}` a line.

`-p generations_dir DIR` names the folder holding those files (or holding a `generations/` folder that does, as the
supplement's `data/` does). Reading it is cheap, so the whole folder is checked before any kernel starts: a file
name outside the layout, an unreadable or empty file, a malformed line, a missing or non-string `solution` is
refused naming the file, the line and the field. Whether each task id is one of IntentSpec's is decided when the
spec pairs are loaded (the check reports an unknown one as an error naming the file).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from audit_lib.benchmarks.intentspec.data import GENERATION_FILE, Generation
from audit_lib.benchmarks.intentspec.runs import Candidate, solution_program
from audit_lib.errors import ParameterError

LAYOUT = "<model>__HumanEval_<n>.jsonl files, one {\"solution\": \"<python defining solution(...)>\"} per line"
USER_GENERATION = "user_generation"  # the candidates' kind


@dataclass(frozen=True)
class UserGenerations:
    """Every sample of the folder, in file-name then line order; `folder` is where the files were found."""

    folder: str
    generations: tuple[Generation, ...]

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(generation.model_slug for generation in self.generations))

    @property
    def tasks(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(generation.task_id for generation in self.generations))


def _refuse(message: str, **fields: object) -> ParameterError:
    return ParameterError(f"generations_dir: {message}", audit="intentspec", field="generations_dir", **fields)


def generation_folder(path: str | Path) -> Path:
    """The folder that holds the files: `path` itself, or its `generations/` folder when `path` holds none."""
    root = Path(path).expanduser()
    if not root.is_dir():
        raise _refuse(f"{root} is not a folder; give the folder holding {LAYOUT}")
    if not any(child.suffix == ".jsonl" for child in root.iterdir()) and (root / "generations").is_dir():
        return root / "generations"
    return root


def read_generations_dir(path: str | Path) -> UserGenerations:
    """Every sample in the folder; any departure from the layout raises ParameterError naming file, line and field."""
    folder = generation_folder(path)
    files = sorted(child for child in folder.iterdir() if child.is_file() and not child.name.startswith("."))
    if not files:
        raise _refuse(f"{folder} holds no files; expected {LAYOUT}")
    generations: list[Generation] = []
    for file in files:
        match = GENERATION_FILE.match(f"generations/{file.name}")
        if match is None:
            raise _refuse(f"{file.name}: the name is not <model>__HumanEval_<n>.jsonl (e.g. my-model__HumanEval_26."
                          "jsonl)", file=file.name, row=None)
        generations += _samples(file, match["model"], match["task"].replace("_", "/"))
    return UserGenerations(str(folder), tuple(generations))


def _samples(file: Path, model: str, task_id: str) -> Sequence[Generation]:
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _refuse(f"{file.name}: cannot be read as UTF-8 text ({exc})", file=file.name, row=None) from exc
    samples = []
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _refuse(f"{file.name}, line {line_number}: malformed JSON ({exc.msg} at column {exc.colno})",
                          file=file.name, row=line_number) from exc
        if not isinstance(record, dict) or "solution" not in record:
            raise _refuse(f"{file.name}, line {line_number}: missing field 'solution'", file=file.name,
                          row=line_number)
        if not isinstance(record["solution"], str) or not record["solution"].strip():
            raise _refuse(f"{file.name}, line {line_number}: field 'solution' must be a non-empty string, got "
                          f"{type(record['solution']).__name__}", file=file.name, row=line_number)
        samples.append(Generation(model, task_id, len(samples), record["solution"], file.name))
    if not samples:
        raise _refuse(f"{file.name}: no samples (an empty file)", file=file.name, row=None)
    return samples


def user_candidates(user: UserGenerations) -> list[Candidate]:
    """One candidate per sample, run as upstream runs a cached generation (the text as is, dedented)."""
    return [Candidate(USER_GENERATION, g.model_slug, g.task_id, g.sample, solution_program(g.solution))
            for g in user.generations]


def generations_dir_rule(value: str) -> str | None:
    """The parameter rule: "" (none) or a folder in the layout; the refusal names file, line and field."""
    if not value:
        return None
    try:
        read_generations_dir(value)
    except ParameterError as exc:
        return f"is not a folder in the supplement's layout: {exc.message.removeprefix('generations_dir: ')}"
    return None


__all__ = ["LAYOUT", "USER_GENERATION", "UserGenerations", "generation_folder", "generations_dir_rule",
           "read_generations_dir", "user_candidates"]
