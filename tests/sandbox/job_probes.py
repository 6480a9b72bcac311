"""Probes shared by the sandbox isolation tests: a memory scanner run inside a job, host process listings."""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

# Scans every readable mapping of its own process for MARKER followed by 32 hex digits and returns the digits.
# The needle is assembled at run time, so the job's own source holds no complete marker + digits.
# (ctypes, not /proc/self/mem: a job is not dumpable, so its own /proc entries belong to root.)
MEMORY_SCANNER = textwrap.dedent("""
    import ctypes, re
    def scan(prefix):
        needle = (prefix + "-LEAK-").encode()
        found = set()
        with open("/proc/self/maps") as maps:
            regions = [line.split() for line in maps]
        for fields in regions:
            name = fields[5] if len(fields) > 5 else ""
            if not fields[1].startswith("r") or name.startswith("[v") or name.startswith("/dev/"):
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            data = ctypes.string_at(start, end - start)
            for match in re.finditer(re.escape(needle) + rb"([0-9a-f]{32})", data):
                found.add(match.group(1).decode())
        return sorted(found)
""")


def marked_processes(marker: str) -> list[int]:
    """Host pids of live processes whose command line carries `marker`."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and marker.encode() in Path(f"/proc/{entry}/cmdline").read_bytes() \
                    and "Zombie" not in Path(f"/proc/{entry}/status").read_text():
                found.append(int(entry))
        except OSError:
            continue
    return found


def wait_until_gone(marker: str, seconds: float = 5.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (alive := marked_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive
