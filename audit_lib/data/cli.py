"""The `fetch` and `sources` subcommands: fill the data cache, and show every registered file's state."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from audit_lib import paths
from audit_lib.data.fetch import fetch_source, read_lock, sha256_of
from audit_lib.data.sources import DATASETS, REGISTRY, SourceFile, files_of
from audit_lib.errors import ChecksumMismatchError, CorruptFileError, DataError, UnknownSourceError


@dataclass(frozen=True)
class SourceState:
    """What is known locally about one registered file."""

    key: str
    pinned: bool
    cached: str
    mirrored: str
    upstream: str
    licence: str


def source_states(mirror: str | None = None) -> list[SourceState]:
    cache_root = paths.data_cache_dir()
    mirror_root = paths.mirror_dir(mirror)
    lock = read_lock(cache_root)
    states = []
    for source in REGISTRY.values():
        expected = source.sha256 or (lock.get(source.key) or {}).get("sha256")
        states.append(SourceState(
            key=source.key,
            pinned=source.pinned,
            cached=_copy_state(cache_root / source.dataset / source.file, expected),
            mirrored=_copy_state(mirror_root / source.dataset / source.file, expected) if mirror_root else "no mirror",
            upstream=source.upstream_text(),
            licence=source.licence,
        ))
    return states


def _copy_state(path: Path, expected: str | None) -> str:
    if not path.is_file():
        return "absent"
    if expected is None:
        return "present (unpinned, not yet locked)"
    return "verified" if sha256_of(path) == expected else "SHA256 MISMATCH"


def fetch_datasets(datasets: list[str], mirror: str | None, *, refresh: bool = False,
                   accept: tuple[str, ...] = ()) -> int:
    """Fetch every file of the named datasets (all when empty); print one line each; 1 when any is refused or missing.

    `refresh` re-resolves each file from the mirror or upstream instead of trusting the cache; `accept` names
    unpinned files (`<dataset>/<file>`) whose new upstream copy replaces the hash recorded in lock.json.
    """
    chosen: list[SourceFile] = []
    if accept:
        by_key = {source.key: source for dataset in DATASETS for source in files_of(dataset)}
        unknown = [key for key in accept if key not in by_key]
        if unknown:
            raise UnknownSourceError(f"--accept {', '.join(unknown)}: not registered files "
                                     "(see `python -m audit_lib sources`)", file=unknown[0])
        chosen = [by_key[key] for key in accept]
    for dataset in ([] if accept else datasets or list(DATASETS)):
        chosen.extend(files_of(dataset))
    refused = missing = 0
    for source in chosen:
        try:
            fetched = fetch_source(source, mirror=mirror, refresh=refresh, accept_new=source.key in accept)
        except (ChecksumMismatchError, CorruptFileError) as exc:
            refused += 1
            print(f"REFUSED  {source.key}\n{_indent(str(exc))}", file=sys.stderr)
            continue
        except DataError as exc:
            missing += 1
            print(f"MISSING  {source.key}\n{_indent(str(exc))}", file=sys.stderr)
            continue
        origin = fetched.provenance
        print(f"ok       {source.key}  ({origin.source}, sha256 {origin.sha256[:12]}, "
              f"{'pinned' if origin.pinned else 'unpinned'})")
    failed = f" ({refused} refused, {missing} missing: see above)" if refused or missing else ""
    print(f"{len(chosen) - refused - missing} of {len(chosen)} files in {paths.data_cache_dir()}{failed}")
    return 1 if refused or missing else 0


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def _run_fetch(args: argparse.Namespace) -> int:
    try:
        return fetch_datasets(list(args.datasets), args.mirror, refresh=args.refresh, accept=tuple(args.accept))
    except UnknownSourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _run_sources(args: argparse.Namespace) -> int:
    states = source_states(args.mirror)
    header = f"{'file':<62} {'pin':<8} {'cache':<12} {'mirror':<12} upstream"
    print(header)
    for state in states:
        print(f"{state.key:<62} {'pinned' if state.pinned else 'unpinned':<8} {state.cached:<12} "
              f"{state.mirrored:<12} {state.upstream}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    fetch_parser = subparsers.add_parser("fetch", help="fill data_cache/ with verified copies of registered files")
    fetch_parser.add_argument("datasets", nargs="*", help=f"datasets to fetch (default: all of {', '.join(DATASETS)})")
    fetch_parser.add_argument("--mirror", help="a local mirror folder laid out as <dataset>/<file>")
    fetch_parser.add_argument("--refresh", action="store_true",
                              help="re-resolve from the mirror or upstream instead of the cached copy; an unpinned "
                                   "file whose new copy differs from lock.json is shown with both hashes")
    fetch_parser.add_argument("--accept", action="append", default=[], metavar="DATASET/FILE",
                              help="accept the new upstream copy of an unpinned file (replaces its lock.json hash)")
    fetch_parser.set_defaults(func=_run_fetch)

    sources_parser = subparsers.add_parser("sources", help="print the registry with each file's local state")
    sources_parser.add_argument("--mirror", help="a local mirror folder laid out as <dataset>/<file>")
    sources_parser.set_defaults(func=_run_sources)
