"""The audit catalogue: every registered audit plugin, its notebook's tagged parameters, and `-p KEY VALUE`."""

from __future__ import annotations

import ast
import io
import json
import tokenize
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from audit_lib.errors import ParameterError, UnknownAuditError
from audit_lib.plugin import AuditPlugin

PARAMETERS_TAG = "parameters"


@dataclass(frozen=True)
class NotebookParameter:
    """One assignment in a notebook's `parameters` cell."""

    name: str
    type_name: str
    default: Any
    help: str = ""


@dataclass(frozen=True)
class Audit:
    """A runnable audit: its plugin, its notebook's declared parameters, and the parameters the plugin fixes."""

    name: str
    notebook: Path
    parameters: tuple[NotebookParameter, ...]
    title: str = ""
    fixed_params: Mapping[str, Any] = field(default_factory=dict)
    plugin: AuditPlugin[Any, Any] | None = field(default=None, compare=False, repr=False)

    def parameter(self, name: str) -> NotebookParameter | None:
        for candidate in self.parameters:
            if candidate.name == name:
                return candidate
        return None

    @property
    def declared_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)


def read_parameters(notebook_path: Path) -> tuple[NotebookParameter, ...]:
    """Parse the `parameters`-tagged cell: one literal assignment per statement, trailing comment as help."""
    source = parameters_cell_source(notebook_path)
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ParameterError(f"{notebook_path.name}: the parameters cell is not valid Python "
                             f"(line {exc.lineno}): {exc.msg}", file=str(notebook_path), row=exc.lineno) from exc
    comments = _comments_by_line(source)
    found: list[NotebookParameter] = []
    for statement in tree.body:
        target, value_node, annotation = _assignment_parts(statement)
        if target is None or value_node is None:
            raise ParameterError(
                f"{notebook_path.name}: parameters cell line {statement.lineno} is not a simple "
                f"`name = literal` assignment", file=str(notebook_path), row=statement.lineno)
        try:
            default = ast.literal_eval(value_node)
        except ValueError as exc:
            raise ParameterError(
                f"{notebook_path.name}: parameter {target!r} (line {statement.lineno}) must be a literal "
                f"(number, string, bool, None, list, dict)", file=str(notebook_path), row=statement.lineno,
                field=target) from exc
        type_name = annotation or _type_name(default)
        found.append(NotebookParameter(target, type_name, default, comments.get(statement.end_lineno or 0, "")))
    return tuple(found)


def parameters_cell_source(notebook_path: Path) -> str:
    notebook = nbformat.read(str(notebook_path), as_version=4)
    for cell in notebook.cells:
        if cell.get("cell_type") == "code" and PARAMETERS_TAG in cell.get("metadata", {}).get("tags", []):
            return str(cell.source)
    raise ParameterError(f"{notebook_path.name} has no code cell tagged {PARAMETERS_TAG!r}",
                         file=str(notebook_path))


def discover_audits(plugins: Mapping[str, AuditPlugin[Any, Any]] | None = None,
                    names: Sequence[str] = ()) -> dict[str, Audit]:
    """The named audits (default: all) of the registry, or of `plugins`, with their notebooks' parameters.

    Only the named audits' plugins are imported; an unknown name raises `UnknownAuditError` naming the known ones.
    """
    from audit_lib import benchmarks

    known = sorted(plugins) if plugins is not None else list(benchmarks.names())
    unknown = [name for name in names if name not in known]
    if unknown:
        raise UnknownAuditError(
            f"unknown audit {', '.join(map(repr, unknown))}; known audits: {', '.join(known) or '(none)'}",
            field="audit", value=unknown)
    wanted = sorted(dict.fromkeys(names)) if names else known
    audits: dict[str, Audit] = {}
    for name in wanted:
        plugin = plugins[name] if plugins is not None else benchmarks.load(name)
        notebook = plugin.notebook_path()
        audits[name] = Audit(name, notebook, read_parameters(notebook), plugin.title, dict(plugin.fixed_params),
                             plugin)
    return audits


def select_audits(names: Sequence[str], catalogue: Mapping[str, Audit]) -> list[Audit]:
    """The named audits (all when none are named), in the order given; unknown names raise."""
    if not names:
        return list(catalogue.values())
    unknown = [name for name in names if name not in catalogue]
    if unknown:
        raise UnknownAuditError(
            f"unknown audit {', '.join(map(repr, unknown))}; known audits: {', '.join(catalogue) or '(none)'}",
            field="audit", value=unknown)
    return [catalogue[name] for name in dict.fromkeys(names)]


def resolve_parameters(audits: Sequence[Audit], raw: Iterable[tuple[str, str]],
                       injected: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Per audit, the papermill parameters after validating every `-p KEY VALUE` against the notebooks.

    `KEY` applies to every selected audit that declares it; `AUDIT.KEY` to that audit only. A key that no
    selected audit declares, or a value that does not convert to the declared type, raises `ParameterError`.
    `injected` values (from `--executor`/`--mirror`) are passed only to notebooks that declare them.
    """
    by_audit: dict[str, dict[str, Any]] = {audit.name: {} for audit in audits}
    for key, value in raw:
        target_audit, _, name = key.rpartition(".")
        targets = [a for a in audits if a.name == target_audit] if target_audit else list(audits)
        if target_audit and not targets:
            raise ParameterError(f"-p {key}: {target_audit!r} is not one of the selected audits "
                                 f"({', '.join(a.name for a in audits)})", field=key)
        declaring = [a for a in targets if a.parameter(name) is not None]
        if not declaring:
            known = sorted({p.name for a in targets for p in a.parameters})
            raise ParameterError(f"unknown parameter {name!r}: no selected audit declares it "
                                 f"(known: {', '.join(known) or 'none'})", field=name)
        for audit in declaring:
            if name in audit.fixed_params:
                if target_audit:
                    raise ParameterError(f"-p {key}: {audit.name} fixes {name}={audit.fixed_params[name]!r}",
                                         field=name)
                continue
            parameter = audit.parameter(name)
            assert parameter is not None
            by_audit[audit.name][name] = coerce_value(parameter, value, audit=audit.name)
    for audit in audits:
        for name, value in (injected or {}).items():
            if value is not None and audit.parameter(name) is not None and name not in by_audit[audit.name]:
                by_audit[audit.name][name] = value
        by_audit[audit.name].update(audit.fixed_params)
    return by_audit


_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


def coerce_value(parameter: NotebookParameter, raw: str, *, audit: str = "") -> Any:
    """Convert a command-line string to the parameter's declared type, or raise `ParameterError`."""
    where = f"{audit}: " if audit else ""
    kind = parameter.type_name

    def bad(expected: str) -> ParameterError:
        return ParameterError(f"{where}parameter {parameter.name!r} expects {expected}, got {raw!r}",
                              field=parameter.name, value=raw, audit=audit)

    if kind == "str":
        return raw
    if kind == "bool":
        lowered = raw.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise bad("a bool (true/false)")
    if kind == "int":
        try:
            return int(raw.strip())
        except ValueError:
            raise bad("an int") from None
    if kind == "float":
        try:
            return float(raw.strip())
        except ValueError:
            raise bad("a float") from None
    parsed = _parse_literal(raw)
    if kind in ("list", "dict", "tuple"):
        expected_type = {"list": (list, tuple), "dict": (dict,), "tuple": (list, tuple)}[kind]
        if not isinstance(parsed, expected_type):
            raise bad(f"a {kind} (JSON or Python literal)")
        return list(parsed) if kind == "list" else parsed
    # Default None or an annotation we do not interpret: take a literal when it parses, else the text.
    return parsed if parsed is not _UNPARSED else raw


_UNPARSED = object()


def _parse_literal(raw: str) -> Any:
    text = raw.strip()
    if text.lower() in ("none", "null"):
        return None
    for parse in (json.loads, ast.literal_eval):
        try:
            return parse(text)
        except (ValueError, SyntaxError, TypeError):
            continue
    return _UNPARSED


def _assignment_parts(statement: ast.stmt) -> tuple[str | None, ast.expr | None, str | None]:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
            and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id, statement.value, None
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value:
        annotation = ast.unparse(statement.annotation)
        return statement.target.id, statement.value, annotation
    return None, None, None


def _type_name(value: Any) -> str:
    return "None" if value is None else type(value).__name__


def _comments_by_line(source: str) -> dict[int, str]:
    comments: dict[int, str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = token.string.lstrip("#").strip()
    except (tokenize.TokenError, IndentationError):
        pass
    return comments
