"""Static structure of an Impossible-LCB `check(candidate)` test: its assertions, their setup, and AST diffs.

Nothing here executes test code: tests are only parsed with `ast`. Executable snippets built here are handed to
`audit_lib.sandbox` by the metrics replay.
"""

from __future__ import annotations

import ast
import builtins
import copy
import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from audit_lib.errors import SchemaError

CHECK_FUNCTION = "check"
BUILTIN_NAMES: frozenset[str] = frozenset(dir(builtins))

ChangeKind = Literal["value", "operator", "operator_and_value", "value_without_call", "different_call",
                     "added_only", "removed_only"]
# Change kinds that keep the one-assertion rule: the same check on the same call, one value or operator changed.
SINGLE_ASSERTION_KINDS: frozenset[str] = frozenset({"value", "operator", "operator_and_value", "value_without_call"})


@dataclass(frozen=True)
class TestStructure:
    """Whether a test file compiles and has the `def check(candidate):` wrapper the harness calls."""

    syntax_error: str | None
    has_check: bool

    @property
    def broken(self) -> bool:
        return self.syntax_error is not None or not self.has_check

    @property
    def reason(self) -> str:
        if self.syntax_error is not None:
            return f"does not compile: {self.syntax_error}"
        if not self.has_check:
            return f"no top-level `def {CHECK_FUNCTION}(...)` wrapper"
        return ""


@dataclass(frozen=True)
class Assertion:
    """One `assert` statement of a check function, numbered 0.. in source order."""

    index: int
    lineno: int
    col_offset: int
    statement_index: int            # position of its enclosing top-level statement in the check body
    nested: bool                    # inside a loop/if/with rather than directly in the check body
    source: str                     # ast.unparse of the assert
    call: str | None                # the `candidate(...)` call it checks (directly or through a setup variable)
    call_via_setup: bool            # the call sits in a setup line (`result = candidate(...)`), not the assert
    operator: str                   # "==", "is", "is not", "<", ... or "truth" for a bare expression
    subject: str | None             # left side of a single comparison
    expected: str | None            # right side of a single comparison
    setup_statements: tuple[int, ...]   # check-body statements this assertion needs, in order (transitive)
    uses_prelude: bool              # needs a module-level helper/import outside `check`

    @property
    def position(self) -> tuple[int, int]:
        return (self.lineno, self.col_offset)

    @property
    def has_direct_call(self) -> bool:
        return self.call is not None and not self.call_via_setup

    @property
    def depends_on_setup(self) -> bool:
        return bool(self.setup_statements) or self.uses_prelude


@dataclass(frozen=True)
class ParsedTest:
    """A parsed test: module prelude, the check body's statements, and its assertions."""

    candidate_name: str
    prelude: tuple[str, ...]             # module-level statements other than `def check`
    body: tuple[str, ...]                # check-body statements (ast.unparse), asserts included
    body_lines: tuple[int, ...]          # first source line of each body statement
    body_has_assert: tuple[bool, ...]
    assertions: tuple[Assertion, ...]
    body_nodes: tuple[ast.stmt, ...] = field(compare=False, repr=False)

    @property
    def setup_statement_indices(self) -> tuple[int, ...]:
        return tuple(i for i, has_assert in enumerate(self.body_has_assert) if not has_assert)


def inspect_structure(source: str) -> TestStructure:
    """Parse without executing and report whether the harness could call `check` at all."""
    try:
        module = ast.parse(source)
    except SyntaxError as exc:
        return TestStructure(syntax_error=f"{exc.msg} (line {exc.lineno})", has_check=False)
    return TestStructure(syntax_error=None, has_check=_find_check(module) is not None)


def parse_test(source: str, *, file: str = "<test>", row: int | None = None, field: str = "test") -> ParsedTest:
    """Parse a test into its assertions; a broken test raises `SchemaError` naming file, row and field."""
    try:
        module = ast.parse(source)
    except SyntaxError as exc:
        raise SchemaError(f"{file}: row {row}: field {field!r} does not compile ({exc.msg}, line {exc.lineno})",
                          file=file, row=row, field=field) from exc
    check = _find_check(module)
    if check is None:
        raise SchemaError(f"{file}: row {row}: field {field!r} has no top-level `def {CHECK_FUNCTION}(...)`",
                          file=file, row=row, field=field)
    if not check.args.args:
        raise SchemaError(f"{file}: row {row}: field {field!r}: `{CHECK_FUNCTION}` takes no candidate argument",
                          file=file, row=row, field=field)
    candidate_name = check.args.args[0].arg
    prelude_nodes = [node for node in module.body if node is not check]
    prelude_bound = set().union(*(bound_names(node) for node in prelude_nodes)) if prelude_nodes else set()
    body_nodes = tuple(check.body)
    body_has_assert = tuple(_contains_assert(node) for node in body_nodes)

    assertions: list[Assertion] = []
    for statement_index, statement in enumerate(body_nodes):
        for node in _asserts_in_source_order(statement):
            assertions.append(_describe_assertion(
                node, len(assertions), statement_index, statement, body_nodes, candidate_name, prelude_bound))
    return ParsedTest(
        candidate_name=candidate_name,
        prelude=tuple(ast.unparse(node) for node in prelude_nodes),
        body=tuple(ast.unparse(node) for node in body_nodes),
        body_lines=tuple(node.lineno for node in body_nodes),
        body_has_assert=body_has_assert,
        assertions=tuple(assertions),
        body_nodes=body_nodes,
    )


def count_asserts(source: str) -> int:
    """Number of `assert` statements in a code fragment (the manifest stores `a; b; c` one-liners)."""
    return sum(isinstance(node, ast.Assert) for node in ast.walk(ast.parse(source)))


# ---- dependency analysis -------------------------------------------------------------------------------------

def bound_names(node: ast.AST) -> set[str]:
    """Names a statement binds: assignment/for/with targets, defs, classes, imports, walrus targets."""
    names: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
            names.add(child.id)
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(child.name)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            for alias in child.names:
                names.add((alias.asname or alias.name).split(".")[0])
    return names


def free_names(node: ast.AST) -> set[str]:
    """Names read but not bound inside `node` (comprehension and loop variables are not free)."""
    loaded = {child.id for child in ast.walk(node) if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load)}
    locally_bound: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.comprehension):
            locally_bound |= bound_names(child.target)
        elif isinstance(child, (ast.For, ast.AsyncFor)):
            locally_bound |= bound_names(child.target)
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            arguments = child.args
            for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                        *( [arguments.vararg] if arguments.vararg else []),
                        *( [arguments.kwarg] if arguments.kwarg else [])):
                locally_bound.add(arg.arg)
    return loaded - locally_bound


def setup_closure(body: Sequence[ast.stmt], position: int, names: set[str], candidate_name: str,
                  prelude_bound: set[str]) -> tuple[tuple[int, ...], bool]:
    """Check-body statements before `position` that define `names` (transitively), and whether the prelude is needed."""
    needed: set[int] = set()
    uses_prelude = False
    pending = [(name, position) for name in names]
    seen: set[tuple[str, int]] = set()
    while pending:
        name, before = pending.pop()
        if (name, before) in seen or name == candidate_name:
            continue
        seen.add((name, before))
        definer = next((i for i in range(before - 1, -1, -1) if name in bound_names(body[i])), None)
        if definer is None:
            if name in prelude_bound:
                uses_prelude = True
            continue
        if definer not in needed:
            needed.add(definer)
            pending.extend((inner, definer) for inner in free_names(body[definer]))
    return tuple(sorted(needed)), uses_prelude


# ---- AST diff ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AssertChange:
    """A removed original assertion paired with the added assertion that checks the same call (or unpaired)."""

    kind: ChangeKind
    call: str | None
    removed: str | None
    added: str | None
    removed_operator: str | None
    added_operator: str | None
    removed_expected: str | None
    added_expected: str | None


@dataclass(frozen=True)
class TestDiff:
    """What a mutation changed between `original_test` and `test`, at the statement level of `check`."""

    asserts_removed: tuple[int, ...]        # indices into the original's assertions
    asserts_added: tuple[int, ...]          # indices into the mutated test's assertions
    setup_removed: tuple[str, ...]
    setup_added: tuple[str, ...]
    prelude_changed: bool
    changes: tuple[AssertChange, ...]
    added_without_call: tuple[int, ...]     # added assertions with no `candidate(...)` call of their own

    @property
    def single_assertion(self) -> bool:
        """The one-assertion rule: exactly one assert replaced by one assert on the same call, nothing else."""
        return (len(self.asserts_removed) == 1 and len(self.asserts_added) == 1 and not self.setup_removed
                and not self.setup_added and not self.prelude_changed
                and len(self.changes) == 1 and self.changes[0].kind in SINGLE_ASSERTION_KINDS)

    @property
    def violations(self) -> tuple[str, ...]:
        reasons: list[str] = []
        if len(self.asserts_removed) != 1:
            reasons.append(f"{len(self.asserts_removed)} asserts removed")
        if len(self.asserts_added) != 1:
            reasons.append(f"{len(self.asserts_added)} asserts added")
        if self.setup_added or self.setup_removed:
            reasons.append(f"setup lines +{len(self.setup_added)}/-{len(self.setup_removed)}")
        if self.prelude_changed:
            reasons.append("module-level code changed")
        kinds = {change.kind for change in self.changes}
        if kinds - SINGLE_ASSERTION_KINDS:
            reasons.append("unpaired or different-call change: " + ", ".join(sorted(kinds)))
        return tuple(reasons)


def diff_tests(original: ParsedTest, mutated: ParsedTest) -> TestDiff:
    """Align the two check bodies (assertions flattened) and classify every changed assertion."""
    original_units = _flat_units(original)
    mutated_units = _flat_units(mutated)
    matcher = difflib.SequenceMatcher(a=[unit[1] for unit in original_units],
                                      b=[unit[1] for unit in mutated_units], autojunk=False)
    removed_asserts: list[int] = []
    added_asserts: list[int] = []
    setup_removed: list[str] = []
    setup_added: list[str] = []
    for tag, a_start, a_end, b_start, b_end in matcher.get_opcodes():
        if tag == "equal":
            continue
        for kind, text, assertion_index in original_units[a_start:a_end]:
            (removed_asserts.append(assertion_index) if kind == "assert" else setup_removed.append(text))
        for kind, text, assertion_index in mutated_units[b_start:b_end]:
            (added_asserts.append(assertion_index) if kind == "assert" else setup_added.append(text))
    changes = _pair_changes([original.assertions[i] for i in removed_asserts],
                            [mutated.assertions[i] for i in added_asserts])
    return TestDiff(
        asserts_removed=tuple(removed_asserts),
        asserts_added=tuple(added_asserts),
        setup_removed=tuple(setup_removed),
        setup_added=tuple(setup_added),
        prelude_changed=original.prelude != mutated.prelude,
        changes=changes,
        added_without_call=tuple(i for i in added_asserts if not mutated.assertions[i].has_direct_call),
    )


def classify_change(removed: str, added: str, *, candidate_name: str = "candidate") -> AssertChange:
    """Classify one assertion pair given as source text (the manifest's one-liners)."""
    removed_node, added_node = _only_assert(removed), _only_assert(added)
    removed_parts = _comparison_parts(removed_node, candidate_name)
    added_parts = _comparison_parts(added_node, candidate_name)
    if removed_parts[3] is None and added_parts[3] is None and _same_shape(removed_node, added_node):
        return AssertChange("value_without_call", None, removed, added, removed_parts[0], added_parts[0],
                            removed_parts[2], added_parts[2])
    return _change_from_parts(removed, added, removed_parts, added_parts)


def _same_shape(first: ast.AST, second: ast.AST) -> bool:
    """Equal ASTs once every constant is blanked: the two differ only in literal values."""
    def blanked(node: ast.AST) -> str:
        clone = copy.deepcopy(node)
        for child in ast.walk(clone):
            if isinstance(child, ast.Constant):
                child.value = None
        return ast.dump(clone)
    return blanked(first) == blanked(second)


# ---- executable snippets -------------------------------------------------------------------------------------

def assertion_snippet(test: ParsedTest, assertion_index: int, entry_point: str) -> str:
    """A program tail that runs exactly one assertion (plus the setup it needs) against `entry_point`.

    Other asserts inside the same compound statement or inside needed setup are replaced by `pass`, so every
    assertion is run once and on its own.
    """
    target = test.assertions[assertion_index]
    keep = {target.position}
    statements = [*target.setup_statements, target.statement_index]
    body_lines = []
    for statement_index in statements:
        node = _without_other_asserts(test.body_nodes[statement_index], keep)
        body_lines.append(_indent(ast.unparse(node)))
    prelude = "\n".join(test.prelude)
    return (f"{prelude}\n\ndef {CHECK_FUNCTION}({test.candidate_name}):\n" + "\n".join(body_lines)
            + f"\n\n{CHECK_FUNCTION}({entry_point})\n")


# ---- internals -----------------------------------------------------------------------------------------------

def _find_check(module: ast.Module) -> ast.FunctionDef | None:
    return next((node for node in module.body
                 if isinstance(node, ast.FunctionDef) and node.name == CHECK_FUNCTION), None)


def _contains_assert(node: ast.AST) -> bool:
    return any(isinstance(child, ast.Assert) for child in ast.walk(node))


def _asserts_in_source_order(statement: ast.stmt) -> list[ast.Assert]:
    found = [child for child in ast.walk(statement) if isinstance(child, ast.Assert)]
    return sorted(found, key=lambda node: (node.lineno, node.col_offset))


def _describe_assertion(node: ast.Assert, index: int, statement_index: int, statement: ast.stmt,
                        body: Sequence[ast.stmt], candidate_name: str, prelude_bound: set[str]) -> Assertion:
    scope = _without_other_asserts(statement, {(node.lineno, node.col_offset)}) if statement is not node else node
    needed_names = free_names(scope) - BUILTIN_NAMES - {candidate_name}
    needed_names -= bound_names(statement) - bound_names(node)  # names set earlier in the same compound statement
    setup, uses_prelude = setup_closure(body, statement_index, needed_names, candidate_name, prelude_bound)
    operator, subject, expected, direct_call = _comparison_parts(node, candidate_name)
    call, via_setup = direct_call, False
    if call is None:
        for setup_index in reversed(setup):
            setup_call = _first_candidate_call(body[setup_index], candidate_name)
            if setup_call is not None:
                call, via_setup = setup_call, True
                break
    return Assertion(index=index, lineno=node.lineno, col_offset=node.col_offset, statement_index=statement_index,
                     nested=statement is not node,
                     source=ast.unparse(node), call=call, call_via_setup=via_setup, operator=operator,
                     subject=subject, expected=expected, setup_statements=setup, uses_prelude=uses_prelude)


def _comparison_parts(node: ast.Assert, candidate_name: str) -> tuple[str, str | None, str | None, str | None]:
    test = node.test
    call = _first_candidate_call(test, candidate_name)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        return (_OPERATOR_TEXT.get(type(test.ops[0]), type(test.ops[0]).__name__), ast.unparse(test.left),
                ast.unparse(test.comparators[0]), call)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return "not", ast.unparse(test.operand), None, call
    return "truth", ast.unparse(test), None, call


def _first_candidate_call(node: ast.AST, candidate_name: str) -> str | None:
    calls = [child for child in ast.walk(node) if isinstance(child, ast.Call)
             and isinstance(child.func, ast.Name) and child.func.id == candidate_name]
    if not calls:
        return None
    first = min(calls, key=lambda call: (call.lineno, call.col_offset))
    return ast.unparse(first)


_OPERATOR_TEXT: dict[type, str] = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not", ast.Lt: "<", ast.LtE: "<=",
    ast.Gt: ">", ast.GtE: ">=", ast.In: "in", ast.NotIn: "not in",
}


def _flat_units(test: ParsedTest) -> list[tuple[str, str, int]]:
    """Check body as ("assert", text, assertion index) and ("setup", text, -1) units, asserts flattened."""
    units: list[tuple[str, str, int]] = []
    by_statement: dict[int, list[Assertion]] = {}
    for assertion in test.assertions:
        by_statement.setdefault(assertion.statement_index, []).append(assertion)
    for statement_index, text in enumerate(test.body):
        inner = by_statement.get(statement_index, [])
        node = test.body_nodes[statement_index]
        if not inner:
            units.append(("setup", text, -1))
            continue
        if not isinstance(node, ast.Assert):
            units.append(("setup", ast.unparse(_without_other_asserts(node, set())), -1))
        units.extend(("assert", assertion.source, assertion.index) for assertion in inner)
    return units


def _pair_changes(removed: Sequence[Assertion], added: Sequence[Assertion]) -> tuple[AssertChange, ...]:
    changes: list[AssertChange] = []
    unpaired_added = list(added)
    for old in removed:
        partner = next((new for new in unpaired_added if new.call is not None and new.call == old.call), None)
        if partner is None:
            changes.append(AssertChange("removed_only", old.call, old.source, None, old.operator, None,
                                        old.expected, None))
            continue
        unpaired_added.remove(partner)
        changes.append(_change_from_parts(old.source, partner.source,
                                          (old.operator, old.subject, old.expected, old.call),
                                          (partner.operator, partner.subject, partner.expected, partner.call)))
    for new in unpaired_added:
        changes.append(AssertChange("added_only", new.call, None, new.source, None, new.operator, None,
                                    new.expected))
    return tuple(changes)


def _change_from_parts(removed: str, added: str, old: tuple[str, str | None, str | None, str | None],
                       new: tuple[str, str | None, str | None, str | None]) -> AssertChange:
    old_operator, old_subject, old_expected, old_call = old
    new_operator, new_subject, new_expected, new_call = new
    if old_call is None or old_call != new_call:
        kind: ChangeKind = "different_call"
    elif old_operator != new_operator and old_expected != new_expected:
        kind = "operator_and_value"
    elif old_operator != new_operator:
        kind = "operator"
    else:
        kind = "value"
    return AssertChange(kind, new_call if kind != "different_call" else None, removed, added,
                        old_operator, new_operator, old_expected, new_expected)


def _only_assert(source: str) -> ast.Assert:
    asserts = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Assert)]
    if len(asserts) != 1:
        raise ValueError(f"expected exactly one assert in {source!r}, found {len(asserts)}")
    return asserts[0]


class _DropOtherAsserts(ast.NodeTransformer):
    def __init__(self, keep: set[tuple[int, int]]) -> None:
        self.keep = keep

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        if (node.lineno, node.col_offset) in self.keep:
            return node
        return ast.copy_location(ast.Pass(), node)


def _without_other_asserts(statement: ast.stmt, keep: set[tuple[int, int]]) -> ast.stmt:
    """A copy of `statement` whose asserts, except those at the `keep` positions, became `pass`."""
    clone = copy.deepcopy(statement)
    return ast.fix_missing_locations(_DropOtherAsserts(keep).visit(clone))


def _indent(text: str) -> str:
    return "\n".join("    " + line if line else line for line in text.splitlines())
