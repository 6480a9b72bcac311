"""The import graph of `audit_lib`: no circles, and no module importing another module's private names.

Every import statement counts, deferred (inside a function) or for type checking only, so a circle cannot hide
behind either.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "audit_lib"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path) -> tuple[dict[str, set[str]], list[str]]:
    """Module -> the package's modules it imports, and every `from module import _private` across modules."""
    files = {module_name(path, root): path for path in sorted(root.rglob("*.py"))}
    edges: dict[str, set[str]] = {name: set() for name in files}
    private: list[str] = []
    for name, path in files.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges[name].update(alias.name for alias in node.names if alias.name in files)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
                for alias in node.names:
                    if f"{base}.{alias.name}" in files:
                        edges[name].add(f"{base}.{alias.name}")
                    elif base in files:
                        edges[name].add(base)
                        if alias.name.startswith("_") and not alias.name.startswith("__") and base != name:
                            private.append(f"{name} imports {base}.{alias.name}")
        edges[name].discard(name)
    return edges, private


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import each other, directly or through others (strongly connected)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for imported in sorted(edges[module]):
            if imported not in order:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], order[imported])
        if low[module] == order[module]:
            group = stack[stack.index(module):]
            del stack[stack.index(module):]
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(edges):
        if module not in order:
            visit(module)
    return found


def test_audit_lib_has_no_import_circle() -> None:
    edges, _ = import_graph(PACKAGE)
    assert len(edges) > 100
    assert circles(edges) == []


def test_no_module_imports_another_modules_private_names() -> None:
    assert import_graph(PACKAGE)[1] == []


def test_the_graph_sees_deferred_and_type_checking_circles_and_private_imports(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "sub" / "__init__.py").write_text("")
    (root / "a.py").write_text("def f():\n    from pkg.sub import b\n")
    (root / "sub" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..c import C\n")
    (root / "c.py").write_text("from pkg import a\nfrom pkg.sub.b import _hidden\n")
    edges, private = import_graph(root)
    assert circles(edges) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
    assert private == ["pkg.c imports pkg.sub.b._hidden"]
