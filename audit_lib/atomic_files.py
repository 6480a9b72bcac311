"""Write a file so that readers see the old content or the new, never a half-written file."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

SHARED_FILE_MODE = 0o644  # temporary files are created 0600; caches and reports are meant to be read by others


@contextlib.contextmanager
def atomic_output(target: str | os.PathLike[str], mode: str = "wb", *, durable: bool = True,
                  **open_kwargs: Any) -> Iterator[IO[Any]]:
    """Yield a temporary file beside `target`; on success fsync it and rename it into place, else delete it.

    `durable=False` skips the fsync, for a cache whose reader takes a damaged entry for a miss: after a crash the
    renamed file may be empty, never half of another write."""
    target_path = Path(target)
    target_path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temp_name = tempfile.mkstemp(dir=target_path.parent, prefix=f".{target_path.name}.", suffix=".part")
    try:
        with open(descriptor, mode, **open_kwargs) as handle:
            yield handle
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(temp_name, SHARED_FILE_MODE)
        os.replace(temp_name, target_path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


def atomic_write_text(target: str | os.PathLike[str], text: str) -> None:
    with atomic_output(target, "w", encoding="utf-8") as handle:
        handle.write(text)


def atomic_write_bytes(target: str | os.PathLike[str], payload: bytes, *, durable: bool = True) -> None:
    with atomic_output(target, durable=durable) as handle:
        handle.write(payload)
