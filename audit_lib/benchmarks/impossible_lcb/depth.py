"""How every check states its depth: manifest-level (all tasks) or row-level (the full rows available)."""

from __future__ import annotations

from typing import Any


def depth_meta(depth: str, tasks: int, **extra: Any) -> dict[str, Any]:
    return {"depth": depth, "tasks": tasks, **extra}


def depth_text(depth: str, tasks: int, note: str = "") -> str:
    return f"[depth: {depth}, {tasks} tasks{'; ' + note if note else ''}] "
