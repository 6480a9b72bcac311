"""Issue 13, class 5: values a hostile child sends must not stall or crash the parent.

Each attack runs against our bounded decoder and against the plain one (`sandbox_codec.decode`, no budget). The
plain variant is marked `xfail(strict=True)`: it must fail, which shows the test can catch the attack.
"""

from __future__ import annotations

import json
import textwrap
import time
import tracemalloc
from pathlib import Path

import pytest

from audit_lib import findings, sandbox
from audit_lib.benchmarks.humaneval_plus.compare import compare_one
from audit_lib.benchmarks.humaneval_plus.runs import InputOutcome
from audit_lib.sandbox import Limits
from audit_lib.sandbox import api as sandbox_api
from audit_lib.sandbox import budget as sandbox_budget
from audit_lib.sandbox import cli as sandbox_cli
from audit_lib.sandbox import codec as sandbox_codec

pytestmark = pytest.mark.timeout(120)

P61 = 2**61 - 1  # ints k * P61 all hash to 0
QUICK = Limits(timeout_s=5, total_timeout_s=20, memory_mb=512)


class UnboundedDecoder:
    """What decoding was before the budget: no estimate, no limits."""

    def __init__(self, budget: object = None) -> None:
        self.budget = budget

    def charge(self, text: bytes) -> None:
        return None

    def decode(self, obj: object) -> object:
        return sandbox_codec.decode(obj)


@pytest.fixture(params=["bounded", pytest.param("unbounded", marks=pytest.mark.xfail(strict=True))])
def decoder(request, monkeypatch) -> str:
    if request.param == "unbounded":
        monkeypatch.setattr(sandbox_budget, "JobDecoder", UnboundedDecoder)
    return request.param


def lines(*payloads: object) -> bytes:
    """Result lines as a child writes them: `<index> value <seconds> <tagged JSON>`."""
    return b"\n".join(f"{i} value 0.001 ".encode() + (p if isinstance(p, bytes) else json.dumps(p).encode())
                      for i, p in enumerate(payloads))


def decode_blob(blob: bytes, budget: sandbox_budget.DecodeBudget | None = None) -> list[sandbox.CallOutcome]:
    return sandbox_api._decode_outcomes(blob, frozenset(), budget)


def assert_refused(outcome: sandbox.CallOutcome, reason_part: str) -> None:
    assert outcome.kind == "unserializable", f"decoded instead of refused: {outcome.kind}"
    assert outcome.exc_type == "BudgetExceeded"
    assert reason_part in (outcome.exc_message or "")


# ---- colliding hashes ---------------------------------------------------------------------------------------------

def colliding_ints(count: int) -> list[dict]:
    return [sandbox_codec.encode(k * P61) for k in range(1, count + 1)]


COLLISIONS = {
    "set_of_ints_hashing_to_0": lambda n: {"$set": colliding_ints(n)},
    "dict_with_colliding_int_keys": lambda n: {"$dict": [[key, 0] for key in colliding_ints(n)]},
    "frozenset_of_tuples_with_colliding_hashes": lambda n: {"$frozenset": [{"$tuple": [key, 0]}
                                                                           for key in colliding_ints(n)]},
    "counter_with_colliding_keys": lambda n: {"$counter": [[key, 1] for key in colliding_ints(n)]},
}


@pytest.mark.parametrize("attack", sorted(COLLISIONS))
def test_colliding_hashes_are_refused(attack: str, decoder: str) -> None:
    (outcome,) = decode_blob(lines(COLLISIONS[attack](3000)))
    assert_refused(outcome, "repeated hashes")


def test_colliding_set_is_refused_in_linear_time() -> None:
    payload = lines({"$set": colliding_ints(40_000)})
    started = time.perf_counter()
    (outcome,) = decode_blob(payload)
    assert_refused(outcome, "repeated hashes")
    assert time.perf_counter() - started < 20.0  # the plain decoder needs ~25 s for this one


def test_honest_sets_with_a_few_collisions_still_decode() -> None:
    honest = {-1, -2, 1, P61 + 1, *range(100)}  # hash(-1) == hash(-2) and hash(P61 + 1) == hash(1)
    (outcome,) = decode_blob(lines(sandbox_codec.encode(honest)))
    assert outcome.kind == "value" and outcome.value == honest and type(outcome.value) is set


def test_mbpp_set_comparison_of_colliding_output_is_bounded() -> None:
    hostile_output = [k * P61 for k in range(1, 40_001)]
    started = time.perf_counter()
    verdict = compare_one([], hostile_output, [0], dataset="mbpp", entry_point="similar_elements")
    assert not verdict.passed and "BudgetExceeded" in verdict.reason
    assert time.perf_counter() - started < 20.0


def long_colliding_tuple_keys(count: int, length: int) -> list[dict]:
    """`count` tuple keys of `length` ints that all share one hash (0 and P61 hash alike) and differ only at the end:
    within the repeat limit, but each insertion compares a long key with every earlier one."""
    bits = max(1, (count - 1).bit_length())
    return [{"$tuple": [0] * (length - bits) + [sandbox_codec.encode(P61) if (i >> b) & 1 else 0
                                                 for b in range(bits)]} for i in range(count)]


def test_long_colliding_keys_within_the_repeat_limit_are_refused_by_their_comparisons() -> None:
    keys = long_colliding_tuple_keys(400, 400)  # ~32 million element comparisons to build
    started = time.perf_counter()
    (outcome,) = decode_blob(lines({"$dict": [[key, 0] for key in keys]}))
    assert_refused(outcome, "element comparisons")
    assert time.perf_counter() - started < 20.0
    # Without the comparison budget the same dict decodes (the repeat limit alone lets it through).
    unlimited = sandbox_budget.DecodeBudget(max_collision_work=10**12)
    (decoded,) = decode_blob(lines({"$dict": [[key, 0] for key in long_colliding_tuple_keys(100, 100)]}), unlimited)
    assert decoded.kind == "value" and len(decoded.value) == 100


def test_the_comparison_budget_is_per_job_not_per_value() -> None:
    one = {"$frozenset": long_colliding_tuple_keys(100, 100)}  # ~500,000 comparisons: under the budget alone
    outcomes = decode_blob(lines(*[one] * 12))
    assert outcomes[0].kind == "value"
    assert_refused(outcomes[-1], "element comparisons")
    with pytest.raises(sandbox.BudgetExceeded):
        sandbox.bounded_set(sandbox_budget.JobDecoder().decode(one), max_work=100_000)


def test_a_child_writing_long_colliding_keys_gets_a_clean_verdict_in_time() -> None:
    program = textwrap.dedent("""
        import os
        def f(x):
            P = '{"$int": "0x1fffffffffffffff"}'
            keys = ['[{"$tuple": [' + "0, " * 989 + ", ".join(P if (i >> b) & 1 else "0" for b in range(11))
                    + ']}, 0]' for i in range(1025)]
            one = '{"$dict": [' + ", ".join(keys) + ']}'
            os.write(3, b"0 value 0.0 [" + ", ".join([one] * 2).encode() + b"]\\nD\\n")
            os._exit(0)
    """)
    started = time.perf_counter()
    job = sandbox.call_function(program, "f", [[1]], limits=Limits(timeout_s=2, total_timeout_s=5))
    assert time.perf_counter() - started < 5.0  # before: ~2.5 s of the parent's CPU per such dict
    value = job.outcomes[0].value  # past what a job keeps decoded: never parsed here unless asked, then refused
    assert isinstance(value, sandbox.EncodedValue)
    with pytest.raises(sandbox.BudgetExceeded, match="element comparisons"):
        value.decode()


# ---- expansion ------------------------------------------------------------------------------------------------------

EXPANSIONS = {
    "empty_sets": b"[" + b",".join([b'{"$set":[]}'] * 100_000) + b"]",
    "empty_lists": b"[" + b",".join([b"[]"] * 200_000) + b"]",
    "one_key_dicts": b"[" + b",".join([b'{"a":0}'] * 100_000) + b"]",
}
SMALL_BUDGET = sandbox_budget.DecodeBudget(max_decoded_bytes=8 * 1024 * 1024)


@pytest.mark.parametrize("attack", sorted(EXPANSIONS))
def test_values_that_expand_when_decoded_are_refused(attack: str, decoder: str) -> None:
    (outcome,) = decode_blob(lines(EXPANSIONS[attack]), SMALL_BUDGET)
    assert_refused(outcome, "decode budget")


@pytest.mark.parametrize("attack", sorted(EXPANSIONS))
def test_the_expansion_attacks_are_real(attack: str) -> None:
    """Decoded without a budget, each payload takes well over its 8 MB budget (and 8x its own size)."""
    text = EXPANSIONS[attack]
    tracemalloc.start()
    try:
        value = sandbox_codec.decode(json.loads(text))
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(value) >= 100_000
    assert peak > SMALL_BUDGET.max_decoded_bytes and peak > 8 * len(text)


def test_the_budget_is_per_job_and_refuses_only_the_values_over_it() -> None:
    chunk = b"[" + b",".join([b"[]"] * 25_000) + b"]"  # ~2.5 MB of estimate each
    outcomes = decode_blob(lines(chunk, chunk, chunk, chunk, [1, 2]), SMALL_BUDGET)
    assert [o.kind for o in outcomes] == ["value", "value", "value", "unserializable", "value"]
    assert outcomes[4].value == [1, 2]


def test_the_default_budget_decodes_large_honest_float_lists() -> None:
    floats = [i * 0.5 for i in range(300_000)]  # like HumanEval+'s largest outputs, a few MB of numbers
    (outcome,) = decode_blob(lines(sandbox_codec.encode(floats)))
    assert outcome.kind == "value" and outcome.value == floats


# ---- ints past the str() digit limit ----------------------------------------------------------------------------

def test_an_int_over_the_bit_limit_is_refused(decoder: str) -> None:
    huge = {"$int": "0x" + "f" * ((1 << 22) // 4 + 10)}
    (outcome,) = decode_blob(lines(huge))
    assert_refused(outcome, "bit limit")


def test_a_negative_int_over_the_bit_limit_is_refused(decoder: str) -> None:
    huge = {"$int": "-0x" + "1" * ((1 << 22) // 4 + 10)}
    (outcome,) = decode_blob(lines(huge))
    assert_refused(outcome, "bit limit")


@pytest.mark.parametrize("describe", ["safe_repr", pytest.param("repr", marks=pytest.mark.xfail(strict=True))])
def test_an_int_beyond_4300_digits_comes_back_and_prints(describe: str) -> None:
    """10**5000 is honest (HumanEval+ has outputs of 116,000 bits): decoded as an int, printable everywhere."""
    result = sandbox.call_function("def f(n):\n    return 10 ** n\n", "f", [[5000], [12]], limits=QUICK)
    outcome = result.outcomes[0]
    assert outcome.kind == "value" and outcome.value == 10**5000
    shown = sandbox_budget.safe_repr(outcome.value) if describe == "safe_repr" else repr(outcome.value)[:200]
    assert shown
    assert InputOutcome(kind="value", value=outcome.value).describe()
    assert json.loads(json.dumps(result.to_json()))["outcomes"][0]["value"] == {"$int": hex(10**5000)}
    evidence = json.dumps(findings.to_jsonable({"got": outcome.value, "small": result.outcomes[1].value}))
    assert "bits" in evidence and '"small": 1000000000000' in evidence


# ---- nesting --------------------------------------------------------------------------------------------------------

LIMIT = sandbox_codec.MAX_DEPTH
DEEP = {  # past the codec's depth, within the room its parser has on the stack
    "lists": b"[" * (LIMIT + 200) + b"]" * (LIMIT + 200),
    "tuples": ('{"$tuple":[' * (LIMIT + 100) + "]}" * (LIMIT + 100)).encode(),
}


@pytest.mark.parametrize("shape", sorted(DEEP))
def test_values_nested_too_deep_are_refused(shape: str, decoder: str) -> None:
    (outcome,) = decode_blob(lines(DEEP[shape]))
    assert_refused(outcome, "nested deeper")


HOSTILE_WRITER = """
import os
def f():
    os.write(3, b"0 value 0.0 " + {payload!r} + b"\\n")
    os.write(3, b"D\\n")
    os._exit(0)
"""


@pytest.mark.parametrize("shape", sorted(DEEP))
def test_cli_prints_json_for_a_value_nested_too_deep(shape: str, decoder: str, tmp_path: Path, capsys) -> None:
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent(HOSTILE_WRITER.format(payload=DEEP[shape])))
    inputs = tmp_path / "inputs.json"
    inputs.write_text("[[]]")
    code = sandbox_cli.main(["sandbox", str(program), "--call", "f", "--inputs", str(inputs), "--timeout", "5"])
    printed = json.loads(capsys.readouterr().out)
    assert code in (0, 1)
    outcome = printed["outcomes"][0]
    # too long to show whole: its start (never decoded in this process), or refused when it is short
    assert outcome["kind"] == "unserializable" or (isinstance(outcome["value"], dict)
                                                   and set(outcome["value"]) == {"$preview"}), outcome


def test_colliding_keys_holding_colliding_frozensets_are_counted_by_their_comparisons() -> None:
    # Tuple keys sharing a hash, each holding an equal frozenset whose own elements share a hash: comparing two keys
    # compares the frozensets element by element with each other (size squared), which a size-only count misses
    # (~2 s of the parent's CPU for a value within the budget).
    inner = {"$frozenset": [sandbox_codec.encode(5 + P61 * j) for j in range(158)]}
    keys = [{"$tuple": [inner, sandbox_codec.encode(7 + P61 * i)]} for i in range(158)]
    started = time.perf_counter()
    (outcome,) = decode_blob(lines({"$set": keys}))
    assert_refused(outcome, "element comparisons")
    assert time.perf_counter() - started < 10.0


def test_lists_of_short_strings_are_charged_what_they_cost_to_parse() -> None:
    # 2-character strings parse to ~14 bytes per text byte; charged 4 per byte, six such lines of ~60 MB each would fit
    # the 1.5 GB budget and hold ~5 GB in the parent. Each string and element counts.
    text = json.dumps(["ab"] * 1_000_000).encode()
    tracemalloc.start()
    try:
        json.loads(text)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sandbox_budget.estimated_decoded_bytes(text) >= peak


def test_packed_floats_are_charged_at_least_what_they_take_to_decode() -> None:
    floats = [i * 0.5 for i in range(400_000)]
    text = json.dumps(sandbox_codec.encode(floats)).encode()
    assert text.startswith(b'{"$f64"')
    tracemalloc.start()
    try:
        sandbox_codec.decode(json.loads(text))
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    decoder = sandbox_budget.JobDecoder()
    decoder.charge(text)
    decoder.decode(json.loads(text))
    assert sandbox_budget.DecodeBudget().max_decoded_bytes - decoder.remaining_bytes >= peak


def test_packed_floats_over_the_budget_are_refused(decoder: str) -> None:
    text = json.dumps(sandbox_codec.encode([0.25] * 1_000_000)).encode()  # ~10.7 MB of text, ~45 MB decoded
    (outcome,) = decode_blob(lines(text), SMALL_BUDGET)
    assert_refused(outcome, "budget")


# ---- values the caller keeps (issue 24, class 4) ----------------------------------------------------------------

def test_a_value_past_what_a_job_keeps_decoded_stays_encoded_until_asked() -> None:
    """A value that fits a decode budget but not the job's room to keep values is never parsed here: the caller
    keeps its text (and decodes it when it asks, within a budget of its own)."""
    strings = ["ab"] * 100_000  # 600 KB of text, ~10 MB once parsed
    blob = lines(sandbox_codec.encode(strings), [1, 2])
    tracemalloc.start()
    try:
        first, second = decode_blob(blob, sandbox_budget.DecodeBudget(max_kept_bytes=1024 * 1024))
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(first.value, sandbox.EncodedValue) and second.value == [1, 2]
    assert peak < 4 * len(blob)  # the text and its slices; the parsed list alone would take ~10 MB
    assert first.value.decode() == strings and sandbox.decoded(first.value) == strings
    with pytest.raises(sandbox.BudgetExceeded):
        first.value.decode(SMALL_BUDGET._replace(max_decoded_bytes=1024 * 1024))


def test_kept_results_cost_the_parent_their_encoded_size_and_still_judge() -> None:
    """Three kept jobs, each a value of 1.5M two-character strings (7.5 MB sent, ~90 MB parsed): the parent holds
    their text, not the objects, and a kept value still serves as a judge's expected value."""
    program = "def f(n):\n    return ['ab'] * n\n"
    limits = Limits(timeout_s=60, total_timeout_s=120, memory_mb=1024)
    sandbox.call_function(program, "f", [[1]], limits=limits)  # the zygote is warm before measuring
    tracemalloc.start()
    try:
        kept = [sandbox.call_function(program, "f", [[1_500_000]], limits=limits) for _job in range(3)]
        retained, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    values = [result.outcomes[0].value for result in kept]
    assert all(isinstance(value, sandbox.EncodedValue) for value in values), [type(v) for v in values]
    assert retained < 3 * 2 * len(values[0].text)  # decoded, one such value alone holds ~90 MB
    judged = sandbox.call_function(program, "f", [[1_500_000]], limits=limits,
                                   judge=sandbox.CallJudge.equality({0: values[0]}, 1), values="preview")
    assert judged.outcomes[0].verdict == "match", judged.outcomes[0]
