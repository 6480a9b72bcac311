"""The program side of lifting (`sandbox_testrun`): what the program's text allows, and the harness added to it.

All by parsing, nothing executed. A lifted snippet's statements run in the parent, not in the program's globals
as in assert mode, so the runner keeps it in assert mode when the program binds a builtin the snippet uses
(`module_level_names`), reads a name the snippet binds (`names_read`) or reads `__name__`. The function the child
calls is appended to the program and runs in its globals: it looks up no name the program could have bound.
"""

from __future__ import annotations

import ast

WRAPPER_NAME = "__benchaudit_lifted_call__"
_DYNAMIC_NAMESPACE = frozenset({"globals", "vars", "locals", "eval", "exec"})


def wrapper_source(entry_point: str, reads_arguments: bool) -> str:
    """The function the child calls for a lifted test: the entry point looked up by name at each call, as the
    snippet's own call would, and with `reads_arguments` the arguments as the call left them too. It looks up no
    other name: it runs in the program's globals, where the program could have bound any (`list`, `isinstance`)."""
    returned = f"[{entry_point}(*args), [*args]]" if reads_arguments else f"{entry_point}(*args)"
    return f"\n\n\ndef {WRAPPER_NAME}(*args):\n    return {returned}\n"


def append_harness(program: str, harness: str) -> str:
    """`program + harness`, only when the program parses on its own: else its text could take the harness in (a
    trailing decorator decorating the harness function), and the program alone fails its load the same way."""
    try:
        ast.parse(program)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return program
    return program + harness


def program_allows_lifting(program: str) -> str | None:
    """None when the program behaves the same loaded as a module; else why not (it reads `__name__`)."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None  # the load fails the same way in both modes
    if any(isinstance(node, ast.Name) and node.id == "__name__" for node in ast.walk(tree)):
        return "the program reads __name__ (a __main__ block runs only in assert mode)"
    return None


def module_level_names(program: str) -> frozenset[str]:
    """Names the program binds in its module namespace (outside function and class bodies, plus `global`s)."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return frozenset()
    names: set[str] = set()
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            names.update(name for inner in ast.walk(node) if isinstance(inner, ast.Global) for name in inner.names)
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue  # their own scopes (a walrus inside is rare enough to ignore)
        pending.extend(ast.iter_child_nodes(node))
    return frozenset(names)


def names_read(program: str) -> frozenset[str] | None:
    """Every name the program's text mentions (as a name, an attribute-free string constant, a `global`); None when
    it reaches its namespace by a computed name (`globals()`, `vars()`, `eval`, `exec`) or does not parse."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            names.add(node.value)
    return None if names & _DYNAMIC_NAMESPACE else frozenset(names)


def bound_names(statement: ast.stmt) -> set[str]:
    """The names a statement binds in the scope it runs in (not in nested functions or comprehensions)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    names: set[str] = set()
    pending: list[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        elif isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        pending.extend(ast.iter_child_nodes(node))
    return names
