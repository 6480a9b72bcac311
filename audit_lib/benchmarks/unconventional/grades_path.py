"""Where a user's `grades_path` is looked for (light: the parameter rule runs before any kernel starts)."""

from __future__ import annotations

from pathlib import Path

from audit_lib import paths
from audit_lib.errors import ParameterError

FILE_HINT = ("give a JSONL file with problem_id, model and transcript or grade per line, or '' for the "
             "synthetic set")


def grades_path_candidates(grades_path: str) -> list[Path]:
    """A relative path is tried against the current directory, then the project root."""
    candidate = Path(grades_path).expanduser()
    return [candidate] if candidate.is_absolute() else [Path.cwd() / candidate, paths.project_root() / candidate]


def missing_grades_file(grades_path: str) -> str | None:
    """The `grades_path` rule: None for '' or an existing file, else what was tried."""
    if not grades_path or any(place.is_file() for place in grades_path_candidates(grades_path)):
        return None
    tried = ", ".join(map(str, grades_path_candidates(grades_path)))
    return f"names no file (tried {tried}); {FILE_HINT}"


def resolve_grades_path(grades_path: str) -> Path:
    """The first candidate that is a file; `ParameterError` naming the places tried when none is."""
    tried = grades_path_candidates(grades_path)
    for place in tried:
        if place.is_file():
            return place.resolve()
    raise ParameterError(f"grades_path={grades_path!r}: no such file (tried {', '.join(map(str, tried))}); "
                         f"{FILE_HINT}", parameter="grades_path", value=grades_path)
