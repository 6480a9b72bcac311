"""Resolve a registered file: verified cache copy -> local mirror -> installed package -> download.

Every copy is checked against its sha256 pin before use. A file without a pin is parsed with its format's reader
on first sight, and only a copy that parses has its hash recorded in `data_cache/lock.json`; a later copy with a
different hash is reported, never used silently. Every refusal says what to run next.
Files enter the cache atomically (temporary file in the same folder, fsync, rename), so a crash leaves no
half-written file under the real name.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import shutil
import socket
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import BinaryIO, Literal

from audit_lib import paths
from audit_lib.atomic_files import atomic_output, atomic_write_bytes
from audit_lib.data.sources import HubFile, SourceFile, UrlFile, get_source
from audit_lib.errors import ChecksumMismatchError, CorruptFileError, DataError, DataUnavailableError

SourceKind = Literal["cache", "mirror", "package", "download", "synthetic", "user"]
LOCK_FILE_NAME = "lock.json"
DOWNLOAD_TIMEOUT_S = float(os.environ.get("AUDIT_DOWNLOAD_TIMEOUT", "60"))
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Provenance:
    """Where one file's bytes came from and whether they are what the registry promises."""

    dataset: str
    file: str
    source: SourceKind
    location: str
    sha256: str
    pinned: bool
    synthetic: bool
    upstream: str
    licence: str
    note: str = ""


@dataclass(frozen=True)
class FetchedFile:
    """A verified local copy of a registered file and its provenance."""

    path: Path
    provenance: Provenance


@dataclass(frozen=True)
class Attempt:
    """One place `fetch` looked, and what it found there."""

    place: str
    outcome: str


def sha256_of(path: str | os.PathLike[str]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def is_offline() -> bool:
    """True when downloads are switched off (`AUDIT_OFFLINE=1`, or the hub's own `HF_HUB_OFFLINE=1`)."""
    return any(os.environ.get(name, "").strip().lower() in {"1", "true", "yes"}
               for name in ("AUDIT_OFFLINE", "HF_HUB_OFFLINE"))


def fetch(dataset: str, file: str, *, mirror: str | os.PathLike[str] | None = None,
          offline: bool | None = None, cache_dir: str | os.PathLike[str] | None = None) -> FetchedFile:
    """Return a verified local copy of `dataset/file`, trying cache, mirror, package and download in turn."""
    return fetch_source(get_source(dataset, file), mirror=mirror, offline=offline, cache_dir=cache_dir)


def try_fetch(dataset: str, file: str, **kwargs: object) -> FetchedFile | DataError:
    """Like `fetch`, but hand back the data error instead of raising it (for checks that report `skipped`)."""
    try:
        return fetch(dataset, file, **kwargs)  # type: ignore[arg-type]
    except DataError as exc:
        return exc


# "<dataset>/<file>" -> the reason code of the refusal that ended this process's last fetch of it (a copy was found
# and refused: checksum_mismatch, corrupt_file); absent once a fetch of it succeeds or finds no copy at all.
_refused: dict[str, str] = {}


def refusal(key: str) -> str | None:
    """Why this process's last fetch of `<dataset>/<file>` refused the copy it found, or None (not refused)."""
    return _refused.get(key)


def fetch_source(source: SourceFile, *, mirror: str | os.PathLike[str] | None = None,
                 offline: bool | None = None, cache_dir: str | os.PathLike[str] | None = None,
                 hub_download: Callable[..., str] | None = None, refresh: bool = False,
                 accept_new: bool = False) -> FetchedFile:
    """The resolution order for one registry entry; `hub_download` replaces `huggingface_hub.hf_hub_download`.

    `refresh` skips the cached copy and re-resolves from the mirror, package or upstream (the cache keeps its
    copy unless the new one verifies). `accept_new` also replaces an unpinned file's hash in the lock file.
    """
    try:
        fetched = _resolve(source, mirror=mirror, offline=offline, cache_dir=cache_dir, hub_download=hub_download,
                           refresh=refresh, accept_new=accept_new)
    except (ChecksumMismatchError, CorruptFileError) as exc:
        _refused[source.key] = exc.reason_code
        raise
    except DataError:
        _refused.pop(source.key, None)
        raise
    _refused.pop(source.key, None)
    return fetched


def _resolve(source: SourceFile, *, mirror: str | os.PathLike[str] | None, offline: bool | None,
             cache_dir: str | os.PathLike[str] | None, hub_download: Callable[..., str] | None, refresh: bool,
             accept_new: bool) -> FetchedFile:
    cache_root = Path(cache_dir) if cache_dir is not None else paths.data_cache_dir()
    cached_path = cache_root / source.dataset / source.file
    attempts: list[Attempt] = []

    if refresh or accept_new:
        attempts.append(Attempt(f"cache {cached_path}", "not used: --refresh"))
    elif cached_path.is_file():
        actual = sha256_of(cached_path)
        expected = _expected_hash(source, cache_root)
        if expected is not None and actual == expected:
            return FetchedFile(cached_path, _provenance(source, "cache", cached_path, actual,
                                                        _recorded_origin(cached_path)))
        if expected is None:  # an unpinned copy never recorded in lock.json: admitted only once it parses
            try:
                return _admit(source, cached_path, cached_path, cache_root, "cache", str(cached_path))
            except CorruptFileError as exc:
                quarantined = _quarantine(cached_path)
                attempts.append(Attempt(f"cache {cached_path}", f"{exc.fields.get('reason', exc.message)}; "
                                                                f"moved aside to {quarantined.name}"))
        else:
            quarantined = _quarantine(cached_path)
            attempts.append(Attempt(f"cache {cached_path}",
                                    f"sha256 {actual} does not match {expected}; moved aside to {quarantined.name}"))
    else:
        attempts.append(Attempt(f"cache {cached_path}", "not present"))

    mirror_root = paths.mirror_dir(mirror)
    if mirror_root is not None:
        mirrored = mirror_root / source.dataset / source.file
        if mirrored.is_file():
            return _admit(source, mirrored, cached_path, cache_root, "mirror", str(mirrored), accept_new=accept_new)
        attempts.append(Attempt(f"mirror {mirrored}", "not present"))
    else:
        attempts.append(Attempt("mirror", "none configured (AUDIT_MIRROR or --mirror)"))

    if source.package_copy is not None:
        packaged = _package_resource(source)
        if packaged is not None:
            return _admit(source, packaged, cached_path, cache_root, "package",
                          f"installed package {source.package_copy.package}: {source.package_copy.resource}",
                          accept_new=accept_new)
        attempts.append(Attempt(f"package {source.package_copy.package}", "not installed"))

    offline_now = is_offline() if offline is None else offline
    if source.upstream is None:
        attempts.append(Attempt("upstream", "none: this file has no public upstream, only mirrors hold it"))
    elif offline_now:
        attempts.append(Attempt(f"download {source.upstream_text()}", "skipped: offline (AUDIT_OFFLINE/HF_HUB_OFFLINE)"))
    elif hub_download is None and (unreachable := _unreachable_reason(source.upstream.url())) is not None:
        attempts.append(Attempt(f"download {source.upstream_text()}", unreachable))
    else:
        try:
            with _downloaded(source, cached_path.parent, hub_download) as temp_path:
                return _admit(source, temp_path, cached_path, cache_root, "download", source.upstream_text(),
                              move=True, accept_new=accept_new)
        except DataUnavailableError as exc:
            attempts.append(Attempt(f"download {source.upstream_text()}", exc.message))

    raise _unavailable(source, attempts)


def synthetic_provenance(dataset: str, file: str, *, generator: str, seed: int,
                         path: str | os.PathLike[str]) -> Provenance:
    """Provenance for a file written by a seeded generator in `audit_lib.synthetic` (never real data)."""
    return Provenance(dataset=dataset, file=file, source="synthetic", location=os.fspath(path),
                      sha256=sha256_of(path), pinned=False, synthetic=True,
                      upstream=f"generated by {generator} (seed={seed})", licence="synthetic",
                      note="SYNTHETIC: the real file is not public or not available here")


def read_lock(cache_root: Path | None = None) -> dict[str, dict[str, str]]:
    lock_path = (cache_root or paths.data_cache_dir()) / LOCK_FILE_NAME
    if not lock_path.is_file():
        return {}
    try:
        with open(lock_path, encoding="utf-8") as handle:
            content = json.load(handle)
    except json.JSONDecodeError as exc:
        raise DataError(f"{lock_path}: lock file is not valid JSON ({exc}); fix it, or delete it and run "
                        "`python -m audit_lib fetch` to record every unpinned file's hash again",
                        file=str(lock_path)) from exc
    return content if isinstance(content, dict) else {}


def _expected_hash(source: SourceFile, cache_root: Path) -> str | None:
    if source.sha256 is not None:
        return source.sha256
    entry = read_lock(cache_root).get(source.key)
    return entry.get("sha256") if entry else None


def _admit(source: SourceFile, candidate: Path, cached_path: Path, cache_root: Path, kind: SourceKind,
           location: str, *, move: bool = False, accept_new: bool = False) -> FetchedFile:
    """Verify a candidate copy (its pin, else it parses and matches lock.json), then store it in the cache."""
    actual = sha256_of(candidate)
    if source.sha256 is not None and actual != source.sha256:
        raise ChecksumMismatchError(
            f"{source.key}: sha256 mismatch for the copy from {kind} {location}: expected {source.sha256} "
            f"(registry pin), got {actual}. The copy was not used. {_replace_hint(source, kind, location)}",
            file=source.key, expected=source.sha256, actual=actual, origin=location)
    note = ""
    if source.sha256 is None:
        _require_parses(source, candidate, kind, location, actual)
        note = _check_or_record_lock(source, actual, cache_root, location, accept_new=accept_new)
    cached_path.parent.mkdir(parents=True, exist_ok=True)
    if move:
        os.replace(candidate, cached_path)
    elif candidate.resolve() != cached_path.resolve():
        with atomic_output(cached_path) as handle, open(candidate, "rb") as original:
            shutil.copyfileobj(original, handle, _CHUNK)
    if kind != "cache":  # a cached copy keeps the record of where it was first taken from
        atomic_write_bytes(_origin_path(cached_path),
                           json.dumps({"source": kind, "location": location}).encode("utf-8"))
    return FetchedFile(cached_path, _provenance(source, kind, Path(location) if kind == "mirror" else location,
                                                actual, note))


def _replace_hint(source: SourceFile, kind: SourceKind, location: str) -> str:
    """What to run after a copy was refused: replace the bad copy, then re-resolve the file."""
    if kind == "download":
        return (f"The download was damaged or upstream changed: retry with `python -m audit_lib fetch --refresh "
                f"{source.dataset}`, or set AUDIT_MIRROR to a folder holding a good {source.key}.")
    return (f"Replace {location} with a good copy (or remove it and run `python -m audit_lib fetch "
            f"{source.dataset}` online), then run `python -m audit_lib fetch --refresh {source.dataset}`.")


def _require_parses(source: SourceFile, candidate: Path, kind: SourceKind, location: str, actual: str) -> None:
    """An unpinned copy must parse with its format's reader before its hash may enter lock.json."""
    from audit_lib.data.readers import verify_parses  # readers import pandas/pyarrow lazily; fetch stays light

    try:
        verify_parses(candidate, source.format)
    except DataError as exc:
        raise CorruptFileError(
            f"{source.key}: the copy from {kind} {location} (sha256 {actual}) does not parse as {source.format}: "
            f"{exc.message}. It was not used and nothing was recorded in lock.json. "
            f"{_replace_hint(source, kind, location)}",
            file=source.key, origin=location, actual=actual, reason=exc.message,
            row=exc.fields.get("row"), field=exc.fields.get("field")) from exc


def _check_or_record_lock(source: SourceFile, actual: str, cache_root: Path, location: str, *,
                          accept_new: bool = False) -> str:
    cache_root.mkdir(parents=True, exist_ok=True)
    with _locked(cache_root / (LOCK_FILE_NAME + ".lck")):
        lock = read_lock(cache_root)
        entry = lock.get(source.key)
        if entry is not None and not (accept_new and entry["sha256"] != actual):
            if entry["sha256"] != actual:
                raise ChecksumMismatchError(
                    f"{source.key}: upstream changed. {location} now has sha256 {actual}, but {entry['sha256']} was "
                    f"recorded on {entry['recorded_at']} from {entry['origin']} in {cache_root / LOCK_FILE_NAME}. "
                    f"The new copy was not used. To accept it: python -m audit_lib fetch --accept {source.key}; "
                    f"to keep the recorded one, put that copy back at {location}.",
                    file=source.key, expected=entry["sha256"], actual=actual, origin=location)
            return f"unpinned upstream; hash matches the one recorded on {entry['recorded_at']}"
        lock[source.key] = {"sha256": actual, "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                            "origin": location, **({"replaced": entry["sha256"]} if entry else {})}
        atomic_write_bytes(cache_root / LOCK_FILE_NAME,
                            (json.dumps(lock, indent=2, sort_keys=True) + "\n").encode("utf-8"))
        return "unpinned upstream; first download, hash recorded in data_cache/lock.json"


@contextlib.contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    with open(lock_path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def _downloaded(source: SourceFile, target_dir: Path,
                hub_download: Callable[..., str] | None) -> Iterator[Path]:
    """Download to a temporary file beside the cache target; the file is removed unless moved into place."""
    target_dir.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(dir=target_dir, prefix=".download-", suffix=".part", delete=False)
    temp_path = Path(handle.name)
    try:
        with handle:
            if isinstance(source.upstream, HubFile):
                _download_from_hub(source.upstream, handle, hub_download)
            elif isinstance(source.upstream, UrlFile):
                _download_url(source.upstream.url(), handle)
            handle.flush()
            os.fsync(handle.fileno())
        yield temp_path
    finally:
        temp_path.unlink(missing_ok=True)


@functools.lru_cache(maxsize=32)
def _host_unreachable(host: str, port: int) -> str | None:
    try:
        with socket.create_connection((host, port), timeout=min(DOWNLOAD_TIMEOUT_S, 5.0)):
            return None
    except OSError as exc:
        return f"network unreachable: cannot connect to {host}:{port} ({exc})"


def _unreachable_reason(url: str) -> str | None:
    """Probe the host once per process so an offline run fails fast instead of waiting on client retries."""
    parsed = urllib.parse.urlsplit(url)
    if not parsed.hostname:
        return f"not a downloadable address: {url}"
    return _host_unreachable(parsed.hostname, parsed.port or (443 if parsed.scheme == "https" else 80))


def _download_url(url: str, sink: BinaryIO) -> None:
    request = urllib.request.Request(url, headers={"User-Agent": "benchaudit"})
    try:
        with urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT_S) as response:
            expected_length = response.headers.get("Content-Length")
            received = 0
            for block in iter(lambda: response.read(_CHUNK), b""):
                sink.write(block)
                received += len(block)
    except urllib.error.HTTPError as exc:
        raise DataUnavailableError(f"HTTP {exc.code} {exc.reason}", url=url) from exc
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DataUnavailableError(f"network unreachable or refused ({reason})", url=url) from exc
    if expected_length is not None and received != int(expected_length):
        raise DataUnavailableError(f"truncated download: {received} of {expected_length} bytes", url=url)


def _download_from_hub(upstream: HubFile, sink: BinaryIO, hub_download: Callable[..., str] | None) -> None:
    if hub_download is None:
        try:
            from huggingface_hub import hf_hub_download as hub_download
        except ImportError as exc:
            raise DataUnavailableError("huggingface_hub is not installed") from exc
    with tempfile.TemporaryDirectory(prefix="benchaudit-hub-") as scratch:
        try:
            local = hub_download(repo_id=upstream.repo_id, filename=upstream.path, revision=upstream.revision,
                                 repo_type=upstream.repo_type, local_dir=scratch)
        except Exception as exc:  # the hub client raises many network and HTTP error types
            raise DataUnavailableError(f"Hugging Face hub download failed: {type(exc).__name__}: {exc}") from exc
        with open(local, "rb") as downloaded:
            shutil.copyfileobj(downloaded, sink, _CHUNK)


def _origin_path(cached_path: Path) -> Path:
    return cached_path.with_name(f".{cached_path.name}.origin.json")


def _recorded_origin(cached_path: Path) -> str:
    try:
        origin = json.loads(_origin_path(cached_path).read_text(encoding="utf-8"))
        return f"verified cached copy, first taken from {origin['source']} {origin['location']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "verified cached copy"


def _package_resource(source: SourceFile) -> Path | None:
    assert source.package_copy is not None
    import importlib.util

    spec = importlib.util.find_spec(source.package_copy.package)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / source.package_copy.resource
        if candidate.is_file():
            return candidate
    return None


def _provenance(source: SourceFile, kind: SourceKind, location: object, sha256: str, note: str = "") -> Provenance:
    return Provenance(dataset=source.dataset, file=source.file, source=kind, location=str(location), sha256=sha256,
                      pinned=source.pinned, synthetic=source.synthetic, upstream=source.upstream_text(),
                      licence=source.licence, note=note)


def _unavailable(source: SourceFile, attempts: list[Attempt]) -> DataUnavailableError:
    tried = "\n".join(f"  - {attempt.place}: {attempt.outcome}" for attempt in attempts)
    message = (f"{source.key} is not available. Places tried:\n{tried}\n"
               f"To supply it, point AUDIT_MIRROR (or --mirror DIR) at a folder holding "
               f"{source.dataset}/{source.file}, or run `python -m audit_lib fetch {source.dataset}` online.")
    return DataUnavailableError(message, file=source.key, attempts=[(a.place, a.outcome) for a in attempts])


def _quarantine(path: Path) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    os.replace(path, target)
    return target
