"""What a sandbox verdict depends on, as a sha256: the job's content and the engine version that ran it.

A job's key hashes its kind and every field but the caller's `key` (program source, entry point, inputs in the
tagged JSON the sandbox is sent, limits, the judge's rules and expected values, ...), in declared order and without
sorting any mapping: a dict input in another order is another input. The engine version hashes the source of every
module that decides a verdict (the sandbox package with its zygote, the comparison rules whose text becomes a
judge, this package) and the environment the code runs in (interpreter, installed distributions, root or not), so
an edit to any of them changes every key and no stale verdict is ever served. Nothing here is a hand-kept number.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import sys
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from audit_lib.data.fetch import sha256_of

# The sandbox's own modules, not its package face: `executors.run_many` imports this package.
from audit_lib.sandbox.api import AssertJob, CallJob
from audit_lib.sandbox.call_options import NO_EXPECTED, CallJudge
from audit_lib.sandbox.codec import ValueDigest, encode
from audit_lib.sandbox.limits import Limits
from audit_lib.sandbox.testrun import TestsJob

PACKAGE_ROOT = Path(__file__).resolve().parent.parent  # audit_lib/
# Source folders and files (relative to audit_lib/) whose text decides a verdict the cache may serve.
ENGINE_SOURCES: tuple[str, ...] = (
    "sandbox",
    "verdict_cache",
    "benchmarks/humaneval_plus/compare.py",  # its rules are the judge's source (CallJudge)
    "benchmarks/humaneval_plus/evalplus_rules.py",
)
JOB_KINDS: dict[type, str] = {CallJob: "call", TestsJob: "tests", AssertJob: "asserts"}


class NotCacheable(Exception):
    """A job the cache does not key (another job type, or a field it cannot put in canonical form)."""


def source_files(sources: Iterable[str] = ENGINE_SOURCES, root: Path = PACKAGE_ROOT) -> list[Path]:
    """Every file the engine version reads, sorted (compiled files and caches left out)."""
    found: list[Path] = []
    for relative in sources:
        path = root / relative
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found += [item for item in path.rglob("*") if item.is_file() and "__pycache__" not in item.parts
                      and item.suffix not in (".pyc", ".pyo")]
    return sorted(found)


def files_digest(files: Iterable[Path], root: Path) -> str:
    """sha256 of files: each one's name relative to `root` and the sha256 of its bytes."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + sha256_of(path).encode())
    return digest.hexdigest()


def tree_digest(path: Path) -> str:
    """sha256 of a file's bytes, or of a folder's files (their relative names and bytes, caches left out)."""
    return sha256_of(path) if path.is_file() else files_digest(source_files(("",), path), path)


def engine_version(sources: Iterable[str] = ENGINE_SOURCES, root: Path = PACKAGE_ROOT) -> str:
    """sha256 of the engine's sources (names and bytes) and of the environment the sandboxed code runs in."""
    digest = hashlib.sha256(files_digest(source_files(sources, root), root).encode())
    digest.update(environment_text().encode())
    return digest.hexdigest()


@functools.lru_cache(maxsize=1)
def current_engine_version() -> str:
    """This process's engine version (computed once: the sources do not change under a running kernel)."""
    return engine_version()


@functools.lru_cache(maxsize=1)
def environment_text() -> str:
    """The interpreter, its installed distributions and whether jobs run as root (cgroup limits, memory verdicts)."""
    distributions = sorted({f"{dist.metadata['Name']}=={dist.version}".lower()
                            for dist in metadata.distributions() if dist.metadata["Name"]})
    return json.dumps({"python": sys.version, "executable": sys.executable, "root": os.geteuid() == 0,
                       "distributions": distributions})


def job_key(job: Any, engine: str | None = None) -> str:
    """The job's content key under `engine` (default: this process's engine version); `NotCacheable` if none."""
    kind = JOB_KINDS.get(type(job))
    if kind is None:
        raise NotCacheable(f"{type(job).__name__} jobs are not cached")
    content = [[item.name, _canonical(item.name, getattr(job, item.name))]
               for item in dataclasses.fields(job) if item.name != "key"]
    try:
        text = json.dumps([kind, engine or current_engine_version(), content], separators=(",", ":"),
                          ensure_ascii=False, allow_nan=False)
    except ValueError as exc:  # a nan or inf setting: the sandbox refuses the job with its own error
        raise NotCacheable(f"{type(job).__name__} job is not plain JSON: {exc}") from exc
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _canonical(name: str, value: Any) -> Any:
    """A field as plain JSON: tagged (`codec.encode`) wherever a value reaches the program or the judge."""
    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, Limits):
        return value.to_json()
    if isinstance(value, CallJudge):
        return {"source": value.source, "expected": [_expected(item) for item in value.expected],
                "setup": _encoded(dict(value.setup)), "value_cpu_s": value.value_cpu_s}
    if name == "inputs":
        return [_encoded(list(args)) for args in value]
    if name == "stop_expected":
        return [[index, _encoded(expected)] for index, expected in value]
    if isinstance(value, (tuple, list)) and all(type(item) in (str, int, float) for item in value):
        return list(value)
    raise NotCacheable(f"field {name} ({type(value).__name__}) has no canonical form")


def _expected(value: Any) -> Any:
    if value is NO_EXPECTED:
        return {"$no_expected": True}
    if isinstance(value, ValueDigest):
        return value.to_json()
    return _encoded(value)


def _encoded(value: Any) -> Any:
    try:
        return encode(value)
    except Exception as exc:  # noqa: BLE001 - not plain data: the sandbox refuses it too
        raise NotCacheable(f"not plain data: {type(exc).__name__}") from exc
