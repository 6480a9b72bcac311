"""The pristine template and the job cells it starts (stdlib only).

The zygote starts the template (fork, then exec of a fresh `python -I -S`: `TEMPLATE_BOOTSTRAP`) before it reads any
request, so no request data ever enters the template's memory, nor the zygote's own modules. The template imports
the harness and the preloaded modules, runs the harness once on fixed data (`warm_up`), joins the zygote's job cgroups (so every job process is born inside the job's limits;
the zygote sets them before each job), enters the jail (`jail.build_and_enter`) and then only answers requests
for a new **cell** (`cell_init`), on a socket:

  leader (unshares a PID and a mount namespace, waits for the init)
    -> init (PID 1 of the cell's namespace; see `cell_init`: serves jobs one after another, a fresh worker forked
             from it per job, and kills and reaps everything else in its namespace after each)

The zygote gets its own end of a socket to the cell's init (SCM_RIGHTS) and the init's pid, and from then on talks
to the init directly. Each of these processes dies with its parent (PR_SET_PDEATHSIG), so when the zygote dies, or
the pool kills it, the template, leaders, inits and with them every process of every cell die too, whatever
sessions they made.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import sys
import time

from audit_lib.sandbox.zygote import jail, seccomp
from audit_lib.sandbox.zygote.cell_init import serve_jobs
from audit_lib.sandbox.zygote.protocol import PRELOADED_MODULES, report_exception

PR_SET_PDEATHSIG = 1
CLONE_NEWPID = 0x20000000
CELL_REQUEST = b"cell"
OOM_SCORE_ADJ_MIN = -1000
_libc = ctypes.CDLL(None, use_errno=True)


def shield_from_oom_killer() -> None:
    """Root: this process and every sandbox process forked from it (leaders, inits) are never the OOM killer's
    victim; each worker makes itself its first choice again (`child.prefer_as_oom_victim`).

    The template and the inits sit in the job's memory cgroup (every job process is born there), where memory a job
    holds in no process (tmpfs files, socket buffers) can leave them the largest tasks: the kernel would kill the
    template instead of the job, and the job would come back `harness_error`. Not root, lowering the score is not
    allowed (and there is no memory cgroup): the workers still raise theirs."""
    try:
        with open("/proc/self/oom_score_adj", "w") as handle:
            handle.write(str(OOM_SCORE_ADJ_MIN))
    except OSError:
        pass


def die_with_parent(expected_parent: int | None) -> None:
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if expected_parent is not None and os.getppid() != expected_parent:
        os._exit(1)  # the parent died before the death signal was armed


# The template's own interpreter: a fresh `python -I -S`, not a fork of the zygote, so it holds only what a job's
# worker needs (the harness modules and the preloaded ones), never the zygote's own modules and heap, nor site's.
# Each job forks it (through its cell's init): measured, a smaller process forks and exits in half the CPU time.
TEMPLATE_BOOTSTRAP = ("import json, sys, types\n"
                      "config = json.loads(sys.argv[1])\n"
                      "sys.path[:] = config['sys_path']\n"
                      "for name in ('audit_lib', 'audit_lib.sandbox'):\n"
                      "    module = types.ModuleType(name)\n"
                      "    module.__path__ = [config['package_parent'] + '/' + name.replace('.', '/')]\n"
                      "    sys.modules[name] = module\n"
                      "from audit_lib.sandbox.zygote.template import run_template\n"
                      "run_template(config)\n")


def start(jail_dir: str | None, keep_fds: tuple[int, ...], setup: dict) -> tuple[int, socket.socket]:
    """Start the template (fork, then exec a fresh interpreter); returns its pid and the zygote's end of its socket
    once it is ready."""
    zygote_end, template_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    config = {"jail_dir": jail_dir, "keep_fds": list(keep_fds), "sock_fd": template_end.fileno(), "setup": setup,
              "zygote_pid": os.getpid(), "package_parent": setup["package_parent"],
              "sys_path": [path for path in sys.path if path != setup["package_parent"] and os.path.isabs(path)],
              "interpreter_dirs": jail.python_dirs()}
    argv = [sys.executable, "-I", "-S", "-c", TEMPLATE_BOOTSTRAP, json.dumps(config)]
    pid = os.fork()
    if pid == 0:
        try:
            die_with_parent(config["zygote_pid"])  # kept across the exec
            zygote_end.close()
            keep = {template_end.fileno(), 2, *keep_fds}
            for fd in _open_fds():
                if fd not in keep:
                    try:
                        os.close(fd)
                    except OSError:  # the listing's own descriptor
                        pass
            for fd in keep:
                os.set_inheritable(fd, True)
            os.execv(argv[0], argv)
        except BaseException as exc:  # noqa: BLE001 - reported to the zygote, which fails loudly
            _send_failure(template_end, exc)
        finally:
            os._exit(1)
    template_end.close()
    answer = zygote_end.recv(4096)
    if answer != b"ready":
        raise RuntimeError(f"sandbox template: {answer.decode(errors='replace') or 'exited'}")
    return pid, zygote_end


def run_template(config: dict) -> None:
    """The template's life, in its fresh interpreter: preload, join the job cgroups, enter the jail, serve cells."""
    template_end = socket.socket(fileno=config["sock_fd"])
    status = 1
    try:
        die_with_parent(config["zygote_pid"])
        shield_from_oom_killer()
        _complete_builtins()
        for name in PRELOADED_MODULES:
            try:
                __import__(name)
            except ImportError:
                pass
        # Imported here, before the jail hides the project: nothing of the harness is imported after it (and not in
        # the zygote, which never runs a worker).
        from audit_lib.sandbox.zygote.child import worker_main  # noqa: PLC0415
        from audit_lib.sandbox.zygote.warm_up import warm_up  # noqa: PLC0415

        warm_up()
        for fd in config["keep_fds"]:  # into the job cgroups once: a migration per job costs an RCU grace period
            os.write(fd, b"0")
            os.close(fd)
        if config["jail_dir"] is not None:
            jail.build_and_enter(config["jail_dir"], config["interpreter_dirs"])
        # Once here, not per job: every cell and job process inherits the one filter (compiling and freeing a
        # filter per worker cost about 0.7 ms of CPU per job); none of the sandbox's own processes makes the calls.
        # Not root: no job cgroup counts the job's CPU, and each worker makes its own user namespace.
        root = bool(config["keep_fds"])
        seccomp.install(refuse_sigchld=not root, refuse_user_namespaces=root)
        template_end.send(b"ready")
        _serve(template_end, config["setup"], worker_main)
        status = 0
    except BaseException as exc:  # noqa: BLE001 - reported to the zygote, which fails loudly
        _send_failure(template_end, exc)
    finally:
        os._exit(status)


def _complete_builtins() -> None:
    """What `site` adds to builtins, which `-S` leaves out and code under test uses (`exit()`, `quit()`, `help`,
    `copyright`, `credits`, `license`), as `python -I` has them."""
    import site  # noqa: PLC0415 - under -S importing site runs nothing; its helpers are called here

    site.setquit()
    site.setcopyright()
    site.sethelper()


def _open_fds() -> list[int]:
    return [int(name) for name in os.listdir("/proc/self/fd") if int(name) > 2]


def _serve(sock: socket.socket, setup: dict, worker) -> None:
    """Answer each cell request with its init's and leader's pids and a socket.

    Answer each cell request with `C <init pid> <leader pid>` and the zygote's end of the cell's socket (or `failed:
    ...`).

    The template sits in the job's memory cgroup (so every job process is born there), which a job can leave full (tmpfs
    files) until its cell is gone: a MemoryError here fails that one request (the zygote retries), never the template.
    """
    while True:
        try:
            request = sock.recv(64)
        except MemoryError:  # nothing was read yet
            time.sleep(0.05)
            continue
        if not request:
            return  # the zygote is gone
        try:
            _reap_finished()
            if request != CELL_REQUEST:
                sock.send(b"failed: unknown request")
                continue
            init_pid, leader_pid, zygote_end = _start_cell(setup, worker)
        except (OSError, RuntimeError, MemoryError) as exc:  # a dying cell still fills the pids or memory limit
            _send_failure(sock, exc)
            continue
        try:
            socket.send_fds(sock, [f"C {init_pid} {leader_pid}".encode()], [zygote_end.fileno()])
        finally:
            zygote_end.close()


def _send_failure(sock: socket.socket, exc: BaseException) -> None:
    """`failed: <type>: <message>` to the zygote; a full job cgroup is waited out, a closed socket ignored."""
    for _attempt in range(100):
        try:
            sock.send(f"failed: {type(exc).__name__}: {exc}".encode()[:4000])
            return
        except MemoryError:
            time.sleep(0.05)
        except OSError:
            return


def _start_cell(setup: dict, worker) -> tuple[int, int, socket.socket]:
    """Fork a cell's leader and init (pids returned); the init holds no job data and waits for jobs on its socket."""
    zygote_end, init_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid_r, pid_w = os.pipe()
    template_pid = os.getpid()
    leader = os.fork()
    if leader == 0:
        try:
            zygote_end.close()
            os.close(pid_r)
            _leader(template_pid, init_end, pid_w, lambda: serve_jobs(init_end, setup, worker))
        except BaseException:  # noqa: BLE001 - the template sees no init pid and fails loudly
            report_exception(2)
        finally:
            os._exit(1)
    init_end.close()
    os.close(pid_w)
    answer = os.read(pid_r, 64)
    os.close(pid_r)
    if not answer:
        zygote_end.close()
        raise RuntimeError("the sandbox template could not start a job cell")
    return int(answer), leader, zygote_end


def _reap_finished() -> None:
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _leader(template_pid: int, init_end: socket.socket, pid_w: int, init_main) -> None:
    die_with_parent(template_pid)
    jail.unshare(CLONE_NEWPID | jail.CLONE_NEWNS)
    pid = os.fork()
    if pid == 0:
        try:
            os.close(pid_w)
            _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the leader is outside its namespace: ppid 0
            init_main()
        except BaseException:  # noqa: BLE001
            report_exception(2)
        finally:
            os._exit(1)
    init_end.close()
    os.write(pid_w, str(pid).encode())
    os.close(pid_w)
    os.waitpid(pid, 0)
    os._exit(0)
