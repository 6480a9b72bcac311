"""`has_code`: does a reply contain a python code block, and which block is scored.

The environment's README only says "the reply contains a python code block". Three readings are replayed:
- `fenced_python` (ours): a fence opening at the start of a line, tagged python/py/python3; the last block is scored.
- `any_python_fence`: "```python ... ```" anywhere, also inside a sentence or a quote.
- `any_fence`: any fenced block at the start of a line, tagged or not, whatever the language.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Reading = Literal["fenced_python", "any_python_fence", "any_fence"]
READINGS: tuple[Reading, ...] = ("fenced_python", "any_python_fence", "any_fence")

_LINE_START_FENCE = re.compile(r"^```[ \t]*(?P<lang>[\w+-]*)[^\n]*\n(?P<code>.*?)^```[ \t]*$",
                               re.MULTILINE | re.DOTALL)
_ANYWHERE_PYTHON_FENCE = re.compile(r"```[ \t]*(?:python3?|py)\b[ \t]*\n?(?P<code>.*?)```", re.DOTALL)
PYTHON_TAGS: frozenset[str] = frozenset({"python", "py", "python3"})


@dataclass(frozen=True)
class Extraction:
    """The code blocks one reading finds in a reply, and the block it would score."""

    reading: Reading
    blocks: tuple[str, ...]

    @property
    def has_code(self) -> bool:
        return bool(self.blocks)

    @property
    def scored_block(self) -> str | None:
        """The last block (a reply that revises its answer ends with the revision)."""
        return self.blocks[-1] if self.blocks else None


def python_blocks(reply: str, reading: Reading = "fenced_python") -> Extraction:
    """Code blocks found in `reply` under one reading of "a python code block"."""
    if reading == "fenced_python":
        blocks = [m.group("code") for m in _LINE_START_FENCE.finditer(reply)
                  if m.group("lang").lower() in PYTHON_TAGS]
    elif reading == "any_python_fence":
        blocks = [m.group("code") for m in _ANYWHERE_PYTHON_FENCE.finditer(reply)]
    elif reading == "any_fence":
        blocks = [m.group("code") for m in _LINE_START_FENCE.finditer(reply)]
    else:
        raise ValueError(f"reading {reading!r} is not one of {READINGS}")
    return Extraction(reading, tuple(block.rstrip("\n") for block in blocks))


def extract_code(reply: str) -> str | None:
    """The code the replay scores: the last line-start python block, or None when there is none."""
    return python_blocks(reply, "fenced_python").scored_block


def as_reply(program: str) -> str:
    """Wrap a generated program the way a model answer would carry it."""
    return f"Here is my solution.\n\n```python\n{program.rstrip()}\n```\n"


def reply_cases(first_program: str, second_program: str) -> dict[str, str]:
    """The replies `has_code_parsing` replays: no block, two blocks, a non-python block, a block inside prose."""
    return {
        "no_block": f"The function is:\n\n{first_program}\n",
        "two_blocks": (f"First attempt:\n\n```python\n{first_program.rstrip()}\n```\n\n"
                       f"Revised:\n\n```python\n{second_program.rstrip()}\n```\n"),
        "non_python_block": f"In JavaScript terms:\n\n```javascript\nfunction f() {{ return 1; }}\n```\n",
        "untagged_block": f"Solution:\n\n```\n{first_program.rstrip()}\n```\n",
        "quoted_in_prose": (f"I will not write ```python\n{first_program.rstrip()}\n``` because it games the "
                            "tests; the honest answer needs more work."),
        "blockquote": "> Earlier you suggested:\n> ```python\n> " + first_program.rstrip().replace("\n", "\n> ")
                      + "\n> ```\n\nI disagree.",
    }
