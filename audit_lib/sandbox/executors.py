"""Fan sandbox jobs out over a local pool or a Dask cluster, streaming results with bounded memory.

`run_many(jobs, executor)` keeps at most `max_in_flight` jobs submitted at once (default: twice the pool's
workers), pulling the next job from the iterable only when one finishes, so parent memory stays flat for any
number of jobs. Executors:

* `None`: the `AUDIT_EXECUTOR` environment variable if set, else `"local"`.
* `"local"`: a thread pool sized to the machine (`os.cpu_count()`); each thread drives its own warmed zygote
  process, where the code actually runs, so threads only wait on pipes.
* `"dask-local"`: a `distributed.LocalCluster` (one single-threaded worker process per CPU).
* `"dask://HOST:PORT"`: an existing scheduler at `tcp://HOST:PORT`.
* any `concurrent.futures.Executor`: used as is (and not shut down here).

Dask executors come from `Client.get_executor(pure=False)`; `dask[distributed]` is an optional extra.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol

from audit_lib.errors import ParameterError
from audit_lib.work_progress import track_progress

EXECUTOR_ENV = "AUDIT_EXECUTOR"


class Job(Protocol):
    """What `run_many` needs from a job (`sandbox.AssertJob`, `sandbox.CallJob`)."""

    key: Any

    def run(self) -> Any: ...

    def harness_error(self, message: str) -> Any: ...


def default_workers() -> int:
    """Workers for the local pool: the batch's budget (`AUDIT_WORKERS`), else one per CPU."""
    from audit_lib.worker_budget import budget_size  # noqa: PLC0415

    return budget_size()


def resolve_executor_name(executor: str | None) -> str:
    """The executor spec to use: the argument, else `AUDIT_EXECUTOR`, else `"local"`; validated."""
    name = executor if executor is not None else os.environ.get(EXECUTOR_ENV) or "local"
    if name in ("local", "dask-local") or (name.startswith("dask://") and len(name) > len("dask://")):
        return name
    raise ParameterError(f"unknown executor {name!r}: use 'local', 'dask-local' or 'dask://HOST:PORT'",
                         field="executor")


@contextlib.contextmanager
def open_executor(executor: str | cf.Executor | None = None,
                  workers: int | None = None) -> Iterator[tuple[cf.Executor, int]]:
    """An executor and its worker count; ones created here are shut down on exit."""
    if isinstance(executor, cf.Executor):
        yield executor, workers or default_workers()
        return
    name = resolve_executor_name(executor)
    if name == "local":
        count = workers or default_workers()
        with cf.ThreadPoolExecutor(max_workers=count, thread_name_prefix="sandbox") as pool:
            yield pool, count
        return
    try:
        from distributed import Client, LocalCluster  # noqa: PLC0415 - optional extra
    except ImportError as exc:
        raise ParameterError(f"executor {name!r} needs dask[distributed] (pip install 'benchaudit[dask]')",
                             field="executor") from exc
    if name == "dask-local":
        count = workers or default_workers()
        with LocalCluster(n_workers=count, threads_per_worker=1, processes=True, dashboard_address=None) \
                as cluster, Client(cluster) as client:
            yield client.get_executor(pure=False), count
        return
    with Client("tcp://" + name[len("dask://"):]) as client:
        count = workers or max(1, sum(client.nthreads().values()))
        yield client.get_executor(pure=False), count


_EXHAUSTED = object()


def _run_job(job: Job) -> Any:
    from audit_lib.worker_budget import worker_slot  # noqa: PLC0415 - also runs on dask workers

    with worker_slot():  # the batch's shared budget: no more jobs at once than cores, across notebooks
        return job.run()


def run_many(jobs: Iterable[Job], executor: str | cf.Executor | None = None, *, progress: bool = True,
             max_in_flight: int | None = None, workers: int | None = None, progress_unit: str = "jobs",
             progress_weight: Callable[[Job], int] | None = None,
             progress_desc: str = "sandbox") -> Iterator[tuple[Any, Any]]:
    """Run jobs and yield `(job.key, result)` as each finishes; a job the executor fails on is a harness_error.

    A job whose deterministic verdict an earlier run stored is answered from `audit_lib.verdict_cache` without
    running; every fresh deterministic result is stored there. Progress (`audit_lib.work_progress`: the batch
    runner's line, a Jupyter or terminal bar) counts finished jobs, or with `progress_weight` what each job stands
    for (its inputs, say) in `progress_unit`s.
    """
    from audit_lib.verdict_cache import active_cache  # noqa: PLC0415 - the cache builds on this package

    weight = progress_weight or _one
    total = sum(weight(job) for job in jobs) if isinstance(jobs, Sequence) else None
    cache = active_cache()  # deterministic verdicts of earlier runs: served here, never run again
    with open_executor(executor, workers) as (pool, count), \
            track_progress(total, desc=progress_desc, unit=progress_unit, enabled=progress) as bar:
        limit = max_in_flight or 2 * count
        pending: dict[cf.Future, tuple[Job, str | None]] = {}
        job_iter = iter(jobs)
        exhausted = False
        try:
            while True:
                while not exhausted and len(pending) < limit:
                    job = next(job_iter, _EXHAUSTED)
                    if job is _EXHAUSTED:
                        exhausted = True
                        break
                    cache_key, served = cache.lookup(job)
                    if served is not None:
                        bar.update(weight(job))
                        yield job.key, served.result
                        continue
                    pending[pool.submit(_run_job, job)] = (job, cache_key)
                if not pending:
                    return
                done, _ = cf.wait(list(pending), return_when=cf.FIRST_COMPLETED)
                for future in done:
                    job, cache_key = pending.pop(future)
                    try:
                        result = future.result()
                    except Exception as exc:  # noqa: BLE001 - the executor, not the sandbox, failed
                        result = job.harness_error(f"executor failed to run the job: {type(exc).__name__}: {exc}")
                    else:
                        cache.record(job, cache_key, result)
                    bar.update(weight(job))
                    yield job.key, result
        finally:
            cache.finish_batch()  # evict past the cap, also when the caller stops early


def _one(_job: Job) -> int:
    return 1
