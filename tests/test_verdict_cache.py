"""The verdict cache's rules: what invalidates a key, what is never reused, damage, concurrent writers, --no-cache."""

from __future__ import annotations

import dataclasses
import hashlib
import multiprocessing
import shutil
from pathlib import Path

import pytest

from audit_lib import sandbox
from audit_lib.sandbox import CallJob, CallJobResult, CallJudge, CallOutcome, Limits, SnippetResult, TestsJob
from audit_lib.sandbox.testrun import TestsResult
from audit_lib.verdict_cache import VerdictCache, counts_now, entries, keys
from audit_lib.verdict_cache.store import VerdictStore

PROGRAM = "def f(x):\n    return {'sum': x + 1, 'seen': (x, [x * 0.5]), 'set': {x}}\n"


def call_job(**changes: object) -> CallJob:
    base = CallJob(key="k", program=PROGRAM, entry_point="f", inputs=((1,), (2,)), limits=Limits(timeout_s=5.0))
    return dataclasses.replace(base, **changes)


@pytest.fixture()
def cache_on(isolated_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The cache enabled (the suite turns it off) in a fresh data cache; returns the verdicts folder."""
    monkeypatch.delenv("AUDIT_CACHE", raising=False)
    monkeypatch.delenv("AUDIT_NO_CACHE", raising=False)
    return isolated_cache / "verdicts"


def values(result: CallJobResult) -> list[tuple]:
    """What a call job found, without its timings."""
    return [(o.kind, o.value, o.exc_type) for o in result.outcomes]


def run(jobs: list) -> tuple[dict, dict[str, int]]:
    """run_many's results, and what the cache served and computed meanwhile."""
    before = counts_now()
    results = dict(sandbox.run_many(jobs, progress=False))
    spent = counts_now() - before
    return results, {"served": spent.served, "computed": spent.computed, "stored": spent.stored}


# ------------------------------------------------------------------------------------------------ keys


@pytest.mark.parametrize("change", [
    {"program": PROGRAM.replace("x + 1", "x + 2")},
    {"entry_point": "g"},
    {"inputs": ((1,), (3,))},
    {"inputs": ((1,), (2.0,))},  # equal under ==, another input for the program
    {"inputs": (({"a": 1, "b": 2},), (2,))},
    {"limits": Limits(timeout_s=4.0)},
    {"limits": Limits(timeout_s=5.0, memory_mb=512)},
    {"per_input_timeout_s": (5.0, 2.0)},
    {"stop_after_failure": True},
    {"judge": CallJudge("def make_comparer(setup, api):\n    return None\n", (2, 3))},
    {"values": "preview"},
])
def test_a_change_to_the_program_an_input_a_limit_or_the_rules_changes_the_key(change: dict) -> None:
    assert keys.job_key(call_job(**change), "engine") != keys.job_key(call_job(), "engine")


def test_the_key_ignores_the_callers_name_for_the_job_but_not_dict_order_or_the_engine() -> None:
    assert keys.job_key(call_job(key=("other", 1)), "engine") == keys.job_key(call_job(), "engine")
    ordered = call_job(inputs=(({"a": 1, "b": 2},),))
    reordered = call_job(inputs=(({"b": 2, "a": 1},),))  # the program may iterate over it
    assert keys.job_key(ordered, "engine") != keys.job_key(reordered, "engine")
    assert keys.job_key(call_job(), "engine") != keys.job_key(call_job(), "engine-2")
    judged = call_job(judge=CallJudge("rules", (2, 3)))
    assert keys.job_key(judged, "e") != keys.job_key(call_job(judge=CallJudge("rules", (2, 4))), "e")
    assert keys.job_key(judged, "e") != keys.job_key(call_job(judge=CallJudge("rules 2", (2, 3))), "e")
    tests = TestsJob("t", "def g(): return 1", ("assert g() == 1",), ("g",))
    assert keys.job_key(tests, "e") != keys.job_key(dataclasses.replace(tests, snippets=("assert g() == 2",)), "e")


def test_the_engine_version_follows_every_engine_source_file(tmp_path: Path) -> None:
    root = tmp_path / "audit_lib"
    for relative in keys.ENGINE_SOURCES:
        source = keys.PACKAGE_ROOT / relative
        target = root / relative
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    before = keys.engine_version(root=root)
    assert keys.engine_version(root=root) == before
    assert len(keys.source_files(root=root)) > 20  # the zygote's modules are in it
    for changed in (root / "sandbox" / "zygote" / "call_child.py", root / "benchmarks/humaneval_plus/compare.py"):
        original = changed.read_bytes()
        changed.write_bytes(original + b"\n# an edit\n")
        assert keys.engine_version(root=root) != before, changed
        changed.write_bytes(original)
    assert keys.engine_version(root=root) == before


def test_a_job_type_without_a_canonical_form_is_not_cached() -> None:
    with pytest.raises(keys.NotCacheable):
        keys.job_key(object(), "e")
    with pytest.raises(keys.NotCacheable):  # a value that is not plain data is not keyed (the sandbox refuses it)
        keys.job_key(call_job(inputs=((object(),),)), "e")


# ------------------------------------------------------------------------------------------------ what is reused


def outcome(index: int, kind: str = "value", wall: float = 0.01, **fields: object) -> CallOutcome:
    return CallOutcome(index, kind, fields.pop("value", 1), duration_s=wall, wall_s=wall, **fields)


def result(*outcomes: CallOutcome, status: str = "pass", duration: float = 0.1) -> CallJobResult:
    return CallJobResult(status, outcomes, None, Limits(timeout_s=5.0), duration)


def test_only_results_no_clock_or_ceiling_decided_are_deterministic() -> None:
    job = call_job()
    assert entries.classify(job, result(outcome(0), outcome(1, "exception", exc_type="ValueError"))) \
        == "deterministic"
    timing = {
        "a timeout": result(outcome(0), outcome(1, "timeout")),
        "an input near its limit": result(outcome(0), outcome(1, wall=2.6)),
        "background CPU near the limit": result(outcome(0), outcome(1, wall=1.0, background_cpu_s=1.6)),
        "an unrun input": result(outcome(0), outcome(1, "not_run"), status="error"),
        "a supervisor's kill": result(outcome(0), outcome(1, "exception", exc_type="SIGKILL", by_supervisor=True)),
        "the memory limit": result(outcome(0), outcome(1, "exception", exc_type="MemoryError")),
        "a decode budget": result(outcome(0), outcome(1, "unserializable", exc_type="BudgetExceeded")),
        "a judge's limit": result(outcome(0), outcome(1, "unserializable", exc_type="JudgeLimit")),
        "a harness error": result(outcome(0), outcome(1), status="harness_error"),
        "a job near its total limit": result(outcome(0), outcome(1), duration=31.0),
    }
    for why, timed in timing.items():
        assert entries.classify(job, timed) == "timing", why


def test_inputs_left_unrun_after_a_deterministic_early_stop_are_deterministic() -> None:
    fast = call_job(stop_after_failure=True, inputs=((1,), (2,), (3,)))
    stopped = result(outcome(0), outcome(1, "exception", exc_type="AssertionError"), outcome(2, "not_run"))
    assert entries.classify(fast, stopped) == "deterministic"
    wrong = result(outcome(0, verdict="wrong_value"), outcome(1, "not_run"), outcome(2, "not_run"))
    assert entries.classify(fast, wrong) == "deterministic"
    unexplained = result(outcome(0), outcome(1, "not_run"), outcome(2, "not_run"))
    assert entries.classify(fast, unexplained) == "timing"
    assert entries.classify(call_job(inputs=((1,), (2,), (3,))), stopped) == "timing"  # no early stop asked for


def test_a_test_snippet_is_deterministic_only_when_it_ended_on_its_own_well_inside_its_limit() -> None:
    job = TestsJob("t", "p", ("s1", "s2"), ("f",), limits=Limits(timeout_s=2.0))

    def tests(*snippets: SnippetResult) -> TestsResult:
        return TestsResult("pass", snippets, job.limits, 0.1, True)

    fine = SnippetResult(0, "pass", 0.1, wall_s=0.1)
    assert entries.classify(job, tests(fine, SnippetResult(1, "fail", 0.1, "AssertionError", wall_s=0.1))) \
        == "deterministic"
    for why, other in {"timeout": SnippetResult(1, "timeout", 2.0, wall_s=2.0),
                       "killed": SnippetResult(1, "killed", 0.1, wall_s=0.1),
                       "near the limit": SnippetResult(1, "pass", 1.2, wall_s=1.2),
                       "judge limit": SnippetResult(1, "error", 0.1, wall_s=0.1, reason="judge_limit"),
                       "memory": SnippetResult(1, "memory", 0.1, wall_s=0.1)}.items():
        assert entries.classify(job, tests(fine, other)) == "timing", why


def test_a_result_comes_back_from_its_entry_as_it_was() -> None:
    digest = sandbox.digest_of(list(range(1000)))
    original = CallJobResult("pass", (
        CallOutcome(0, "value", {"a": (1, [2.5, float("inf")]), 3: {4, 5}, "b": b"x"}, wall_s=0.1, cpu_s=0.05),
        CallOutcome(1, "value", digest, verdict="match", preview="<list>"),
        CallOutcome(2, "exception", exc_type="ValueError", exc_message="no"),
        CallOutcome(3, "value", None, preview="[1, 2..."),
    ), None, Limits(timeout_s=3.0), 0.4, stdout="out", stderr="err", cpu_s=0.3)
    assert entries.result_from_json(entries.result_to_json(original)) == original
    tests = TestsResult("fail", (SnippetResult(0, "fail", 0.1, "AssertionError", "m", exit_code=1),),
                        Limits(), 0.2, True)
    assert entries.result_from_json(entries.result_to_json(tests)) == tests


# ------------------------------------------------------------------------------------------------ in run_many


def test_a_second_run_serves_the_same_verdicts_and_any_change_runs_again(cache_on: Path) -> None:
    tests_job = TestsJob("t", "def g(x):\n    return x + 1\n", ("assert g(1) == 2", "assert g(1) == 3"), ("g",))
    first, counted = run([call_job(), tests_job])
    assert counted == {"served": 0, "computed": 2, "stored": 2}
    second, counted = run([call_job(), tests_job])
    assert counted == {"served": 2, "computed": 0, "stored": 0}
    assert second == first and second["t"].snippets[1].status == "fail"
    changed = [call_job(program=PROGRAM.replace("x + 1", "x + 2")), call_job(inputs=((1,), (5,))),
               call_job(limits=Limits(timeout_s=4.0))]
    results, counted = run([dataclasses.replace(job, key=n) for n, job in enumerate(changed)])
    assert counted == {"served": 0, "computed": 3, "stored": 3}
    assert results[0].outcomes[0].value["sum"] == 3 and results[1].outcomes[1].value["sum"] == 6


def test_an_engine_change_never_serves_an_older_engines_verdict(cache_on: Path) -> None:
    old = VerdictCache(cache_on, engine="engine-before")
    new = VerdictCache(cache_on, engine="engine-after")
    job = call_job()
    key = old.key_of(job)
    assert old.record(job, key, result(outcome(0), outcome(1)))
    assert old.lookup(job)[1] is not None
    assert new.lookup(job)[1] is None
    # even an entry filed under the new key but written by another engine is refused
    stored = old.store.read(key)
    new.store.write(new.key_of(job), "engine-before", stored.stamp, stored.entry)
    assert new.lookup(job)[1] is None


def test_a_timing_verdict_is_measured_again_every_run(cache_on: Path) -> None:
    slow = CallJob("slow", "import time\ndef f(x):\n    time.sleep(x)\n    return x\n", "f", ((0.4,),),
                   limits=Limits(timeout_s=0.6, total_timeout_s=10.0))
    looping = CallJob("loop", "def f(x):\n    while True:\n        pass\n", "f", ((1,),),
                      limits=Limits(timeout_s=0.3, total_timeout_s=10.0))
    for _ in range(2):
        results, counted = run([slow, looping])
        assert counted == {"served": 0, "computed": 2, "stored": 0}
        assert results["loop"].outcomes[0].kind == "timeout" and results["slow"].outcomes[0].wall_s >= 0.4
    assert not list(cache_on.rglob("*.json.gz"))


def test_a_corrupt_entry_is_ignored_and_replaced(cache_on: Path) -> None:
    job = call_job()
    first, _ = run([job])
    cache = VerdictCache(cache_on)
    path = cache.store.path_for(cache.key_of(job))
    for damage in (b"not gzip at all", path.read_bytes()[:40], b""):
        path.write_bytes(damage)
        again, counted = run([job])
        assert counted == {"served": 0, "computed": 1, "stored": 1}, damage
        assert values(again["k"]) == values(first["k"])
        assert cache.lookup(job)[1] is not None  # replaced by a sound entry
    other = call_job(inputs=((7,), (8,)))  # an entry filed under another key's name is not served either
    run([other])
    shutil.copy2(cache.store.path_for(cache.key_of(other)), path)
    assert cache.lookup(job)[1] is None


def test_no_cache_recomputes_everything_and_stores_the_fresh_verdicts(cache_on: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    run([call_job()])
    monkeypatch.setenv("AUDIT_NO_CACHE", "1")
    _, counted = run([call_job()])
    assert counted == {"served": 0, "computed": 1, "stored": 1}
    monkeypatch.setenv("AUDIT_CACHE", "off")
    _, counted = run([call_job()])
    assert counted == {"served": 0, "computed": 0, "stored": 0}


def _payload(writer: int) -> dict[str, str]:
    """A large entry that does not compress, different per writer: a half-written file would take long to miss."""
    return {"payload": hashlib.sha256(str(writer).encode()).hexdigest() * 4000}


def test_a_fresh_run_is_never_served_from_the_cache_but_stores_its_results(cache_on: Path) -> None:
    from audit_lib.verdict_cache import fresh_runs  # noqa: PLC0415

    run([call_job()])
    with fresh_runs():
        _, counted = run([call_job()])
    assert counted == {"served": 0, "computed": 1, "stored": 1}
    assert run([call_job()])[1]["served"] == 1


def _write_many(folder: str, key: str, writer: int, count: int) -> None:
    store = VerdictStore(Path(folder), 1 << 30)
    for n in range(count):
        store.write(key, "engine", {"run": f"writer-{writer}", "n": n}, _payload(writer))


def test_two_runs_writing_the_same_key_leave_one_whole_entry_readers_never_see_half(tmp_path: Path) -> None:
    store = VerdictStore(tmp_path, 1 << 30)
    key = "ab" + "0" * 62
    store.write(key, "engine", {"run": "writer-0", "n": -1}, _payload(0))
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_write_many, args=(str(tmp_path), key, writer, 200)) for writer in (0, 1)]
    for process in writers:
        process.start()
    reads = 0
    while any(process.is_alive() for process in writers):
        entry = store.read(key)  # never absent nor half-written: each write renames a whole file into place
        assert entry is not None
        assert entry.entry == _payload(int(entry.stamp["run"][-1]))
        reads += 1
    for process in writers:
        process.join()
        assert process.exitcode == 0
    final = store.read(key)
    assert reads and final is not None and final.stamp["n"] == 199
    assert not [path for path in tmp_path.rglob("*") if path.name.endswith(".part")]


def test_the_folder_stays_under_its_cap_evicting_the_least_recently_used(tmp_path: Path) -> None:
    import os  # noqa: PLC0415

    store = VerdictStore(tmp_path, 10_000)
    payload = {"noise": os.urandom(1500).hex()}  # does not compress: about 3 kB an entry
    names = [f"{n:02d}" + "0" * 62 for n in range(8)]
    for age, key in enumerate(names):
        store.write(key, "e", {}, payload)
        os.utime(store.path_for(key), ns=(age * 10**9, age * 10**9))
    assert store.read(names[0]) is not None  # read: now the most recently used
    assert store.evict() > 0
    assert store.size() <= 10_000 * 0.8
    assert store.read(names[0]) is not None and store.read(names[1]) is None and store.read(names[-1]) is not None


def test_a_cache_entry_is_renamed_into_place_without_an_fsync(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # A cache entry is only a saving: one lost or damaged by a crash is a miss, so its write waits for no disk.
    from audit_lib import atomic_files

    synced: list[int] = []
    monkeypatch.setattr(atomic_files.os, "fsync", synced.append)
    store = VerdictStore(tmp_path / "verdicts", 1 << 20)
    store.write("ab" * 32, "engine", {"run": "r"}, {"outcomes": []})
    assert synced == [] and store.read("ab" * 32) is not None
    atomic_files.atomic_write_bytes(tmp_path / "findings.json", b"{}")  # what a report keeps is still synced
    assert len(synced) == 1
