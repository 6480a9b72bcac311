"""Readable values for reports: numbers with thousands separators, `key: value` lines, no machine paths."""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from audit_lib import paths
from audit_lib.findings import to_jsonable

VALUE_TEXT_LIMIT = 400
CELL_TEXT_LIMIT = 300
LIST_ITEMS_SHOWN = 12
HASH_CHARS_SHOWN = 12
_HEX_HASH = re.compile(r"^[0-9a-f]{40,128}$")
# An absolute path of two or more segments that does not continue a word, a URL or a relative path.
_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/~<>\-])(?:/[\w.+\-@]+){2,}/?")
_DATA_URI = re.compile(r"(data:[\w/+.\-]+;base64,[A-Za-z0-9+/=]+)")


def _known_roots() -> list[tuple[str, str]]:
    """(absolute prefix, how to show it), longest first; read on each call: tests and runs change them."""
    roots: list[tuple[Path | None, str]] = [
        (paths.mirror_dir(), "<mirror>"),
        (paths.data_cache_dir(), "<cache>"),
        (paths.reports_dir(), "<reports>"),
        (paths.project_root(), "."),
        (Path.home(), "~"),
    ]
    seen: list[tuple[str, str]] = []
    for root, label in roots:
        if root is None or str(root) in ("/", ""):
            continue
        for variant in {str(root), os.path.realpath(root)}:
            if all(variant != prefix for prefix, _ in seen):
                seen.append((variant.rstrip("/"), label))
    return sorted(seen, key=lambda item: len(item[0]), reverse=True)


def _short_path(match: re.Match[str], roots: list[tuple[str, str]]) -> str:
    text = match.group(0)
    for prefix, label in roots:
        if text == prefix or text.startswith(prefix + "/"):
            rest = text[len(prefix):].lstrip("/")
            if label == ".":
                return rest or "."
            return f"{label}/{rest}" if rest else label
    segments = [s for s in text.split("/") if s]
    if "data_cache" in segments:
        return "<cache>/" + "/".join(segments[segments.index("data_cache") + 1:])
    if ".staging" in segments:
        return "<reports>/" + segments[-1]
    return "…/" + "/".join(segments[-2:])


def redact_paths(text: str) -> str:
    """`text` with every absolute machine path shown as `<mirror>/…`, `<cache>/…`, relative or `…/dir/file`."""
    if "/" not in text:
        return text
    roots = _known_roots()
    pieces = _DATA_URI.split(text)  # embedded images and files are left byte for byte
    for index in range(0, len(pieces), 2):
        pieces[index] = _ABSOLUTE_PATH.sub(lambda m: _short_path(m, roots), pieces[index])
    return "".join(pieces)


def esc(value: Any) -> str:
    """HTML-escape any value's text form, machine paths shortened."""
    return html.escape(redact_paths(str(value)), quote=True)


def number_text(value: int | float) -> str:
    """`122,683`, `0.383`, `1.5e-07`: thousands separators, six significant digits, no float noise."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    if value == 0 or 1e-4 <= abs(value) < 1e15:
        if abs(value) >= 1e5:
            return f"{value:,.0f}" if value == int(value) else f"{value:,.1f}"
        text = f"{value:.6g}"
        sign, digits = ("-", text[1:]) if text.startswith("-") else ("", text)
        whole, _, fraction = digits.partition(".")
        return f"{sign}{int(whole):,}" + (f".{fraction}" if fraction else "")
    return f"{value:.3g}"


def value_text(value: Any, limit: int = VALUE_TEXT_LIMIT) -> str:
    """A compact, one-line text form of an observed/expected value or a table cell."""
    if value is None:
        return "—"
    plain = to_jsonable(value)
    if isinstance(plain, str):
        text = plain
    elif isinstance(plain, bool):
        text = str(plain).lower()
    elif isinstance(plain, (int, float)):
        text = number_text(plain)
    elif isinstance(plain, (list, dict)):
        text = json.dumps(plain, ensure_ascii=False, default=str)
    else:
        text = str(plain)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def inline_text(value: Any, limit: int) -> str:
    """One value on one line, readable: numbers separated, lists joined, long hashes shortened."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return number_text(value)
    if isinstance(value, str):
        if _HEX_HASH.match(value):
            return value[:HASH_CHARS_SHOWN] + "…"
        return value if len(value) <= limit else value[: limit - 1] + "…"
    if isinstance(value, list):
        shown = ", ".join(inline_text(item, 80) for item in value[:LIST_ITEMS_SHOWN])
        more = f", … (+{len(value) - LIST_ITEMS_SHOWN:,} more)" if len(value) > LIST_ITEMS_SHOWN else ""
        text = f"[{shown}{more}]"
        return text if len(text) <= limit else text[: limit - 1] + "…"
    if isinstance(value, dict):
        text = ", ".join(f"{k}: {inline_text(v, 80)}" for k, v in value.items()) or "—"
        return text if len(text) <= limit else text[: limit - 1] + "…"
    return str(value)


def value_lines(value: Any, limit: int = VALUE_TEXT_LIMIT) -> str:
    """Markup for an observed/expected value: one `key: value` line per key (one level), else one line."""
    plain = to_jsonable(value)
    if isinstance(plain, list) and plain and all(isinstance(item, Mapping) for item in plain):
        lines = [f'<div class="kv">{esc(inline_text(item, limit))}</div>' for item in plain[:LIST_ITEMS_SHOWN]]
        if len(plain) > LIST_ITEMS_SHOWN:
            lines.append(f'<div class="kv">… (+{len(plain) - LIST_ITEMS_SHOWN:,} more)</div>')
        return "".join(lines)
    if isinstance(plain, Mapping) and plain:
        lines = []
        for key, item in plain.items():
            shown = inline_text(item, limit)
            title = f' title="{esc(item)}"' if isinstance(item, str) and shown != item else ""
            lines.append(f'<div class="kv"><span class="k">{esc(key)}</span>: '
                         f'<span class="v"{title}>{esc(shown)}</span></div>')
        return "".join(lines)
    shown = inline_text(plain, limit)
    title = f' title="{esc(plain)}"' if isinstance(plain, str) and shown != plain else ""
    return f'<span class="v"{title}>{esc(shown)}</span>'


def cell_markup(value: Any, limit: int = CELL_TEXT_LIMIT) -> str:
    """A table cell's content and its sort key: numbers sort by value, the rest by text."""
    plain = to_jsonable(value)
    if isinstance(plain, (int, float)) and not isinstance(plain, bool):
        return f'<td data-v="{plain!r}" class="num">{esc(number_text(plain))}</td>'
    if isinstance(plain, str) and _HEX_HASH.match(plain):
        return f'<td class="mono" title="{esc(plain)}">{esc(plain[:HASH_CHARS_SHOWN])}…</td>'
    text = "" if plain is None else (inline_text(plain, limit) if not isinstance(plain, str) else plain)
    if len(text) > limit:
        return f'<td title="{esc(text[:2000])}">{esc(text[: limit - 1])}…</td>'
    return f"<td>{esc(text)}</td>"


__all__ = ["esc", "redact_paths", "number_text", "inline_text", "value_text", "value_lines", "cell_markup",
           "VALUE_TEXT_LIMIT", "CELL_TEXT_LIMIT"]
