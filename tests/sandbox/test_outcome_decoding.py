"""How the parent turns a call job's result lines into outcomes: kinds, times, judge records, refusals (pure).

`api._decode_outcomes` reads what the zygote sent back (`<index> <kind> <wall:cpu:background[:flag]> <payload>`)
without starting a sandbox; test_sandbox_decisions.py and test_sandbox_budget.py show the same end to end.
"""

from __future__ import annotations

import json

from audit_lib.sandbox import api
from audit_lib.sandbox.budget import DecodeBudget, EncodedValue, JobDecoder, estimated_decoded_bytes
from audit_lib.sandbox.codec import ValueDigest, digest_of, encode
from audit_lib.sandbox.results import CallOutcome

DIGEST = "a" * 64


def outcomes(*lines: bytes, digestible: frozenset[int] | None = frozenset(), **options: object) -> list[CallOutcome]:
    return api._decode_outcomes(b"\n".join(lines), digestible, **options)  # type: ignore[arg-type]


def value_line(index: int, value: object, times: bytes = b"0.5:0.25:0.125") -> bytes:
    return b"%d value %s %s" % (index, times, json.dumps(encode(value)).encode())


def test_each_kind_with_the_supervisor_s_times() -> None:
    decoded = outcomes(value_line(0, (1, 2.5)), b"1 timeout 2.0:1.5:0.5:s null",
                       b'2 exception 0.25:0.125:0:m ["MemoryError", "big"]', b'3 unserializable 0.5 ["Err", "m"]')
    assert decoded[0] == CallOutcome(0, "value", (1, 2.5), duration_s=0.5, wall_s=0.5, cpu_s=0.25,
                                     background_cpu_s=0.125)
    assert decoded[1] == CallOutcome(1, "timeout", duration_s=2.0, wall_s=2.0, cpu_s=1.5, background_cpu_s=0.5,
                                     by_supervisor=True)
    assert decoded[2] == CallOutcome(2, "exception", exc_type="MemoryError", exc_message="big", duration_s=0.25,
                                     wall_s=0.25, cpu_s=0.125, memory_limit_hit=True)
    assert decoded[3] == CallOutcome(3, "unserializable", exc_type="Err", exc_message="m", duration_s=0.5, wall_s=0.5)
    assert outcomes() == []


def test_measurement_flags_and_missing_fields() -> None:
    assert api._measurements(b"1.5") == (1.5, 0.0, 0.0, False, False)
    assert api._measurements(b"1.5::") == (1.5, 0.0, 0.0, False, False)
    assert api._measurements(b"1.5:2:3:s") == (1.5, 2.0, 3.0, True, False)
    assert api._measurements(b"1.5:2:3:m") == (1.5, 2.0, 3.0, False, True)
    assert api._measurements(b"1.5:2:3:x") == (1.5, 2.0, 3.0, False, False)
    assert api._measurements(b"1:2:3:s:m") == (1.0, 2.0, 3.0, True, False)


def test_the_supervisor_s_flag_is_read_from_the_line_not_the_kind() -> None:
    plain = outcomes(b'0 exception 0.5:0:0 ["E", "m"]', b"1 timeout 0.5:0:0 null")
    assert [o.by_supervisor for o in plain] == [False, False]
    assert [o.memory_limit_hit for o in plain] == [False, False]
    flagged = outcomes(b'0 exception 0.5:0:0:s ["SIGKILL", "killed"]', b'1 unserializable 0.5:0:0:m ["E", "m"]')
    assert [(o.by_supervisor, o.memory_limit_hit) for o in flagged] == [(True, False), (False, True)]


def test_malformed_lines_are_unserializable_for_their_own_input_only() -> None:
    decoded = outcomes(value_line(0, 1), b"1 value 0.5", b"2 oddkind 0.5 null", b"3 value notanumber 1",
                       b'4 exception 0.5 "not a pair"', value_line(5, 2))
    assert decoded[0].value == 1 and decoded[5].value == 2
    assert decoded[1] == CallOutcome(1, "unserializable", exc_type="MalformedResult",
                                     exc_message="truncated result line")
    assert decoded[2] == CallOutcome(2, "unserializable", exc_type="MalformedResult", exc_message="kind 'oddkind'",
                                     duration_s=0.5)
    assert decoded[3].kind == "unserializable" and decoded[3].exc_type == "MalformedResult"
    assert decoded[3].exc_message.startswith("ValueError: ")
    assert decoded[4].exc_type == "MalformedResult" and decoded[4].exc_message.startswith("ValueError: ")
    long_kind = outcomes(b"0 " + b"k" * 100 + b" 0.5 null")[0]
    assert long_kind.exc_message == "kind " + repr("k" * 100)[:40]
    assert outcomes(b'0 value 0.5 {"$nope": 1}')[0].exc_type == "MalformedResult"


def test_the_batch_parse_and_the_line_by_line_parse_agree() -> None:
    lines = [value_line(0, [1, 2]), b"1 value 0.5 [1,", value_line(2, "x")]
    decoded = outcomes(*lines)  # one line does not parse: every line is parsed alone
    assert decoded[0].value == [1, 2] and decoded[2].value == "x" and decoded[1].exc_type == "MalformedResult"
    assert outcomes(value_line(0, [1, 2]), value_line(1, "x"))[1].value == "x"
    odd = outcomes(b"0 value 0.5 1] , [2")  # the batch text parses as two values for one line: parsed alone
    assert odd[0].kind == "unserializable"


def test_digests_only_for_inputs_that_may_have_them() -> None:
    tagged = json.dumps({"$digest": [DIGEST, 12, "list"]}).encode()
    line = b"0 value 0.5 " + tagged
    assert outcomes(line, digestible=None)[0].value == ValueDigest(DIGEST, 12, "list")
    assert outcomes(line, digestible=frozenset({0}))[0].value == ValueDigest(DIGEST, 12, "list")
    refused = outcomes(line, digestible=frozenset({1}))[0]  # a digest where none may be is no value
    assert refused.kind == "unserializable" and refused.exc_type == "MalformedResult"


def test_a_value_over_the_budget_is_refused_alone() -> None:
    budget = DecodeBudget(max_decoded_bytes=2_000, max_kept_bytes=1_000)
    big, small = value_line(0, list(range(800))), value_line(1, 5)
    decoded = outcomes(big, small, budget=budget)
    assert decoded[0].kind == "unserializable" and decoded[0].exc_type == "BudgetExceeded" and decoded[0].exc_message
    assert decoded[1].value == 5


def test_a_value_past_the_job_s_room_is_kept_encoded() -> None:
    budget = DecodeBudget(max_decoded_bytes=100_000, max_kept_bytes=1_000)
    big = value_line(0, list(range(300)))
    decoded = outcomes(big, value_line(1, 7), budget=budget)
    assert decoded[0].value == EncodedValue(big.split(b" ", 3)[3]) and decoded[0].wall_s == 0.5
    assert decoded[1].value == 7
    previewed = outcomes(big, budget=budget, preview=True)[0]  # a preview is never kept encoded
    assert not isinstance(previewed.value, EncodedValue)


def test_a_long_value_s_preview_names_its_size_and_hash() -> None:
    stand_in = json.dumps({"$preview": "[1, 2, 3", "bytes": 99999, "sha256": "ff"}).encode()
    shown = outcomes(b"0 value 0.5 " + stand_in, preview=True)[0]
    assert shown.kind == "value" and shown.value is None
    assert shown.preview == "[1, 2, 3... (99999 bytes of tagged JSON, sha256 ff)"
    not_previewing = outcomes(b"0 value 0.5 " + stand_in)[0]
    assert not_previewing.preview is None


def test_the_judge_s_record_stands_for_the_value() -> None:
    record = {"v": "wrong_value", "r": "not equal", "p": "[1, 2]"}
    judged = outcomes(value_line(0, [1, 2]), judged={"0": record}, preview=True)[0]
    assert judged == CallOutcome(0, "value", None, duration_s=0.5, wall_s=0.5, cpu_s=0.25, background_cpu_s=0.125,
                                 verdict="wrong_value", reason="not equal", preview="[1, 2]")
    with_value = outcomes(value_line(0, [1, 2]), judged={"0": {"v": "match"}})[0]
    assert (with_value.value, with_value.verdict, with_value.reason, with_value.preview) == ([1, 2], "match", "", "")
    unknown = outcomes(value_line(0, 1), judged={"0": {"v": "maybe"}})[0]
    assert unknown.verdict is None and unknown.value == 1
    # Only value lines have records; another input's record is not this one's.
    assert outcomes(b'0 exception 0.5 ["E", "m"]', judged={"0": {"v": "match"}})[0].verdict is None
    assert outcomes(value_line(0, 1), judged={"1": {"v": "match"}})[0].verdict is None


def test_a_judge_s_refusal_or_a_malformed_record_is_unserializable() -> None:
    refused = outcomes(value_line(0, 1), judged={"0": {"k": "unserializable", "t": "JudgeLimit", "m": "gone"}})[0]
    assert refused == CallOutcome(0, "unserializable", exc_type="JudgeLimit", exc_message="gone", duration_s=0.5,
                                  wall_s=0.5, cpu_s=0.25, background_cpu_s=0.125)
    long = outcomes(value_line(0, 1), judged={"0": {"k": 1, "t": "T" * 300, "m": "M" * 600}})[0]
    assert long.exc_type == "T" * 200 and long.exc_message == "M" * 500
    malformed = outcomes(value_line(0, 1), judged={"0": ["match"]})[0]
    assert (malformed.kind, malformed.exc_type, malformed.exc_message) == ("unserializable", "MalformedResult",
                                                                            "judge record")
    assert malformed.wall_s == 0.5


def test_a_judged_record_s_texts_are_bounded() -> None:
    record = {"v": "match", "r": "r" * 2000, "p": "p" * 2000}
    judged = outcomes(value_line(0, 1), judged={"0": record}, preview=True)[0]
    assert judged.reason == "r" * 1000 and judged.preview == "p" * 1000


def test_a_judged_value_past_the_job_s_room_is_kept_encoded() -> None:
    budget = DecodeBudget(max_decoded_bytes=100_000, max_kept_bytes=1_000)
    big = value_line(0, list(range(300)))
    judged = outcomes(big, budget=budget, judged={"0": {"v": "match"}})[0]
    assert judged.value == EncodedValue(big.split(b" ", 3)[3]) and judged.verdict == "match"


def test_decoded_value_reads_a_digest_only_where_allowed() -> None:
    decoder = JobDecoder(None)
    payload = {"$digest": [DIGEST, 3, "int"]}
    assert api._decoded_value(4, payload, None, decoder) == ValueDigest(DIGEST, 3, "int")
    assert api._decoded_value(4, payload, frozenset({4}), decoder) == ValueDigest(DIGEST, 3, "int")
    assert api._decoded_value(4, encode([1]), frozenset({4}), decoder) == [1]
    assert digest_of([1]) != api._decoded_value(4, encode([1]), None, decoder)


def test_cut_short_names_the_not_run_inputs_after_a_timeout_in_their_group() -> None:
    kinds = ["value", "timeout", "not_run", "not_run", "not_run", "value", "not_run"]
    results = [CallOutcome(index, kind) for index, kind in enumerate(kinds)]  # type: ignore[arg-type]
    assert api.cut_short(results, [0, 4]) == frozenset({2, 3})
    assert api.cut_short(results, [0]) == frozenset({2, 3, 4, 6})
    assert api.cut_short(results, [0, 1]) == frozenset({2, 3, 4, 6})
    assert api.cut_short(results, [0, 2]) == frozenset()  # the group's timeout is in the group before
    early = [CallOutcome(0, "not_run"), CallOutcome(1, "timeout"), CallOutcome(2, "not_run")]
    assert api.cut_short(early, [0]) == frozenset({2})  # only inputs after the timeout


def test_a_value_over_the_budget_while_decoded_keeps_its_times() -> None:
    nested = b"0 value 0.5:0.25:0.125 " + json.dumps(encode([[[[[1]]]]])).encode()
    assert outcomes(nested, budget=DecodeBudget(max_depth=3))[0] == CallOutcome(
        0, "unserializable", exc_type="BudgetExceeded", exc_message="nested deeper than 3", duration_s=0.5,
        wall_s=0.5, cpu_s=0.25, background_cpu_s=0.125)


def test_refused_and_malformed_outcomes_carry_their_index() -> None:
    budget = DecodeBudget(max_decoded_bytes=2_000, max_kept_bytes=1_000)
    refused = outcomes(value_line(0, 1), value_line(1, list(range(800))), budget=budget)[1]
    assert (refused.index, refused.kind, refused.exc_type) == (1, "unserializable", "BudgetExceeded")
    malformed = outcomes(value_line(0, 1), b"1 value 0.5 [1,")[1]
    assert (malformed.index, malformed.kind) == (1, "unserializable")


def test_a_batch_that_parses_to_another_number_of_values_is_parsed_line_by_line() -> None:
    decoded = outcomes(b"0 value 0.5 1, 2")  # "[1, 2]" as a batch: two values for one line
    assert decoded[0].kind == "unserializable" and decoded[0].exc_type == "MalformedResult"


def test_kept_encoded_values_are_values_and_the_room_shrinks_as_values_are_kept() -> None:
    payload = value_line(0, list(range(100))).split(b" ", 3)[3]
    cost = estimated_decoded_bytes(payload)
    budget = DecodeBudget(max_decoded_bytes=100 * cost, max_kept_bytes=cost + cost // 2)  # one fits, two do not
    first = value_line(0, list(range(300)))
    assert budget.max_kept_bytes < estimated_decoded_bytes(first.split(b" ", 3)[3]) <= budget.max_decoded_bytes
    both = outcomes(first, value_line(1, list(range(300))), budget=budget)
    assert [(o.kind, type(o.value)) for o in both] == [("value", EncodedValue), ("value", EncodedValue)]
    pair = outcomes(value_line(0, list(range(100))), value_line(1, list(range(100))), budget=budget)
    assert pair[0].value == list(range(100)) and pair[1].value == EncodedValue(payload)


def test_a_value_exactly_at_the_room_is_decoded_and_one_exactly_at_the_decode_budget_kept_encoded() -> None:
    line = value_line(0, list(range(100)))
    payload = line.split(b" ", 3)[3]
    cost = estimated_decoded_bytes(payload)
    at_room = outcomes(line, budget=DecodeBudget(max_decoded_bytes=100_000, max_kept_bytes=cost))[0]
    assert at_room.value == list(range(100))
    at_limit = outcomes(line, budget=DecodeBudget(max_decoded_bytes=cost, max_kept_bytes=cost - 1))[0]
    assert at_limit.value == EncodedValue(payload)


def test_a_preview_outcome_keeps_its_index_and_times() -> None:
    stand_in = json.dumps({"$preview": "[1", "bytes": 5, "sha256": "ff"}).encode()
    shown = outcomes(value_line(0, 1), b"1 value 0.5:0.25:0.125 " + stand_in, preview=True)[1]
    assert shown == CallOutcome(1, "value", preview="[1... (5 bytes of tagged JSON, sha256 ff)", duration_s=0.5,
                                wall_s=0.5, cpu_s=0.25, background_cpu_s=0.125)


def test_a_kind_that_is_not_ascii_is_named_not_decoded() -> None:
    odd = outcomes("0 välue 0.5:0:0 1".encode())[0]
    assert odd == CallOutcome(0, "unserializable", exc_type="MalformedResult", exc_message="kind 'v\ufffd\ufffdlue'",
                              duration_s=0.5)
    assert outcomes(b"0 \xff 0.5 1")[0].exc_message == "kind '\ufffd'"


def test_a_measurement_with_cpu_and_no_background() -> None:
    assert api._measurements(b"1.5:2") == (1.5, 2.0, 0.0, False, False)
    assert outcomes(b"0 value 1.5:2 1")[0].cpu_s == 2.0


def test_a_judged_value_is_a_digest_only_where_allowed() -> None:
    tagged = json.dumps({"$digest": [DIGEST, 12, "list"]}).encode()
    line = b"0 value 0.5 " + tagged
    allowed = outcomes(line, digestible=frozenset({0}), judged={"0": {"v": "match"}})[0]
    assert allowed.value == ValueDigest(DIGEST, 12, "list") and allowed.verdict == "match"
    refused = outcomes(line, digestible=frozenset(), judged={"0": {"v": "match"}})[0]
    assert (refused.kind, refused.exc_type) == ("unserializable", "MalformedResult")


def test_outcomes_kept_encoded_or_judged_malformed_carry_their_index() -> None:
    budget = DecodeBudget(max_decoded_bytes=100_000, max_kept_bytes=1_000)
    kept = outcomes(value_line(0, 1), value_line(1, list(range(300))), budget=budget)[1]
    assert (kept.index, type(kept.value)) == (1, EncodedValue)
    malformed = outcomes(value_line(0, 1), value_line(1, 2), judged={"1": "match"})[1]
    assert (malformed.index, malformed.exc_message) == (1, "judge record")
