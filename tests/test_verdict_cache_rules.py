"""The verdict cache's rules without the sandbox: what is looked up and served, its folder, and what reports say."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
from pathlib import Path

import pytest

from audit_lib.sandbox import AssertJob, AssertJobResult, CallJob, CallJobResult, CallJudge, CallOutcome, Limits, \
    SnippetResult, TestsJob
from audit_lib.sandbox.call_options import NO_EXPECTED
from audit_lib.sandbox.codec import digest_of
from audit_lib.sandbox.testrun import TestsResult
from audit_lib.verdict_cache import (CACHE_SWITCH_ENV, CAP_ENV, NO_CACHE_ENV, RUN_ID_ENV, VerdictCache, active_cache,
                                     cache_folder, caching_enabled, counts_now, entries, fresh_runs, keys, run_stamp)
from audit_lib.verdict_cache import store as store_module
from audit_lib.verdict_cache.store import VerdictStore
from audit_lib.verdict_cache.tally import CACHE_META_KEY, CacheCounts, CacheSpans, cache_lines, note_computed, \
    note_served

LIMITS = Limits(timeout_s=5.0)


def call_job(**changes: object) -> CallJob:
    base = CallJob(key="k", program="def f(x):\n    return x\n", entry_point="f", inputs=((1,), (2,)), limits=LIMITS)
    return dataclasses.replace(base, **changes)


def outcome(index: int, kind: str = "value", wall: float = 0.01, **fields: object) -> CallOutcome:
    return CallOutcome(index, kind, fields.pop("value", index), duration_s=wall, wall_s=wall, **fields)


def call_result(*outcomes: CallOutcome, status: str = "pass", duration: float = 0.1) -> CallJobResult:
    return CallJobResult(status, outcomes, None, LIMITS, duration)


def snippet(index: int, status: str = "pass", wall: float = 0.01, **fields: object) -> SnippetResult:
    return SnippetResult(index, status, duration_s=wall, wall_s=wall, **fields)


def snippets_result(*snippets: SnippetResult) -> TestsResult:
    return TestsResult("pass", snippets, LIMITS, 0.1, True)


# ------------------------------------------------------------------------------------------------ tally


def test_counts_text_names_the_served_share_and_each_source_run_sorted() -> None:
    counts = CacheCounts({"run-b": 1200, "run-a": 3}, computed=40, stored=5)
    assert counts.served == 1203 and counts.looked_up == 1243
    assert counts.text() == "1,203 of 1,243 sandbox verdicts from the cache (computed by run run-a: 3, run-b: 1,200)"
    assert CacheCounts({}, computed=1500).text() == "0 of 1,500 sandbox verdicts from the cache"
    assert CacheCounts({"r": 0}, computed=2).text() == "0 of 2 sandbox verdicts from the cache"


def test_counts_go_to_meta_and_back_and_bad_meta_is_none() -> None:
    counts = CacheCounts({"z": 2, "a": 1}, computed=3, stored=2)
    meta = counts.to_meta()
    assert meta == {"served": 3, "computed": 3, "stored": 2, "served_by_run": {"a": 1, "z": 2}}
    assert list(meta["served_by_run"]) == ["a", "z"]
    assert CacheCounts.from_meta({CACHE_META_KEY: meta}) == counts
    assert CacheCounts.from_meta({CACHE_META_KEY: {"served_by_run": {"r": "4"}}}) == CacheCounts({"r": 4}, 0, 0)
    assert CacheCounts.from_meta({CACHE_META_KEY: {"served_by_run": None, "computed": 2}}) == CacheCounts({}, 2, 0)
    for bad in (None, [], {}, {CACHE_META_KEY: 3}, {CACHE_META_KEY: {"computed": "many"}},
                {CACHE_META_KEY: {"served_by_run": {"r": None}}}, {CACHE_META_KEY: {"served_by_run": 5}}):
        assert CacheCounts.from_meta(bad) is None, bad


def test_counts_add_and_subtract_per_run_dropping_runs_with_nothing_left() -> None:
    later = CacheCounts({"a": 5, "b": 2}, computed=7, stored=3)
    earlier = CacheCounts({"a": 2, "b": 2}, computed=4, stored=1)
    assert later - earlier == CacheCounts({"a": 3}, 3, 2)
    assert earlier + CacheCounts({"a": 1, "c": 4}, 1, 1) == CacheCounts({"a": 3, "b": 2, "c": 4}, 5, 2)


def test_notes_count_served_by_run_computed_and_stored() -> None:
    before = counts_now()
    note_served("run-x")
    note_served("run-x")
    note_computed(True)
    note_computed(False)
    spent = counts_now() - before
    assert spent == CacheCounts({"run-x": 2}, computed=2, stored=1)


def test_nested_spans_each_count_only_their_own_verdicts() -> None:
    spans = CacheSpans()
    spans.start()
    note_served("outer")
    spans.start()
    note_served("inner")
    note_computed(True)
    inner = spans.stop()
    note_computed(False)
    outer = spans.stop()
    assert inner == CacheCounts({"inner": 1}, 1, 1)
    assert outer == CacheCounts({"outer": 1}, 1, 0)


def test_cache_lines_total_each_audit_and_leave_out_audits_with_no_cacheable_job() -> None:
    checks = {
        "humaneval_plus": [{"meta": {CACHE_META_KEY: {"served_by_run": {"r1": 2}, "computed": 1}}},
                           {CACHE_META_KEY: {"served_by_run": {"r1": 1, "r0": 1}, "computed": 0}},
                           {"meta": {}}, {"meta": None}],
        "phi1": [{"meta": {"cost": {}}}],
        "mbpp_plus": [{"meta": {CACHE_META_KEY: {"computed": 3}}}],
    }
    assert cache_lines(checks) == [
        "verdict cache: humaneval_plus: 4 of 5 sandbox verdicts from the cache (computed by run r0: 1, r1: 3)",
        "verdict cache: mbpp_plus: 0 of 3 sandbox verdicts from the cache"]


# ------------------------------------------------------------------------------------------------ store


def test_an_entry_is_stored_under_its_key_and_read_back(tmp_path: Path) -> None:
    store = VerdictStore(tmp_path / "v", 1 << 20)
    key = "ab" + "0" * 62
    size = store.write(key, "engine", {"run": "r"}, {"x": [1, "é"]})
    path = tmp_path / "v" / "ab" / f"{key}.json.gz"
    assert store.path_for(key) == path and path.stat().st_size == size == store.size()
    payload = json.loads(gzip.decompress(path.read_bytes()))
    assert payload == {"format": 1, "key": key, "engine": "engine", "stamp": {"run": "r"}, "entry": {"x": [1, "é"]}}
    read = store.read(key)
    assert read is not None and (read.key, read.engine, read.stamp, read.entry) == (key, "engine", {"run": "r"},
                                                                                  {"x": [1, "é"]})
    assert store.read("cd" + "0" * 62) is None


@pytest.mark.parametrize("payload", [
    [1], {"format": 2}, {"key": "other"}, {"entry": []}, {"stamp": None}, {"entry": None}, {"stamp": []}])
def test_an_entry_of_another_format_or_key_or_shape_is_a_miss(tmp_path: Path, payload: object) -> None:
    store = VerdictStore(tmp_path, 1 << 20)
    key = "ef" + "1" * 62
    good = {"format": 1, "key": key, "engine": "e", "stamp": {}, "entry": {}}
    store.path_for(key).parent.mkdir(parents=True)
    store.path_for(key).write_bytes(gzip.compress(json.dumps(good).encode()))
    assert store.read(key) is not None
    bad = payload if isinstance(payload, list) else {**good, **payload}
    store.path_for(key).write_bytes(gzip.compress(json.dumps(bad).encode()))
    assert store.read(key) is None


@pytest.mark.parametrize("blob", [b"", b"not gzip", gzip.compress(b"{not json", mtime=0),
                                  gzip.compress(b"\xff\xfe", mtime=0), gzip.compress(b"{}", mtime=0)[:-3]],
                         ids=["empty", "not-gzip", "not-json", "not-utf8", "cut"])
def test_a_damaged_entry_is_a_miss(tmp_path: Path, blob: bytes) -> None:
    store = VerdictStore(tmp_path, 1 << 20)
    key = "0a" * 32
    store.path_for(key).parent.mkdir(parents=True)
    store.path_for(key).write_bytes(blob)
    assert store.read(key) is None


def test_a_read_marks_an_entry_used_and_eviction_keeps_the_recent_down_to_its_share(tmp_path: Path) -> None:
    keys_ = [f"{index:02x}" + "a" * 62 for index in range(10)]
    store = VerdictStore(tmp_path, 1 << 30)
    sizes = [store.write(key, "e", {}, {"pad": "x" * 600}) for key in keys_]
    assert len(set(sizes)) == 1
    for age, key in enumerate(keys_):
        os.utime(store.path_for(key), ns=(10**18 + age * 10**9, 10**18 + age * 10**9))
    assert store.read(keys_[0]) is not None  # the oldest, now the most recently used
    store.max_bytes = sum(sizes) - 1
    assert store.evict() == 3  # down to at most 80 % of the cap: the three least recently used go
    left = sorted(path.name[:2] for path in tmp_path.rglob("*.json.gz"))
    assert left == ["00", "04", "05", "06", "07", "08", "09"]
    assert store.size() <= store_module.EVICT_TO * store.max_bytes
    store.max_bytes = store.size()
    assert store.evict() == 0  # exactly at the cap: nothing goes


def test_eviction_stops_exactly_at_its_share_of_the_cap(tmp_path: Path) -> None:
    store = VerdictStore(tmp_path, 3500)  # 80 % of it is 7 entries of 400 bytes exactly
    for index in range(10):
        path = store.path_for(f"{index:02x}" * 32)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * 400)  # eviction reads sizes and use times only
    assert store.evict() == 3 and store.size() == 2800


def test_the_folder_walk_ignores_loose_files_and_other_suffixes(tmp_path: Path) -> None:
    store = VerdictStore(tmp_path / "v", 1 << 20)
    assert store.size() == 0 and store.evict() == 0  # no folder yet
    store.write("aa" + "b" * 62, "e", {}, {})
    (tmp_path / "v" / "loose.json.gz").write_bytes(b"x" * 1000)
    (tmp_path / "v" / "aa" / "note.txt").write_bytes(b"x" * 1000)
    assert store.size() == store.path_for("aa" + "b" * 62).stat().st_size


# ------------------------------------------------------------------------------------------------ keys


def test_a_call_jobs_key_hashes_its_kind_engine_and_every_field_but_the_callers_name() -> None:
    judge = CallJudge("rules", (1, NO_EXPECTED, digest_of(list(range(10)))), {"tol": 0.5}, value_cpu_s=2.0)
    job = call_job(program="def f(x):\n    return 'é' * x\n", judge=judge, stop_after_failure=True,
                   stop_expected=((0, [1.5]),), per_input_timeout_s=(1.0, 2.0))
    content = [[field.name, keys._canonical(field.name, getattr(job, field.name))]
               for field in dataclasses.fields(job) if field.name != "key"]
    text = json.dumps(["call", "ENGINE", content], separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    import hashlib  # noqa: PLC0415
    assert keys.job_key(job, "ENGINE") == hashlib.sha256(text.encode()).hexdigest()
    canonical = dict(content)
    assert canonical["judge"] == {"source": "rules", "expected": [1, {"$no_expected": True},
                                                                  digest_of(list(range(10))).to_json()],
                                  "setup": {"tol": 0.5}, "value_cpu_s": 2.0}
    assert canonical["inputs"] == [[1], [2]] and canonical["per_input_timeout_s"] == [1.0, 2.0]
    assert canonical["stop_expected"] == [[0, [1.5]]] and canonical["limits"] == LIMITS.to_json()
    assert keys.job_key(job, "ENGINE") != keys.job_key(job, "OTHER")
    assert keys.job_key(dataclasses.replace(job, key="renamed"), "ENGINE") == keys.job_key(job, "ENGINE")


def test_a_program_with_a_lone_surrogate_still_has_a_key() -> None:
    odd = call_job(program="s = '\ud800'\ndef f(x):\n    return x\n")
    assert keys.job_key(odd, "e") != keys.job_key(call_job(program=odd.program.replace("\ud800", "\ud801")), "e")


@pytest.mark.parametrize("change", [{"judge": CallJudge("rules", (2,))}, {"judge": CallJudge("rules", (1,), {"a": 1})},
                                    {"judge": CallJudge("rules", (1,), value_cpu_s=3.0)},
                                    {"judge": CallJudge("other", (1,))},
                                    {"stop_after_failure": True, "stop_expected": ((0, 2),)}])
def test_each_part_of_the_judge_and_the_early_stop_is_in_the_key(change: dict) -> None:
    job = call_job(inputs=((1,),), judge=CallJudge("rules", (1,)), stop_after_failure=True, stop_expected=((0, 1),))
    assert keys.job_key(job, "e") != keys.job_key(dataclasses.replace(job, **change), "e")


def test_snippet_jobs_have_keys_of_their_own_kind() -> None:
    tests_job = TestsJob("k", "x = 1", ("assert x == 1",), ("f",), limits=LIMITS)
    assert_job = AssertJob("k", "x = 1", ("assert x == 1",), limits=LIMITS)
    assert len({keys.job_key(tests_job, "e"), keys.job_key(assert_job, "e")}) == 2


def test_a_field_with_no_canonical_form_or_a_non_plain_value_is_not_cacheable() -> None:
    with pytest.raises(keys.NotCacheable, match=r"^field other \(tuple\) has no canonical form$"):
        keys._canonical("other", ({"a": 1},))
    with pytest.raises(keys.NotCacheable, match="not plain data: Unserializable"):
        keys._canonical("stop_expected", ((0, object()),))
    assert keys._canonical("names", ("a", 1, 2.5)) == ["a", 1, 2.5]
    assert keys._canonical("flag", True) is True and keys._canonical("none", None) is None


def test_a_job_of_another_type_is_named_in_the_refusal() -> None:
    with pytest.raises(keys.NotCacheable, match="^object jobs are not cached$"):
        keys.job_key(object(), "e")


def test_the_key_of_a_job_the_cache_does_not_hold_is_none() -> None:
    cache = VerdictCache(Path("/nonexistent"), engine="e")
    assert cache.key_of(object()) is None
    assert cache.key_of(call_job(inputs=((object(),),))) is None
    assert cache.key_of(call_job()) == keys.job_key(call_job(), "e")


def test_source_files_take_files_and_folders_leaving_caches_out(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("a")
    (tmp_path / "pkg" / "data.json").write_text("{}")
    (tmp_path / "pkg" / "a.pyc").write_text("c")
    (tmp_path / "pkg" / "b.pyo").write_text("c")
    (tmp_path / "pkg" / "__pycache__" / "a.cpython.py").write_text("c")
    (tmp_path / "one.py").write_text("1")
    found = keys.source_files(("pkg", "one.py", "missing.py"), tmp_path)
    assert [path.relative_to(tmp_path).as_posix() for path in found] == ["one.py", "pkg/a.py", "pkg/data.json"]
    assert keys.tree_digest(tmp_path / "one.py") == keys.sha256_of(tmp_path / "one.py")
    before = keys.tree_digest(tmp_path / "pkg")
    (tmp_path / "pkg" / "a.py").rename(tmp_path / "pkg" / "c.py")  # same bytes, another name
    assert keys.tree_digest(tmp_path / "pkg") != before


# ------------------------------------------------------------------------------------------------ entries


def test_a_call_result_is_timing_unless_every_input_was_answered_within_half_its_limit() -> None:
    job = call_job(per_input_timeout_s=(1.0, 4.0))
    assert entries.classify(job, call_result(outcome(0, wall=0.5), outcome(1, wall=2.0))) == "deterministic"
    assert entries.classify(job, call_result(outcome(0, wall=0.51), outcome(1))) == "timing"
    assert entries.classify(job, call_result(outcome(0), outcome(1, wall=1.5, background_cpu_s=0.6))) == "timing"
    assert entries.classify(job, call_result(outcome(0), outcome(1, "unserializable", exc_type="TypeError"),
                                             status="error")) == "deterministic"
    assert entries.classify(job, call_result(outcome(0), outcome(1), status="fail")) == "deterministic"
    assert entries.classify(job, call_result(outcome(0), outcome(1), duration=30.0)) == "deterministic"
    assert entries.classify(job, call_result(outcome(0))) == "timing"  # an input without an outcome
    assert entries.classify(job, call_result(outcome(0), outcome(1, exc_type="JudgeError"))) == "timing"
    assert entries.classify(job, call_result(outcome(0), outcome(1, memory_limit_hit=True))) == "timing"
    assert entries.classify(job, snippets_result()) == "timing"  # a result of another kind
    assert entries.classify(object(), call_result(outcome(0), outcome(1))) == "timing"
    assert entries.classify(object(), snippets_result(snippet(0))) == "timing"


def test_after_an_early_stop_only_unrun_inputs_may_follow() -> None:
    job = call_job(inputs=((1,), (2,), (3,)), stop_after_failure=True)
    wrong = outcome(0, verdict="wrong_value")
    assert entries.classify(job, call_result(wrong, outcome(1, "not_run"), outcome(2, "not_run"),
                                             status="fail")) == "deterministic"
    assert entries.classify(job, call_result(wrong, outcome(1), outcome(2, "not_run"), status="fail")) == "timing"
    assert entries.classify(job, call_result(wrong, outcome(1, "not_run"), outcome(2), status="fail")) == "timing"
    raised = outcome(0, "exception", exc_type="ValueError")
    assert entries.classify(job, call_result(raised, outcome(1, "not_run"), outcome(2, "not_run"),
                                             status="error")) == "deterministic"
    assert entries.classify(job, call_result(outcome(0), outcome(1, "not_run"), outcome(2, "not_run"),
                                             status="error")) == "timing"  # stopped after a pass
    no_stop = call_job(inputs=((1,), (2,)))
    assert entries.classify(no_stop, call_result(wrong, outcome(1, "not_run"), status="fail")) == "timing"


def test_a_snippet_result_is_deterministic_only_when_every_snippet_ended_on_its_own() -> None:
    job = TestsJob("k", "x = 1", ("a", "b"), ("f",), limits=LIMITS)
    assert entries.classify(job, snippets_result(snippet(0), snippet(1, "fail"))) == "deterministic"
    assert entries.classify(job, snippets_result(snippet(0), snippet(1, "error", error_type="ValueError"))) \
        == "deterministic"
    assert entries.classify(job, snippets_result(snippet(0, wall=2.5), snippet(1))) == "deterministic"
    for why, last in {"near its limit": snippet(1, wall=2.51), "a timeout": snippet(1, "timeout"),
                      "memory": snippet(1, "error", error_type="MemoryError"),
                      "the judge's limit": snippet(1, "error", reason="judge_limit")}.items():
        assert entries.classify(job, snippets_result(snippet(0), last)) == "timing", why
    assert entries.classify(job, snippets_result(snippet(0))) == "timing"
    exits = TestsJob("k", "x = 1", ("a",), ("f",), limits=LIMITS, exit_code=True)
    assert entries.classify(exits, snippets_result(snippet(0, exit_code=0))) == "deterministic"
    assert entries.classify(exits, snippets_result(snippet(0))) == "timing"


def test_an_assert_job_is_deterministic_without_exit_codes_and_its_result_round_trips() -> None:
    job = AssertJob("k", "x = 1", ("assert x == 1",), limits=LIMITS)
    result = AssertJobResult("pass", (snippet(0),), LIMITS, 0.1, True)
    assert entries.classify(job, result) == "deterministic"
    entry = json.loads(json.dumps(entries.result_to_json(result)))
    assert entry["type"] == "asserts" and entries.result_from_json(entry) == result
    assert type(entries.result_from_json(entry)) is AssertJobResult


def test_results_round_trip_through_their_entries_and_others_are_refused() -> None:
    digest = digest_of(list(range(1000)))
    call = CallJobResult("pass", (outcome(0, value=(1, {2: "b"})), outcome(1, value=digest)), None, LIMITS, 0.2,
                         group_output=(("out", "err"),), group_cpu_s=(0.5,))
    entry = json.loads(json.dumps(entries.result_to_json(call)))
    assert entry["type"] == "call" and entries.result_from_json(entry) == call
    tests = snippets_result(snippet(0), snippet(1, "fail"))
    entry = json.loads(json.dumps(entries.result_to_json(tests)))
    assert entry["type"] == "tests" and entries.result_from_json(entry) == tests
    with pytest.raises(ValueError, match="int results are not cached"):
        entries.result_to_json(3)
    with pytest.raises(ValueError, match="unknown result type 'other'"):
        entries.result_from_json({"type": "other", "result": {"limits": LIMITS.to_json()}})
    with pytest.raises(ValueError, match="outcome 0's value does not encode: Unserializable"):
        entries.result_to_json(call_result(outcome(0, value=object())))
    bad_digest = entries.result_to_json(call)
    bad_digest["result"]["outcomes"][1]["value"] = {"digest": {"nonsense": 1}}
    with pytest.raises(ValueError, match="^malformed digest$"):
        entries.result_from_json(bad_digest)


# ------------------------------------------------------------------------------------------------ the cache


def test_lookup_serves_only_a_sound_deterministic_entry_of_this_engine(tmp_path: Path) -> None:
    job = call_job()
    cache = VerdictCache(tmp_path, engine="e1")
    key = cache.key_of(job)
    assert cache.lookup(job) == (key, None)  # nothing stored yet
    good = call_result(outcome(0), outcome(1))
    assert cache.record(job, key, good) is True
    before = counts_now()
    found_key, served = cache.lookup(job)
    assert found_key == key and served is not None and served.result == good
    assert served.run == run_stamp()["run"]
    assert (counts_now() - before).served_by_run == {served.run: 1}
    other_engine = VerdictCache(tmp_path, engine="e2")
    other_key = other_engine.key_of(job)
    other_engine.store.write(other_key, "e1", {"run": "r"}, entries.result_to_json(good))
    assert other_engine.lookup(job) == (other_key, None)  # an entry written by another engine under the same key
    cache.store.write(key, "e1", {"run": "r"}, {"type": "call", "result": {}})
    assert cache.lookup(job) == (key, None)  # a damaged entry
    timed = entries.result_to_json(call_result(outcome(0), outcome(1, "timeout")))
    cache.store.write(key, "e1", {"run": "r"}, timed)
    assert cache.lookup(job) == (key, None)  # a timing result stored by an older rule
    cache.store.write(key, "e1", {}, entries.result_to_json(good))
    assert cache.lookup(job)[1].run == "unknown run"  # type: ignore[union-attr]


def test_reading_off_or_everything_off_serves_nothing(tmp_path: Path) -> None:
    job = call_job()
    VerdictCache(tmp_path, engine="e").record(job, keys.job_key(job, "e"), call_result(outcome(0), outcome(1)))
    write_only = VerdictCache(tmp_path, read=False, engine="e")
    assert write_only.lookup(job) == (keys.job_key(job, "e"), None)
    off = VerdictCache(tmp_path, read=False, write=False)
    assert off.engine == "" and off.lookup(job) == (None, None)


def test_record_stores_only_deterministic_results_and_counts_every_computed_one(tmp_path: Path) -> None:
    job = call_job()
    cache = VerdictCache(tmp_path, engine="e")
    key = cache.key_of(job)
    before = counts_now()
    assert cache.record(job, None, call_result(outcome(0), outcome(1))) is False
    assert cache.record(job, key, call_result(outcome(0), outcome(1, "timeout"))) is False
    assert cache.store.read(key) is None
    assert cache.record(job, key, call_result(outcome(0), outcome(1, value=object()))) is False  # cannot encode
    assert VerdictCache(tmp_path, write=False, engine="e").record(job, key, call_result(outcome(0), outcome(1))) \
        is False
    assert cache.record(job, key, call_result(outcome(0), outcome(1))) is True
    assert (counts_now() - before) == CacheCounts({}, computed=4, stored=1)


def test_a_batch_that_stored_entries_evicts_past_the_cap(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path, max_bytes=1, engine="e")
    job = call_job()
    cache.store.write("ff" * 32, "e", {}, {"pad": "x" * 100})
    cache.finish_batch()  # nothing stored through this cache: no eviction
    assert cache.store.size() > 0
    cache.record(job, cache.key_of(job), call_result(outcome(0), outcome(1)))
    cache.finish_batch()
    assert cache.store.size() == 0
    cache.store.write("ee" * 32, "e", {}, {"pad": "x" * 100})
    cache.finish_batch()  # the last batch's eviction is done: this one stored nothing
    assert cache.store.size() > 0
    assert cache.record(job, cache.key_of(job), call_result(outcome(0), outcome(1))) is True


def test_run_stamp_names_the_batch_run_and_the_audit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RUN_ID_ENV, "20261203T000000Z-run")
    monkeypatch.setenv("AUDIT_RUN_AS", "humaneval_plus")
    stamp = run_stamp()
    assert stamp["run"] == "20261203T000000Z-run" and stamp["audit"] == "humaneval_plus"
    assert stamp["stored_at"].endswith("Z") and len(stamp["stored_at"]) == 20
    monkeypatch.setenv(RUN_ID_ENV, "")
    assert run_stamp()["run"].endswith(f"-{os.getpid()}")


@pytest.mark.parametrize(("no_cache", "switch", "reads", "writes"), [
    ("", "", True, True), ("0", "on", True, True), ("false", "", True, True), (" No ", "", True, True),
    ("1", "", False, True), ("yes", "", False, True), ("", "off", False, False), ("", " OFF ", False, False)])
def test_the_environment_sets_what_the_active_cache_reads_and_writes(
        isolated_cache: Path, monkeypatch: pytest.MonkeyPatch, no_cache: str, switch: str, reads: bool,
        writes: bool) -> None:
    monkeypatch.setenv(NO_CACHE_ENV, no_cache)
    monkeypatch.setenv(CACHE_SWITCH_ENV, switch)
    cache = active_cache()
    assert (cache.read, cache.write, caching_enabled()) == (reads, writes, writes)
    assert cache.store.folder == cache_folder() == isolated_cache / "verdicts"
    assert cache.engine == (keys.current_engine_version() if writes else "")
    with fresh_runs():
        assert active_cache().read is False and active_cache().write is writes
    assert active_cache().read is reads


@pytest.mark.parametrize(("raw", "mb"), [("", 1024), ("1", 1), ("5", 5), (" 7 ", 7), ("0", 1024), ("-3", 1024),
                                         ("x", 1024)])
def test_the_cap_comes_from_the_environment_in_megabytes(isolated_cache: Path,
                                                        monkeypatch: pytest.MonkeyPatch, raw: str, mb: int) -> None:
    monkeypatch.setenv(CAP_ENV, raw)
    monkeypatch.delenv(CACHE_SWITCH_ENV, raising=False)
    assert active_cache().store.max_bytes == mb << 20


@pytest.mark.parametrize("changes", [{"per_input_timeout_s": (float("nan"), 1.0)},
                                     {"load_timeout_s": float("inf")}])
def test_a_job_with_a_non_finite_number_is_not_keyed_but_left_to_the_sandbox_to_refuse(changes: dict) -> None:
    """The sandbox refuses such a job with a clear error; the cache must not raise its own JSON error first."""
    job = call_job(**changes)
    with pytest.raises(keys.NotCacheable, match="^CallJob job is not plain JSON: "):
        keys.job_key(job, "e")
    assert VerdictCache(Path("/nonexistent"), engine="e").lookup(job) == (None, None)
