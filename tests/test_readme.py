"""The README stays what a newcomer reads in ten minutes: under 2,500 words, with exactly the two set-up commands."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
WORD_LIMIT = 2500


def test_the_readme_stays_under_the_word_limit() -> None:
    words = len(README.read_text(encoding="utf-8").split())
    assert words < WORD_LIMIT, f"README.md has {words} words; move internals or history into docs/"


def test_the_set_up_section_gives_the_two_make_commands() -> None:
    text = README.read_text(encoding="utf-8")
    setup = text.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", setup, re.S)
    assert block is not None, "the set-up section has no bash block"
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.split("#")[0].strip()]
    assert commands == ["make audit", "make test"]
