"""run_many: streaming, bounded in-flight, executor selection, and Dask results identical to the local pool."""

from __future__ import annotations

import concurrent.futures as cf

import pytest

from audit_lib import sandbox
from audit_lib.errors import ParameterError
from audit_lib.sandbox import Limits, executors
from tests.prerequisites import import_declared

pytestmark = pytest.mark.timeout(120)

LIMITS = Limits(timeout_s=2, total_timeout_s=10, memory_mb=256)
PROGRAM = "def f(x):\n    if x % 3 == 0:\n        raise ValueError(x)\n    return (x, [x * 0.5], {str(x): x})\n"


def mixed_jobs(count: int) -> list:
    jobs: list = []
    for i in range(count):
        if i % 2:
            jobs.append(sandbox.CallJob(("call", i), PROGRAM, "f", tuple([j] for j in range(i, i + 4)), LIMITS))
        else:
            jobs.append(sandbox.AssertJob(("assert", i), PROGRAM, (f"assert f({i + 1})[0] == {i + 1}",
                                                                   f"assert f({i + 1})[0] == {i}", f"f({3 * i})"),
                                          LIMITS))
    return jobs


def comparable(result) -> tuple:
    """Everything but timings and durations."""
    if isinstance(result, sandbox.AssertJobResult):
        return result.status, tuple((s.status, s.error_type, s.error_message, s.stdout) for s in result.snippets)
    return result.status, result.load_error, tuple((o.kind, o.value, o.exc_type, o.exc_message)
                                                    for o in result.outcomes)


def test_local_pool_runs_every_job_once() -> None:
    jobs = mixed_jobs(10)
    results = dict(executors.run_many(jobs, "local", progress=False))
    assert set(results) == {job.key for job in jobs}
    assert [s.status for s in results[("assert", 0)].snippets] == ["pass", "fail", "error"]
    assert results[("call", 1)].outcomes[0].value == (1, [0.5], {"1": 1})
    assert results[("call", 1)].outcomes[2].exc_type == "ValueError"


def test_in_flight_jobs_are_bounded() -> None:
    pulled = yielded = 0
    worst = 0

    def generate():
        nonlocal pulled
        for job in mixed_jobs(12):
            pulled += 1
            yield job

    for _key, _result in executors.run_many(generate(), "local", progress=False, max_in_flight=3, workers=2):
        yielded += 1
        worst = max(worst, pulled - yielded)
    assert yielded == 12
    assert worst <= 3


def test_executor_name_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(executors.EXECUTOR_ENV, raising=False)
    assert executors.resolve_executor_name(None) == "local"
    monkeypatch.setenv(executors.EXECUTOR_ENV, "dask://scheduler:8786")
    assert executors.resolve_executor_name(None) == "dask://scheduler:8786"
    assert executors.resolve_executor_name("local") == "local"
    with pytest.raises(ParameterError):
        executors.resolve_executor_name("ray://x")


def test_a_job_the_executor_fails_on_becomes_a_harness_error() -> None:
    class Broken(cf.Executor):
        def submit(self, fn, /, *args, **kwargs):
            future: cf.Future = cf.Future()
            future.set_exception(RuntimeError("worker lost"))
            return future

    results = dict(executors.run_many(mixed_jobs(2), Broken(), progress=False))
    assert {r.status for r in results.values()} == {"harness_error"}
    assert "worker lost" in results[("call", 1)].load_error


def test_dask_local_cluster_gives_results_identical_to_the_local_pool() -> None:
    import_declared("distributed", "dask[distributed]")
    jobs = mixed_jobs(6)
    local = {key: comparable(result) for key, result in executors.run_many(jobs, "local", progress=False)}
    dask = {key: comparable(result) for key, result in
            executors.run_many(jobs, "dask-local", progress=False, workers=2)}
    assert dask == local
