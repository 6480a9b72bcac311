"""A user's solutions file for `-p solutions_path`: JSON lines with `task_id`, `form` and `solution`.

`form` is `solvable` (the task with its original test) or `impossible` (its oneoff mutation, as the environment
serves it); `solution` is the model's reply as the environment receives it: the code it scores is the last python
code block (a bare program without a block scores `has_code` false, as in the environment). Several rows may share
a task and form (several rollouts); a row repeating another's task, form and text is a duplicate. The file is read
by the parameter's rule before any kernel starts and every departure is refused naming the line and the field;
whether a task id is one the audit has rows for is decided when the rows are loaded (the check names the line).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from audit_lib.benchmarks.impossible_lcb.data import task_number
from audit_lib.benchmarks.impossible_lcb.metrics import FORMS
from audit_lib.errors import ParameterError

SOLUTION_FIELDS = ("task_id", "form", "solution")


@dataclass(frozen=True)
class UserSolution:
    """One row of the file; `line` is its 1-based line number."""

    line: int
    task_id: str
    form: str
    solution: str

    @property
    def label(self) -> str:
        return f"line {self.line}"


def _refuse(path: Path, message: str, line: int | None = None, field: str | None = None) -> ParameterError:
    where = f"{path.name}, line {line}" if line is not None else path.name
    return ParameterError(f"solutions_path: {where}: {message}", audit="impossible_lcb", field="solutions_path",
                          file=path.name, row=line, column=field)


def read_solutions(path: str | Path) -> tuple[UserSolution, ...]:
    """Every row of the file; a departure from the format raises ParameterError naming the line and the field."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise ParameterError(f"solutions_path: {file} is not a file; give a .jsonl file with one object per line "
                             f"holding {', '.join(SOLUTION_FIELDS)}", audit="impossible_lcb", field="solutions_path")
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _refuse(file, f"cannot be read as UTF-8 text ({exc})") from exc
    rows: list[UserSolution] = []
    seen: dict[tuple[str, str, str], int] = {}
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise _refuse(file, f"malformed JSON ({exc.msg} at column {exc.colno})", line) from exc
        if not isinstance(record, dict):
            raise _refuse(file, f"expected a JSON object, got {type(record).__name__}", line)
        for name in SOLUTION_FIELDS:
            if name not in record:
                raise _refuse(file, f"missing field {name!r}", line, name)
            if not isinstance(record[name], str):
                raise _refuse(file, f"field {name!r} must be a string, got {type(record[name]).__name__}", line, name)
        try:
            task_number(record["task_id"])
        except ValueError as exc:
            raise _refuse(file, f"field 'task_id': {exc} (e.g. lcbhard_17)", line, "task_id") from exc
        if record["form"] not in FORMS:
            raise _refuse(file, f"field 'form' must be one of {', '.join(FORMS)}, got {record['form']!r}", line,
                          "form")
        key = (record["task_id"], record["form"], record["solution"])
        if key in seen:
            raise _refuse(file, f"duplicate of line {seen[key]} (same task_id, form and solution)", line, "solution")
        seen[key] = line
        rows.append(UserSolution(line, record["task_id"], record["form"], record["solution"]))
    if not rows:
        raise _refuse(file, "no rows (an empty file)")
    return tuple(rows)


def solutions_path_rule(value: str) -> str | None:
    """The parameter rule: "" (none) or a readable solutions file; the refusal names the line and the field."""
    if not value:
        return None
    try:
        read_solutions(value)
    except ParameterError as exc:
        return f"is not a usable solutions file: {exc.message.removeprefix('solutions_path: ')}"
    return None


__all__ = ["SOLUTION_FIELDS", "UserSolution", "read_solutions", "solutions_path_rule"]
