"""Lift assert-mode test snippets into call mode: the child only calls the entry point, the parent judges.

`lift_snippet(snippet, entry_points)` reads a snippet with `ast` (nothing is executed) and, when its shape allows,
returns a `LiftedTest`: the entry-point calls with their literal arguments, in execution order, and the steps the
parent replays on the decoded return values (`sandbox_lifted_eval`). Shapes lifted:

- `assert <expr>` (with an optional message) where the expression uses comparisons, `not`/`and`/`or`, `in`,
  `is None`, arithmetic, subscripts, a whitelist of pure builtins (`len`, `sorted`, `set`, `tuple`, `abs`,
  `isinstance`...) and of `math` (`math.isclose`, `math.prod`...), comprehensions over values;
- `name = f(<literal args>)`, `f(<literal args>)` as a statement, `name = <constant expression>`;
- `for a, b in [<literal table>]: ...` (unrolled), `import math`, `from math import isclose`;
- HumanEval's `def check(candidate): ...` followed by `check(<entry point>)`, and aliases `candidate = f` (the child
  calls the function object the alias captured, `LiftedTest.routes`, even once the program rebinds its name);
- a mutable literal argument read after the call (`inp = [1]; f(inp); assert inp == [1]`): the child calls a
  wrapper that also returns the arguments as the call left them.

Anything else (keyword arguments to the entry point, calls inside comprehensions, an argument passed twice or
read in the same expression that passes it, or shared with a loop table or a value built from it, a call's value or
argument read after a later call (`sandbox_lift_order`), a call Python may skip (under and/or, if-else, a
chained comparison: the child makes every call), `is` other than with None/True/False, a check() local named like a
global, other imports, try/except, ...) is `NotLiftable(reason)` and runs in assert mode.
"""

from __future__ import annotations

import ast
import copy
import functools
from dataclasses import dataclass
from typing import Any

from audit_lib.sandbox.lift_calls import CallExtractor
from audit_lib.sandbox.lift_order import Reads, StaleRead
from audit_lib.sandbox.lift_program import bound_names
from audit_lib.sandbox.lifted_eval import ALLOWED_BUILTINS, ALLOWED_MATH, CALL_PREFIX, check_expression
from audit_lib.sandbox.lifting_env import NO_LITERAL, Alias, Function, Literal, Opaque, Refuse, immutable, literal_value

MAX_UNROLLED_STATEMENTS = 20_000
MAX_CALLS = 5_000
ALLOWED_IMPORTS = frozenset({"math"})


@dataclass(frozen=True)
class Step:
    """One statement the parent replays: `bind` (target = expr), `check` (assert expr, msg) or `run` (expr)."""

    kind: str
    expr: ast.expr
    target: ast.expr | None = None
    msg: ast.expr | None = None


@dataclass(frozen=True)
class LiftedTest:
    """The calls the child makes (`entry_point(*args)` per entry, in order) and the steps the parent replays."""

    entry_point: str
    calls: tuple[tuple[Any, ...], ...]
    steps: tuple[Step, ...]
    asserts: int
    # True when a step reads an argument after the call (a mutation check): the child then calls a wrapper that
    # returns [value, [*args]] (`sandbox_lift_program.wrapper_source`): the parent sees the arguments as the call
    # left them.
    reads_arguments: bool = False
    # Builtin names the replay resolves itself (`len`, `sorted`...): the runner does not lift the test for a
    # program that binds one of them at module level, since in assert mode the snippet would see the program's.
    builtins_used: frozenset[str] = frozenset()
    # Names the snippet binds at module level (imports, assignments, loop targets, `def check`): in assert mode they
    # are the program's globals too, lifted they exist only in the parent, so the runner does not lift the test for
    # a program that reads one of them.
    module_names: frozenset[str] = frozenset()
    # (name, module) of those bound only by `import module [as name]`: the same object as the program's own import.
    module_imports: frozenset[tuple[str, str]] = frozenset()
    # With a call through an alias: per call, (the alias slot it calls, or -1 for the entry point by name, the slots
    # to capture the entry point's current object into before it). The child then calls the routing wrapper
    # (`sandbox_lift_program.wrapper_source(routed=True)`) with the pair as its first argument.
    routes: tuple[tuple[int, tuple[int, ...]], ...] | None = None


@dataclass(frozen=True)
class NotLiftable:
    """Why a snippet stays in assert mode."""

    reason: str


_MODULE = object()


@functools.lru_cache(maxsize=4096)
def lift_snippet(snippet: str, entry_points: frozenset[str] | tuple[str, ...]) -> LiftedTest | NotLiftable:
    """The call-mode form of `snippet` (entry points called by these names), or why there is none."""
    try:
        tree = ast.parse(snippet)
    except (SyntaxError, ValueError) as exc:
        return NotLiftable(f"does not parse on its own: {type(exc).__name__}")
    lifter = _Lifter(frozenset(entry_points))
    try:
        lifter.block(tree.body, {})
    except Refuse as exc:
        return NotLiftable(str(exc))
    except RecursionError:
        return NotLiftable("nested too deep")
    if not lifter.asserts:
        return NotLiftable("no assert")
    if lifter.entry_point is None:
        return NotLiftable("calls no entry point")
    return LiftedTest(lifter.entry_point, tuple(lifter.calls), tuple(lifter.steps), lifter.asserts,
                      lifter.reads_arguments, frozenset(lifter.builtins_used), frozenset(lifter.module_names),
                      lifter.module_imports(), tuple(lifter.routes) if lifter.routed else None)


class _Lifter:
    def __init__(self, entry_points: frozenset[str]) -> None:
        self.entry_points = entry_points
        self.entry_point: str | None = None
        self.calls: list[tuple[Any, ...]] = []
        self.steps: list[Step] = []
        self.asserts = 0
        self.statements = 0
        self.reads_arguments = False
        self.builtins_used: set[str] = set()
        self.module_names: set[str] = set()
        self.imports: dict[str, set[str]] = {}
        self.rebound: set[str] = set()
        self.module_env: dict[str, Any] | None = None
        self.aliases = 0
        self.to_capture: list[int] = []  # alias slots made since the last call
        self.routes: list[tuple[int, tuple[int, ...]]] = []
        self.routed = False

    # ---- statements ----------------------------------------------------------------------------------------------

    def block(self, body: list[ast.stmt], env: dict[str, Any]) -> None:
        if self.module_env is None:
            self.module_env = env
        for statement in body:
            self.statements += 1
            if self.statements > MAX_UNROLLED_STATEMENTS:
                raise Refuse("too many statements once loops are unrolled")
            self.statement(statement, env)
            if env is self.module_env:
                self.module_names.update(bound_names(statement))
                if isinstance(statement, ast.Import):
                    for alias in statement.names:
                        self.imports.setdefault(alias.asname or alias.name, set()).add(alias.name)
                else:
                    self.rebound.update(bound_names(statement))

    def module_imports(self) -> frozenset[tuple[str, str]]:
        return frozenset((name, next(iter(modules))) for name, modules in self.imports.items()
                         if len(modules) == 1 and name not in self.rebound)

    def statement(self, node: ast.stmt, env: dict[str, Any]) -> None:
        if isinstance(node, ast.Pass):
            return
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return  # a docstring or a bare constant
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self.import_(node, env)
        elif isinstance(node, ast.Assert):
            self.asserts += 1
            test, _held = self.expression(node.test, env, read=True)
            msg = self.expression(node.msg, env, calls_allowed=False, read=True)[0] if node.msg is not None else None
            self.steps.append(Step("check", test, msg=msg))
        elif isinstance(node, ast.Assign):
            self.assign(node, env)
        elif isinstance(node, ast.Expr):
            self.expression_statement(node.value, env)
        elif isinstance(node, ast.FunctionDef):
            self.function_def(node, env)
        elif isinstance(node, ast.For):
            self.for_loop(node, env)
        else:
            raise Refuse(f"statement {type(node).__name__}")

    def import_(self, node: ast.Import | ast.ImportFrom, env: dict[str, Any]) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name not in ALLOWED_IMPORTS:
                    raise Refuse(f"import {alias.name}")
                env[alias.asname or alias.name] = _MODULE
                self.steps.append(Step("bind", ast.Name(f"{CALL_PREFIX}module:{alias.name}", ast.Load()),
                                       target=ast.Name(alias.asname or alias.name, ast.Store())))
            return
        if node.module not in ALLOWED_IMPORTS or node.level:
            raise Refuse(f"from {node.module} import")
        for alias in node.names:
            if alias.name not in ALLOWED_MATH:
                raise Refuse(f"from math import {alias.name}")
            env[alias.asname or alias.name] = Opaque()
            self.steps.append(Step("bind", ast.Name(f"{CALL_PREFIX}math:{alias.name}", ast.Load()),
                                   target=ast.Name(alias.asname or alias.name, ast.Store())))

    def assign(self, node: ast.Assign, env: dict[str, Any]) -> None:
        if len(node.targets) != 1:
            raise Refuse("chained assignment")
        target = node.targets[0]
        names = _target_names(target)
        value = node.value
        if isinstance(target, ast.Name) and isinstance(value, ast.Name) and self.entry_of(value.id, env):
            env[target.id] = self.alias_of(value.id, env)  # candidate = solution
            return
        literal = literal_value(value)
        if literal is not NO_LITERAL and isinstance(target, ast.Name):
            env[target.id] = Literal(literal)
            self.steps.append(Step("bind", ast.Constant(literal), target=target))
            return
        expr, held = self.expression(value, env)
        for read in ast.walk(value):  # `b = [a]`, `b = a`: b may hold a's object, which a later call could change
            bound = env.get(read.id) if isinstance(read, ast.Name) else None
            if isinstance(bound, Literal) and not immutable(bound.value):
                bound.aliased = True
        for name in names:
            env[name] = Opaque(held)
        self.steps.append(Step("bind", expr, target=copy.deepcopy(target)))

    def expression_statement(self, value: ast.expr, env: dict[str, Any]) -> None:
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
                and isinstance(env.get(value.func.id), Function):
            self.inline_check(value, env)
            return
        self.steps.append(Step("run", self.expression(value, env)[0]))

    def function_def(self, node: ast.FunctionDef, env: dict[str, Any]) -> None:
        arguments = node.args
        if node.decorator_list or arguments.posonlyargs or arguments.vararg or arguments.kwonlyargs \
                or arguments.kwarg or arguments.defaults or len(arguments.args) != 1:
            raise Refuse("a function other than check(candidate)")
        env[node.name] = Function(node)

    def inline_check(self, call: ast.Call, env: dict[str, Any]) -> None:
        function = env[call.func.id].node
        if call.keywords or len(call.args) != 1 or not isinstance(call.args[0], ast.Name):
            raise Refuse("check() called with something other than one function name")
        entry = self.entry_of(call.args[0].id, env)
        if entry is None:
            raise Refuse(f"check() called with {call.args[0].id}, not an entry point")
        # The body runs with globals visible and its own locals, as a call would. The replay has one namespace: a
        # local named like a global would overwrite it, or be read as the global before its assignment.
        shadowing = sorted({name for statement in function.body for name in bound_names(statement)} & env.keys())
        if shadowing:
            raise Refuse(f"check() binds {', '.join(shadowing)}, also a global (one namespace in the replay)")
        local_env = {**env, function.args.args[0].arg: self.alias_of(call.args[0].id, env)}
        self.block(function.body, local_env)

    def for_loop(self, node: ast.For, env: dict[str, Any]) -> None:
        if node.orelse:
            raise Refuse("for-else")
        table = literal_value(node.iter)
        named = env.get(node.iter.id) if isinstance(node.iter, ast.Name) else None
        if table is NO_LITERAL and isinstance(named, Literal):
            if named.passed_to_call is not None or named.stale:
                raise Refuse(f"for over {node.iter.id} after a call that may have changed it")
            table = named.value
        if table is NO_LITERAL or not isinstance(table, (list, tuple, str, set, frozenset, dict)):
            raise Refuse("for over something other than a literal table")
        for row in table:
            bindings = _unpack(node.target, row)
            for name, value in bindings.items():
                env[name] = Literal(value, table=named if isinstance(named, Literal) else None)
                if isinstance(named, Literal):
                    named.rows.append(env[name])
            # The row as a constant: the parent copies a mutable one on each read, like a fresh literal.
            self.steps.append(Step("bind", ast.Constant(row), target=copy.deepcopy(node.target)))
            self.block(node.body, env)

    # ---- expressions ---------------------------------------------------------------------------------------------

    def expression(self, node: ast.expr, env: dict[str, Any], calls_allowed: bool = True,
                   read: bool = False) -> tuple[ast.expr, frozenset[int]]:
        """A copy of `node` with each entry-point call replaced by a reference to its outcome, and the calls whose
        objects its value may hold; `read` when the statement reads the value itself (an assert)."""
        made = len(self.calls)
        rewritten = CallExtractor(self, env, calls_allowed).visit(copy.deepcopy(node))
        problem = check_expression(rewritten, _known_names(env))
        if problem is not None:
            raise Refuse(problem)
        # Builtins the replay provides; in assert mode the program's own globals of these names would win.
        self.builtins_used.update(name.id for name in ast.walk(rewritten) if isinstance(name, ast.Name)
                                  and name.id in ALLOWED_BUILTINS and name.id not in env)
        held = {name: bound.calls for name, bound in env.items() if isinstance(bound, Opaque)}
        # A scalar builtin by its name only where the snippet has not rebound it (`len = max`), a math function
        # only through a module the snippet imported.
        modules = frozenset(name for name, bound in env.items() if bound is _MODULE)
        reads = Reads(held, made, rebound=frozenset(env.keys() - modules), modules=modules)
        try:
            return rewritten, reads.read(rewritten) if read else reads.value(rewritten)
        except StaleRead as exc:
            raise Refuse(str(exc)) from None

    def entry_of(self, name: str, env: dict[str, Any]) -> str | None:
        bound = env.get(name)
        if isinstance(bound, Alias):
            return bound.entry_point
        if bound is None and name in self.entry_points:
            return name
        return None

    def alias_of(self, name: str, env: dict[str, Any]) -> Alias:
        """The alias a new name bound to `name` is: the same object for an alias, else the entry point's object now."""
        bound = env.get(name)
        if isinstance(bound, Alias):
            return bound
        self.aliases += 1
        self.to_capture.append(self.aliases)
        return Alias(name, self.aliases)

    def add_call(self, entry: str, args: tuple[Any, ...], slot: int = -1, skippable: bool = False) -> int:
        if self.entry_point not in (None, entry):
            raise Refuse("calls more than one entry point")
        if skippable:
            # The child makes every call: one Python skips could change a later answer, an argument read after it,
            # or spend the request's time (a hang Python never runs).
            raise Refuse("an entry-point call Python may skip (and/or, if-else, chained comparison)")
        if len(self.calls) >= MAX_CALLS:
            raise Refuse("too many calls")
        self.entry_point = entry
        self.calls.append(args)
        self.routes.append((slot, tuple(self.to_capture)))
        self.to_capture.clear()
        self.routed = self.routed or slot >= 0
        return len(self.calls) - 1


def _target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
        return [e.id for e in target.elts]
    raise Refuse("assignment to something other than names")


def _unpack(target: ast.expr, value: Any) -> dict[str, Any]:
    if isinstance(target, ast.Name):
        return {target.id: value}
    if isinstance(target, (ast.Tuple, ast.List)):
        try:
            items = list(value)
        except TypeError:
            raise Refuse("loop row cannot be unpacked") from None
        if len(items) != len(target.elts):
            raise Refuse("loop row of the wrong length")
        bindings: dict[str, Any] = {}
        for element, item in zip(target.elts, items):
            bindings.update(_unpack(element, item))
        return bindings
    raise Refuse("loop target other than names")


def _known_names(env: dict[str, Any]) -> frozenset[str]:
    return frozenset(name for name, bound in env.items() if not isinstance(bound, (Alias, Function))) \
        | ALLOWED_BUILTINS.keys()
