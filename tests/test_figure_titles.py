"""Every figure the library draws has a title: a plot in a shared report must say what it shows."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "audit_lib"


def calls(node: ast.AST, attribute: str) -> bool:
    return any(isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == attribute
               for call in ast.walk(node))


def untitled_figures() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(function, ast.FunctionDef) and calls(function, "subplots") and not (
                    calls(function, "set_title") or calls(function, "suptitle")):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{function.lineno} {function.name}")
    return found


def test_every_function_that_draws_a_figure_titles_it() -> None:
    assert untitled_figures() == []


def test_the_scan_finds_the_figures() -> None:
    drawn = [path for path in PACKAGE.rglob("*.py") if "subplots(" in path.read_text(encoding="utf-8")]
    assert len(drawn) >= 5  # the scan looks where figures are drawn: it cannot pass by finding none
