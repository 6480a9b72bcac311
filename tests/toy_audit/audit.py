"""A toy audit: everything a new benchmark needs, in one module and one notebook (docs/ADDING_AN_AUDIT.md)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from audit_lib.findings import Result
from audit_lib.plugin import AuditPlugin, CheckSpec, param


@dataclass(frozen=True)
class Params:
    """Equal to the notebook's parameters cell (a test keeps them in step)."""

    text: str = param("to be or not to be", "the text to audit")
    max_repeats: int = param(2, "a word may appear at most this often", minimum=1)


@dataclass(frozen=True)
class Inputs:
    words: tuple[str, ...]
    provenance: tuple[Mapping[str, Any], ...] = ()
    missing: Mapping[str, str] = field(default_factory=dict)


def load(params: Params) -> Inputs:
    # A real audit fetches files through audit_lib.data.fetch and records each unavailable one here.
    return Inputs(tuple(params.text.split()), missing={"toy/glossary.txt": "toy/glossary.txt is not published"})


def repeats(inputs: Inputs, params: Params) -> Result:
    counts = Counter(inputs.words)
    over = sorted(word for word, n in counts.items() if n > params.max_repeats)
    return Result("defect" if over else "pass", observed={"words_over_limit": over},
                  expected={"words_over_limit": []},
                  summary=f"{len(over)} word(s) repeat more than {params.max_repeats} times: {over}",
                  details=[{"word": word, "count": counts[word]} for word in over])


def glossary(inputs: Inputs, params: Params) -> Result:
    raise AssertionError("never called: its need toy/glossary.txt is missing")


def broken(inputs: Inputs, params: Params) -> Result:
    raise ValueError("this check always fails: it shows the error path")


# Each check is declared once: id, title, the function ("module:function", imported when it runs), needs.
AUDIT = AuditPlugin(
    name="toy_audit", title="Toy audit", params=Params, load=load,
    checks=(CheckSpec("repeats", "No word repeats more than max_repeats times", ".audit:repeats"),
            CheckSpec("glossary", "Every word is in the glossary", ".audit:glossary", needs=("toy/glossary.txt",)),
            CheckSpec("broken", "A check that raises", ".audit:broken")),
    notebook=Path(__file__).with_name("toy_audit.ipynb"))
