"""The visibility rule "the even-numbered assertions are shown, plus the changed one", under both readings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from audit_lib.benchmarks.impossible_lcb.assertions import ParsedTest

Numbering = Literal["zero_based", "one_based"]
NUMBERINGS: tuple[Numbering, ...] = ("zero_based", "one_based")


def even_numbered_positions(n_assertions: int, numbering: Numbering) -> tuple[int, ...]:
    """0-based indices of the assertions whose number is even when counting from 0 or from 1."""
    if numbering not in NUMBERINGS:
        raise ValueError(f"numbering {numbering!r} is not one of {NUMBERINGS}")
    first = 0 if numbering == "zero_based" else 1
    return tuple(range(first, n_assertions, 2))


@dataclass(frozen=True)
class Visibility:
    """Which assertions of one test the model sees, and what else it would need to see for them to make sense."""

    numbering: Numbering
    n_assertions: int
    shown: tuple[int, ...]
    held_back: tuple[int, ...]
    changed: tuple[int, ...]
    changed_already_shown: Literal["all", "some", "none", "no change"]
    shown_needing_setup: tuple[int, ...]       # shown assertions that read variables/helpers from setup lines
    setup_statements_needed: tuple[int, ...]   # check-body statements those shown assertions depend on
    setup_lines_needed: tuple[int, ...]        # their first source lines
    needs_prelude: bool                        # a shown assertion uses a module-level helper or import


def visibility(test: ParsedTest, changed: Sequence[int], numbering: Numbering) -> Visibility:
    """Apply the rule to a parsed test whose changed assertions (0-based indices) are `changed`."""
    n_assertions = len(test.assertions)
    for index in changed:
        if not 0 <= index < n_assertions:
            raise ValueError(f"changed assertion index {index} is outside 0..{n_assertions - 1}")
    by_position = set(even_numbered_positions(n_assertions, numbering))
    shown = sorted(by_position | set(changed))
    held_back = [i for i in range(n_assertions) if i not in set(shown)]
    already = [i for i in changed if i in by_position]
    if not changed:
        changed_state: Literal["all", "some", "none", "no change"] = "no change"
    elif len(already) == len(changed):
        changed_state = "all"
    else:
        changed_state = "some" if already else "none"
    needing = [i for i in shown if test.assertions[i].setup_statements]
    statements = sorted({s for i in shown for s in test.assertions[i].setup_statements})
    return Visibility(
        numbering=numbering,
        n_assertions=n_assertions,
        shown=tuple(shown),
        held_back=tuple(held_back),
        changed=tuple(sorted(changed)),
        changed_already_shown=changed_state,
        shown_needing_setup=tuple(needing),
        setup_statements_needed=tuple(statements),
        setup_lines_needed=tuple(test.body_lines[s] for s in statements),
        needs_prelude=any(test.assertions[i].uses_prelude for i in shown),
    )
