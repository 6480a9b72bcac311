"""The program side of lifting (`sandbox_testrun`): what the program's text allows, and the harness added to it.

All by parsing, nothing executed. A lifted snippet's statements run in the parent, not in the program's globals
as in assert mode, so the runner keeps it in assert mode when the program binds a builtin the snippet uses
(`module_level_names`), reads a name the snippet binds (`names_read`) or reads `__name__`, and keeps all of a
program's snippets there when it could change names where no binding shows (a star import, `globals()`/`exec`,
`builtins.abs = ...`, `math.isclose = ...`, `sys.set_int_max_str_digits`: `program_allows_lifting`). The function the child
calls is appended to the program and runs in its globals: it looks up no name the program could have bound.
"""

from __future__ import annotations

import ast
import functools
import symtable

WRAPPER_NAME = "__benchaudit_lifted_call__"
_DYNAMIC_NAMESPACE = frozenset({"globals", "vars", "locals", "eval", "exec"})
# Names through which a program reaches bindings `module_level_names` cannot list (its globals by computed names,
# the builtins module, an imported module's attributes); found in none of the benchmarks' programs.
_UNSEEN_REACH = _DYNAMIC_NAMESPACE | {"__builtins__", "__import__", "setattr", "delattr", "getattr", "importlib"}
_INTERPRETER_STATE = frozenset({"modules", "set_int_max_str_digits", "f_globals", "f_builtins", "f_locals",
                                "_getframe"})
_UNPARSABLE = (SyntaxError, ValueError, MemoryError, RecursionError)


# Each runner call asks several of the questions below about one program: it is parsed (and its symbol table built)
# once. The trees are only read here.
@functools.lru_cache(maxsize=32)
def _tree(program: str) -> ast.Module | None:
    try:
        return ast.parse(program)
    except _UNPARSABLE:
        return None  # its load fails the same way in both modes


@functools.lru_cache(maxsize=32)
def _table(program: str) -> symtable.SymbolTable | None:
    try:
        return symtable.symtable(program, "<program>", "exec")
    except _UNPARSABLE:
        return None


def wrapper_source(entry_point: str, reads_arguments: bool, routed: bool = False) -> str:
    """The function the child calls for a lifted test: the entry point looked up by name at each call, as the
    snippet's own call would, and with `reads_arguments` the arguments as the call left them too. It looks up no
    other name: it runs in the program's globals, where the program could have bound any (`list`, `isinstance`).

    `routed`: its first argument is `[slot, [slots to capture]]` (`LiftedTest.routes`): before the call it keeps
    the entry point's current object in each slot to capture, as an alias made there would (`candidate = f`); then
    it calls the object in `slot`, or the entry point by name for -1."""
    function = "_function" if routed else entry_point
    returned = f"[{function}(*args), [*args]]" if reads_arguments else f"{function}(*args)"
    if not routed:
        return f"\n\n\ndef {WRAPPER_NAME}(*args):\n    return {returned}\n"
    return (f"\n\n\ndef {WRAPPER_NAME}(_route, *args, _captured={{}}):\n"
            f"    for _slot in _route[1]:\n        _captured[_slot] = {entry_point}\n"
            f"    _function = {entry_point} if _route[0] < 0 else _captured[_route[0]]\n"
            f"    return {returned}\n")


def append_harness(program: str, harness: str) -> str:
    """`program + harness`, only when the program parses on its own: else its text could take the harness in (a
    trailing decorator decorating the harness function), and the program alone fails its load the same way."""
    return program if _tree(program) is None else program + harness


def program_allows_lifting(program: str) -> str | None:
    """None when the program behaves the same loaded as a module and every name it could change for the snippet
    is one `module_level_names` sees; else why not."""
    tree = _tree(program)
    if tree is None:
        return None
    if any(isinstance(node, ast.Name) and node.id == "__name__" for node in ast.walk(tree)):
        return "the program reads __name__ (a __main__ block runs only in assert mode)"
    return _unseen_bindings(tree)


def _unseen_bindings(tree: ast.Module) -> str | None:
    """Why the program could change what the snippet's builtins, `math` or int printing mean where the parent
    cannot see it (in plain Python the snippet would use the program's versions), or None."""
    imported = {(alias.asname or alias.name).split(".")[0] for node in ast.walk(tree)
                if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            return f"a star import (from {node.module or '.'} import *) binds names the replay cannot see"
        if isinstance(node, ast.Name) and node.id in _UNSEEN_REACH:
            return f"the program uses {node.id}, which can bind names the replay cannot see"
        if isinstance(node, ast.Attribute) and node.attr.startswith("__") and node.attr.endswith("__") \
                and node.attr != "__init__":
            return f"the program reaches {node.attr} (a namespace, a type's or module's own setters)"
        if isinstance(node, ast.alias) and node.name.split(".")[0] == "importlib":
            return "the program imports importlib"
        if isinstance(node, ast.Match):
            return "a match statement binds names by pattern"
        reached = node.attr if isinstance(node, ast.Attribute) else (node.name if isinstance(node, ast.alias) else None)
        if reached in _INTERPRETER_STATE:
            return f"the program reaches {reached}, interpreter-wide state the snippet shares in plain Python"
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load) and (
                isinstance(node.value, ast.Call) or (isinstance(node.value, ast.Name) and node.value.id in imported)):
            return f"the program sets .{node.attr} on a module, which the snippet would share"  # `builtins.abs = ...`
    return None


def module_level_names(program: str) -> frozenset[str]:
    """Names the program binds in its module namespace (outside function and class bodies, plus `global`s)."""
    tree = _tree(program)
    if tree is None:
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
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            # their own scope, but a walrus inside binds in the module's
            names.update(inner.target.id for inner in ast.walk(node) if isinstance(inner, ast.NamedExpr))
            continue
        elif isinstance(node, ast.Lambda):
            continue
        pending.extend(ast.iter_child_nodes(node))
    return frozenset(names)


def names_read(program: str) -> frozenset[str] | None:
    """The globals the program's functions (lambdas, classes, comprehensions) read or assign: what a snippet's
    module-level binding would change once a call runs (the module body ran before the snippet). None when the
    program reaches its namespace by a computed name (`globals()`, `vars()`, `eval`, `exec`)."""
    tree, table = _tree(program), _table(program)
    if tree is None or table is None:
        return frozenset()
    if any(isinstance(node, ast.Name) and node.id in _DYNAMIC_NAMESPACE for node in ast.walk(tree)):
        return None
    return frozenset(symbol.get_name() for scope in _inner_scopes(table) for symbol in scope.get_symbols()
                     if symbol.is_global() or symbol.is_declared_global()
                     or (scope.get_type() == "class" and symbol.is_referenced()))


def _inner_scopes(table: symtable.SymbolTable) -> list[symtable.SymbolTable]:
    """Every scope nested in `table` (functions, classes, lambdas, comprehensions), at any depth."""
    scopes: list[symtable.SymbolTable] = []
    pending = list(table.get_children())
    while pending:
        scope = pending.pop()
        pending.extend(scope.get_children())
        scopes.append(scope)
    return scopes


def plain_imports(program: str) -> dict[str, str]:
    """{name: module} for each global the program binds only by an unconditional top-level `import module [as
    name]`: a snippet's own `import module [as name]` binds it to the very same object, so it changes nothing."""
    tree, table = _tree(program), _table(program)
    if tree is None or table is None:
        return {}
    modules: dict[str, set[str | None]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                name = (alias.asname or alias.name).split(".")[0]
                plain = isinstance(node, ast.Import) and "." not in alias.name
                modules.setdefault(name, set()).add(alias.name if plain else None)
    top_level = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.Import)
                 for alias in node.names}
    rebound = {symbol.get_name() for scope in _inner_scopes(table) for symbol in scope.get_symbols()
               if symbol.is_declared_global() and (symbol.is_assigned() or symbol.is_imported())}
    found: dict[str, str] = {}
    for name, imported in modules.items():
        module = next(iter(imported))
        symbol = table.lookup(name) if name in table.get_identifiers() else None
        if len(imported) == 1 and module is not None and name in top_level and name not in rebound \
                and symbol is not None and not symbol.is_assigned():
            found[name] = module
    return found


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
