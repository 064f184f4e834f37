"""Child processes of an isolated check forked from one that has loaded the engine already.

A child started afresh spends most of a second before its first case: Python, NumPy,
Hypothesis and scancheck imported, then Numba's typing set up for the oracle's first call.
The CPU tests start some fifty such children.  A zygote -- a process started once per parent,
with all of that done -- forks each child instead, which then runs
:mod:`~scancheck.isolation.child` as ``python -m`` would have, in a session of its own (so that
a hang's whole group can be killed), with the parent's environment and working directory of
the moment and its stderr in the file it is given.  The zygote never starts CUDA (a forked
child may); where it cannot start or dies, children start afresh.  ``SCANCHECK_NO_ZYGOTE=1``
turns it off.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
from typing import Any


def serve() -> None:
    """The zygote's loop: a JSON request a line on stdin (argv, env, cwd, stderr path) is a
    forked child, answered with its pid; each child that ends is told as its pid and exit
    code (negative: the signal that ended it).  It ends when stdin closes."""
    # What every child would load first: the engine, and the exact sums' first calls (which
    # set up Numba's typing, half a second a process).
    from ..engine import conformance  # noqa: F401
    from ..oracle.compiled import compile_oracles
    from . import child  # noqa: F401

    compile_oracles(0)
    out = sys.stdout
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    stdin = sys.stdin.fileno()
    buffered = b""
    live: set[int] = set()
    while True:
        ready, _, _ = select.select([stdin], [], [], 0.02)
        if ready:
            chunk = os.read(stdin, 1 << 16)
            if not chunk:  # the parent is gone (killed, say): so are the children it ran
                _kill(live)
                return
            buffered += chunk
            *lines, buffered = buffered.split(b"\n")
            for line in lines:
                pid = _fork(json.loads(line))
                live.add(pid)
                out.write(json.dumps({"pid": pid}) + "\n")
                out.flush()
        while True:  # every child that has ended, reaped and told
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            live.discard(pid)
            out.write(json.dumps({"exit": pid, "code": os.waitstatus_to_exitcode(status)}) + "\n")
            out.flush()


def _kill(pids: set[int]) -> None:
    """Kill each child's whole session (a hung target's subprocesses too)."""
    for pid in pids:
        for kill in (os.killpg, os.kill):  # killpg before the child's setsid has run fails
            try:
                kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _fork(request: dict[str, Any]) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.dup2(os.open(request["stderr"], os.O_WRONLY | os.O_APPEND), 2)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        # What python -P -m puts first on the path at start-up: PYTHONPATH's entries (a
        # parent may have set them after the zygote started).  The working directory is not
        # among them: a target's module is looked for there last (scancheck.targets.resolve).
        extra = [p for p in request["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
        sys.path[:0] = extra
        sys.argv = ["-m", *request["argv"]]
        from .child import main

        code = main(request["argv"])
    except SystemExit as exc:
        code = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


class Zygote:
    """The parent's end: :meth:`start` forks a child and returns a handle that polls,
    waits for and gives the exit code of that child, as :class:`subprocess.Popen` does."""

    def __init__(self) -> None:
        from .child import python_command

        self._proc = subprocess.Popen(python_command("scancheck.isolation.zygote"),
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self._lock = threading.Lock()  # one request at a time: its answer is the next pid
        self._ended = threading.Condition()
        self._codes: dict[int, int] = {}
        self._pids: list[int] = []
        self._pid_ready = threading.Condition()
        assert self._proc.stdout is not None
        if json.loads(self._proc.stdout.readline() or "{}").get("ready") is not True:
            raise OSError("the zygote did not start")
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            msg = json.loads(line)
            if "pid" in msg:
                with self._pid_ready:
                    self._pids.append(msg["pid"])
                    self._pid_ready.notify_all()
            else:
                with self._ended:
                    self._codes[msg["exit"]] = msg["code"]
                    self._ended.notify_all()
        with self._pid_ready, self._ended:  # the zygote is gone: nothing more will come
            self._pids.append(-1)
            self._pid_ready.notify_all()
            self._ended.notify_all()

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def start(self, argv: list[str], stderr: str) -> _Child:
        """Fork a child that runs ``python -m scancheck.isolation.child *argv``."""
        request = {"argv": argv, "stderr": stderr, "cwd": os.getcwd(), "env": dict(os.environ)}
        with self._lock:
            assert self._proc.stdin is not None
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
            with self._pid_ready:
                while not self._pids:
                    self._pid_ready.wait()
                pid = self._pids.pop(0)
        if pid < 0:
            raise OSError("the zygote ended")
        return _Child(self, pid)

    def _code(self, pid: int, timeout: float | None) -> int | None:
        with self._ended:
            if pid not in self._codes and timeout != 0:
                self._ended.wait_for(lambda: pid in self._codes or not self.alive, timeout)
            if pid not in self._codes and not self.alive:
                return -9  # its reaper is gone: the child is as good as lost
            return self._codes.get(pid)


class _Child:
    """A forked child, as much of :class:`subprocess.Popen` as the watcher uses."""

    def __init__(self, zygote: Zygote, pid: int) -> None:
        self._zygote, self.pid, self.returncode = zygote, pid, None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._zygote._code(self.pid, 0)
        return self.returncode

    def wait(self) -> int:
        while self.poll() is None:
            self.returncode = self._zygote._code(self.pid, 1.0)
        return self.returncode


_zygote: Zygote | None = None
_zygote_lock = threading.Lock()


def zygote() -> Zygote | None:
    """This process's zygote, started on first use; None where it is turned off or cannot
    start (children then start afresh)."""
    global _zygote
    if os.environ.get("SCANCHECK_NO_ZYGOTE"):
        return None
    with _zygote_lock:
        if _zygote is None or not _zygote.alive:
            try:
                _zygote = Zygote()
            except OSError:
                _zygote = None
        return _zygote


if __name__ == "__main__":
    serve()
