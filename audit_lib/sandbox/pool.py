"""Parent side of the sandbox: start, talk to and recycle warmed zygote processes (one per concurrent caller)."""

from __future__ import annotations

import atexit
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from audit_lib.errors import SandboxHarnessError
from audit_lib.sandbox.zygote import protocol

PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent.parent)
# The zygote imports only its own package and the codec: stub parents keep `audit_lib/__init__` and the sandbox's
# public face (which imports this pool) from running in it.
BOOTSTRAP = ("import sys, types\n"
             "for name in ('audit_lib', 'audit_lib.sandbox'):\n"
             "    module = types.ModuleType(name)\n"
             "    module.__path__ = [sys.argv[1] + '/' + name.replace('.', '/')]\n"
             "    sys.modules[name] = module\n"
             "from audit_lib.sandbox.zygote.main import main\n"
             "main()\n")
# Dedicated uids for sandboxed jobs when the parent is root; each zygote holds one by an flock in UID_LOCK_DIR.
UID_BASE = 2_000_000_000
UID_COUNT = 4096
UID_LOCK_DIR = "/run/benchaudit-sandbox-uids" if os.path.isdir("/run") else "/tmp/benchaudit-sandbox-uids"
ZYGOTE_ENV = {"PATH": protocol.SAFE_PATH, "LANG": "C.UTF-8"}
STARTUP_TIMEOUT_S = 30.0


def _is_root() -> bool:
    return os.geteuid() == 0


_unshare_probe: bool | None = None


def _unshare_rn_works() -> bool:
    """Whether `unshare -rn` (user + network namespace, no privileges) works here; probed once."""
    global _unshare_probe
    if _unshare_probe is None:
        tool = shutil.which("unshare")
        try:
            _unshare_probe = bool(tool) and subprocess.run(
                [tool, "-rn", "true"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, timeout=10).returncode == 0
        except (OSError, subprocess.SubprocessError):
            _unshare_probe = False
    return _unshare_probe


class Zygote:
    """One warmed zygote process; used by one caller at a time."""

    def __init__(self, network_isolation: bool) -> None:
        root = _is_root()
        command = [sys.executable, "-I", "-c", BOOTSTRAP, PACKAGE_PARENT]
        # Not root: a user namespace (where the zygote may build the jobs' namespaces), and a network one if asked.
        wrapped = not root and _unshare_rn_works()
        if wrapped:
            command = [shutil.which("unshare") or "unshare", "-rn" if network_isolation else "-r", *command]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=ZYGOTE_ENV, cwd="/", close_fds=True, start_new_session=True)
        self.network_isolation = network_isolation
        config = {
            "package_parent": PACKAGE_PARENT, "drop_uid": root, "uid_base": UID_BASE, "uid_count": UID_COUNT,
            "uid_lock_dir": UID_LOCK_DIR, "network_isolation": network_isolation, "already_unshared": wrapped,
            "parent_netns": os.stat("/proc/self/ns/net").st_ino, "tmp_root": tempfile.gettempdir(),
        }
        try:
            hello, _ = self.request(config, STARTUP_TIMEOUT_S)
        except SandboxHarnessError:
            self.close()
            raise
        if not hello.get("ok"):
            self.close()
            raise SandboxHarnessError(f"sandbox zygote failed to start: {hello.get('error', '?')[-2000:]}")
        self.uid: int | None = hello["uid"]
        self.network_isolated: bool = bool(hello["network_isolated"])

    def request(self, header: dict, timeout_s: float, sealed: dict | None = None) -> tuple[dict, bytes]:
        """Send one request and wait for its answer; a zygote that does not answer in time is killed.

        `sealed` follows the request as a message the zygote does not read itself: a call job's judge spec, which the
        zygote writes unread into the judge's memfd (`zygote.call_judging`).
        """
        try:
            if sealed is not None:
                header = {**header, "sealed_follows": True}
            protocol.write_frames(self.process.stdin.fileno(), header)
            if sealed is not None:
                protocol.write_frames(self.process.stdin.fileno(), sealed)
            return self._read_message(time.monotonic() + timeout_s)
        except (OSError, EOFError, ValueError) as exc:
            self.close()
            raise SandboxHarnessError(f"sandbox zygote failed: {type(exc).__name__}: {exc}") from exc

    def _read_message(self, deadline: float) -> tuple[dict, bytes]:
        import json  # noqa: PLC0415

        fd = self.process.stdout.fileno()
        header = json.loads(self._read_frame(fd, deadline))
        blob = self._read_frame(fd, deadline)
        if "harness_error" in header:
            raise SandboxHarnessError(f"sandbox zygote error: {header['harness_error'][-3000:]}")
        return header, blob

    def _read_frame(self, fd: int, deadline: float) -> bytes:
        size_bytes = self._read_exact(fd, protocol.FRAME_HEADER.size, deadline)
        (size,) = protocol.FRAME_HEADER.unpack(size_bytes)
        return self._read_exact(fd, size, deadline)

    def _read_exact(self, fd: int, size: int, deadline: float) -> bytes:
        chunks: list[bytes] = []
        while size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise OSError("sandbox zygote did not answer in time")
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, min(size, 1 << 20))
            if not chunk:
                raise EOFError("sandbox zygote exited")
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        """Stop the zygote (closing its request pipe ends it; kill as a backstop)."""
        try:
            if self.process.stdin:
                self.process.stdin.close()
            self.process.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.process.pid, 9)
            except OSError:
                pass
            self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()


class ZygotePool:
    """Idle zygotes kept warm, keyed by network isolation; a fresh pool after `fork()`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[bool, list[Zygote]] = {}
        self._pid = os.getpid()

    def acquire(self, network_isolation: bool) -> Zygote:
        with self._lock:
            if self._pid != os.getpid():  # inherited through fork: those zygotes belong to the parent
                self._idle, self._pid = {}, os.getpid()
            idle = self._idle.setdefault(network_isolation, [])
            while idle:
                zygote = idle.pop()
                if zygote.alive():
                    return zygote
        return Zygote(network_isolation)

    def release(self, zygote: Zygote) -> None:
        if not zygote.alive():
            return
        with self._lock:
            if self._pid == os.getpid():
                self._idle.setdefault(zygote.network_isolation, []).append(zygote)
                return
        zygote.close()

    def shutdown(self) -> None:
        with self._lock:
            zygotes = [z for group in self._idle.values() for z in group] if self._pid == os.getpid() else []
            self._idle = {}
        for zygote in zygotes:
            zygote.close()


POOL = ZygotePool()
atexit.register(POOL.shutdown)


def request(header: dict, timeout_s: float, *, network_isolation: bool,
            sealed: dict | None = None) -> tuple[dict, bytes, bool]:
    """Run one request on a pooled zygote: (answer header, blob, whether the network was isolated)."""
    zygote = POOL.acquire(network_isolation)
    try:
        answer, blob = zygote.request(header, timeout_s, sealed)
    except SandboxHarnessError:
        zygote.close()
        raise
    POOL.release(zygote)
    return answer, blob, zygote.network_isolated
