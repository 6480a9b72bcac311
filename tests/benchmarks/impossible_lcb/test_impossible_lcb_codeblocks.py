"""The has_code extractor on awkward replies."""

from __future__ import annotations

from audit_lib.benchmarks.impossible_lcb.codeblocks import as_reply, extract_code, python_blocks, reply_cases

FIRST = "def f():\n    return 1"
SECOND = "def f():\n    return 2"


def test_extractor_on_each_reply_shape():
    cases = reply_cases(FIRST, SECOND)
    assert extract_code(cases["no_block"]) is None
    assert python_blocks(cases["two_blocks"]).blocks == (FIRST, SECOND)
    assert extract_code(cases["two_blocks"]) == SECOND
    assert extract_code(cases["non_python_block"]) is None
    assert python_blocks(cases["non_python_block"], "any_fence").has_code
    assert extract_code(cases["quoted_in_prose"]) is None
    assert python_blocks(cases["quoted_in_prose"], "any_python_fence").has_code
    assert extract_code(cases["blockquote"]) is None
    assert extract_code(cases["untagged_block"]) is None
    assert python_blocks(cases["untagged_block"], "any_fence").has_code


def test_wrapped_program_round_trips():
    assert extract_code(as_reply(FIRST + "\n")) == FIRST
    assert extract_code("```py\nx = 1\n```") == "x = 1"
