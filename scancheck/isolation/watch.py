"""Watching a child process: its JSON events read as they come, the child killed with its
whole process group where one call of the target runs past the timeout or nothing happens
for long, a call past the timeout told slow (not hung) where the calls before it predict
that time, and how it died in its own words.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .child import python_command

#: A call that runs past the timeout at this many elements or fewer is a hang, whatever the
#: calls before it took: no scan needs a minute for a thousand elements.
SMALL_N = 1024



#: The calls a slow call's time is predicted from lie within this factor below its n.
NEAR = 8

#: A call past the timeout whose process grew by this many resident bytes meanwhile, and by
#: half as many in the half timeout of grace the watcher then gives it, was allocating as it
#: went, not stuck in a loop: a hang (a spin on a flag, a wait that never ends) holds its
#: memory still at the end.
GROWING = 128 * 2**20


@dataclass(frozen=True)
class Memory:
    """A watched child's resident memory in bytes, as read from ``/proc`` every poll while it
    ran: its peak, its last reading, the last reading before its last call of the target
    began and the last one at least half a timeout before the end of that call (each None
    where no call began), the memory it may take (the machine's, or its container's limit;
    None where unknown); and the signal that ended it where the watcher did not (None where
    it ended otherwise)."""

    peak: int
    last: int
    at_call: int | None
    mid_call: int | None
    machine: int | None
    signal: int | None = None

    @staticmethod
    def of(events: list[dict]) -> Memory | None:
        """The readings :func:`watch` appended to ``events``, or None where it took none."""
        ev = next((e for e in reversed(events) if e["event"] == "memory"), None)
        return None if ev is None else Memory(ev["peak"], ev["last"], ev["at call"],
                                              ev["mid call"], ev["machine"], ev.get("signal"))

    @property
    def killed_from_outside(self) -> bool:
        """Whether a SIGKILL the watcher did not send ended it (most often the kernel's, out
        of memory)."""
        return self.signal == signal.SIGKILL

    def grew_in_call(self) -> int:
        """Bytes the child grew by since its last call began (0 where no call began)."""
        return 0 if self.at_call is None else max(0, self.last - self.at_call)

    def grew_late(self) -> int:
        """Bytes the child grew by in the last half timeout of its last call, the grace
        where it had one (0 where no call began): a call that allocated once, then spun,
        grew early only."""
        return 0 if self.mid_call is None else max(0, self.last - self.mid_call)

    def told(self) -> str:
        """The peak, and the machine's memory beside it where known."""
        whole = f" of the {gib(self.machine)} this machine allows" if self.machine else ""
        return f"{gib(self.peak)} resident at its peak{whole}"


def gib(nbytes: int) -> str:
    """``nbytes`` in GiB, or in MiB below one GiB."""
    return f"{nbytes / 2**30:.1f} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:.0f} MiB"


def resident(pid: int) -> int | None:
    """Resident bytes of process ``pid`` (None where ``/proc`` does not say: not Linux, or
    the process is gone)."""
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


#: Where a Linux container's memory limit is read (cgroup v2, then v1).
CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def machine_memory() -> int | None:
    """The memory this process's children may take, in bytes: the machine's physical memory,
    or its container's limit where that is less; None where the OS does not say."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError, AttributeError):
        return None
    for path in CGROUP_LIMITS:
        try:
            with open(path) as fh:
                text = fh.read().strip()
        except OSError:
            continue
        if text.isdigit():
            return min(total, int(text))
    return total



@dataclass(frozen=True)
class SlowCall:
    """A call that ran past the timeout at ``n`` elements where the growth of the calls
    before it predicts that: the two it is predicted from, as (n, seconds) (the larger
    first), and the seconds predicted."""

    n: int
    larger: tuple[int, float]
    smaller: tuple[int, float]
    predicted: float

    def told(self, timeout: float, flag: str = "--timeout") -> str:
        """What happened, and the timeout (set by ``flag``) that would let the call finish."""
        (m2, d2), (m1, d1) = self.larger, self.smaller
        give = math.ceil(max(2 * timeout, 2 * self.predicted))
        return (f"a call at n = {self.n:,} ran past the {timeout:g} s timeout, where the calls "
                f"at n = {m2:,} and {m1:,} took {d2:.3g} s and {d1:.3g} s: at that growth it "
                f"takes about {self.predicted:.3g} s, slow, not hung; give {flag} {give} for "
                f"a verdict there")



def slow_call(events: list[dict], timeout: float) -> SlowCall | None:
    """The call a child was in when it was killed for running past ``timeout``, where its
    finished calls predict that time: the largest of them at most ``n`` (and at least
    n/:data:`NEAR`) and the largest below two thirds of that, their growth taken as n**a
    with a between 1 and 3, give at least half the timeout at ``n``.  None where it was in
    no call, at :data:`SMALL_N` elements or fewer, or the calls before it were fast: a hang."""
    open_call: tuple[int, float] | None = None
    took: dict[int, float] = {}
    for ev in events:
        if ev["event"] == "call" and "t" in ev:
            open_call = (int(ev["n"]), float(ev["t"]))
        elif ev["event"] == "return" and open_call is not None and "t" in ev:
            m, start = open_call
            took[m] = max(took.get(m, 0.0), float(ev["t"]) - start)
            open_call = None
    if open_call is None or open_call[0] <= SMALL_N:
        return None
    n = open_call[0]
    near = sorted(m for m in took if n / NEAR <= m <= n)
    if not near:
        return None
    m2 = near[-1]
    below = [m for m in near if 3 * m <= 2 * m2]
    if not below:
        return None
    m1 = below[-1]
    d2, d1 = took[m2], took[m1]
    if d2 <= 0 or d1 <= 0:
        return None
    growth = min(3.0, max(1.0, math.log(d2 / d1) / math.log(m2 / m1)))
    predicted = d2 * (n / m2) ** growth
    if 2 * predicted < timeout:
        return None
    return SlowCall(n, (m2, d2), (m1, d1), predicted)



@dataclass(frozen=True)
class GrowingCall:
    """A call that ran past the timeout at ``n`` elements while its process's resident
    memory grew by :data:`GROWING` or more."""

    n: int
    memory: Memory

    def told(self, timeout: float, flag: str = "--timeout") -> str:
        """What happened, and the timeout (set by ``flag``) that would give a verdict there."""
        grown = self.memory.grew_in_call()
        return (f"a call at n = {self.n:,} ran past the {timeout:g} s timeout, its memory "
                f"growing by {gib(grown)} meanwhile (to {gib(self.memory.last)}): a call that "
                f"allocates as it goes, slow or short of memory, not one stuck in a loop; give "
                f"{flag} {math.ceil(4 * timeout)} for a verdict there")


def growing_call(events: list[dict]) -> GrowingCall | None:
    """The call a child killed for running past the timeout was in, where its memory grew
    by :data:`GROWING` or more since that call began and by half that in the call's last
    half timeout (the grace :func:`watch` gives a call still growing at the timeout), still
    growing as it was killed; None where it was in no call, at
    :data:`SMALL_N` elements or fewer, or held its memory at the end (a hang, also one that
    allocated its buffers first)."""
    memory = Memory.of(events)
    call = next((ev for ev in reversed(events) if ev["event"] in ("call", "return")), None)
    if memory is None or call is None or call["event"] != "call" or call["n"] <= SMALL_N:
        return None
    if memory.grew_in_call() < GROWING or 2 * memory.grew_late() < GROWING:
        return None
    return GrowingCall(int(call["n"]), memory)


def largest_returned(events: list[dict], prop: str) -> int:
    """The largest n of a call that returned since ``prop`` started in a child's events."""
    start = max((i for i, ev in enumerate(events)
                 if ev["event"] == "start" and ev.get("property") == prop), default=0)
    return max((int(ev["n"]) for ev in events[start:] if ev["event"] == "return"), default=0)



def quiet_limit(timeout: float) -> float:
    """Seconds a child may give no sign of life (no event at all) before it is taken for
    hung: ten call timeouts, and two minutes at least for a start-up that imports much."""
    return max(10 * timeout, 120.0)


def watch(cmd: list[str], timeout: float, on_event: Callable[[dict], None] | None = None,
           fork: bool = False) -> tuple[list[dict], str, str]:
    """Run a child that writes JSON events to the file ``{out}`` stands for (each handed to
    ``on_event`` as it comes), and kill its
    whole process group where it hangs: when one call of the target's own code (between its
    "call" and "return" events) runs ``timeout`` seconds (half a timeout more, once, where
    its memory grew by half :data:`GROWING` in the last half), or when nothing at all happens for
    ten times that (start-up gets at least two minutes).  Returns the events, with the
    child's resident memory read as it ran appended as one event "memory"
    (:meth:`Memory.of` reads it), "ok" / "died (...)" / "timeout", and the child's stderr.
    ``fork``: a child of :mod:`scancheck.isolation.child` is forked from this process's
    zygote where it has one."""
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl", delete=False) as fh:
        path = fh.name
    cmd = [path if c == "{out}" else c for c in cmd]
    events: list[dict] = []
    quiet = quiet_limit(timeout)
    since, limit = time.time(), quiet
    rss: dict[str, int | None] = {"peak": None, "last": None, "at call": None}
    in_call: list[tuple[float, int]] = []  # (time, reading) since the last call began
    # (time, reading) where a call past the timeout, its memory still growing, was given
    # half a timeout more: a hang's last allocation is done by its end (on a loaded machine
    # it may still be paging in at the timeout), a call that allocates as it goes is not.
    grace: tuple[float, int] | None = None
    with tempfile.NamedTemporaryFile("w+", suffix=".err") as err:
        proc = start_child(cmd, err, fork)
        with open(path) as progress:

            pending = ""

            def read() -> None:
                nonlocal since, limit, pending, grace
                # The child may be half-way through a line: parse whole lines only.
                *lines, pending = (pending + progress.read()).split("\n")
                for line in lines:
                    events.append(json.loads(line))
                    if on_event is not None:
                        on_event(events[-1])
                    since = time.time()
                    limit = timeout if events[-1]["event"] == "call" else quiet
                    if events[-1]["event"] == "call":
                        rss["at call"] = rss["last"]
                        in_call.clear()
                        grace = None

            status = "ok"
            while True:
                now = resident(proc.pid)
                if now:  # a process that has ended reads 0 until it is reaped
                    rss["last"], rss["peak"] = now, max(now, rss["peak"] or 0)
                    in_call.append((time.time(), now))
                read()
                if proc.poll() is not None:
                    if proc.returncode != 0:
                        status = f"died ({exit_text(proc.returncode)})"
                    break
                if time.time() - since > limit:
                    if grace is None and limit == timeout and rss["at call"] is not None \
                            and in_call and 2 * _grew_since(in_call, timeout / 2) >= GROWING:
                        grace = in_call[-1]
                        limit += timeout / 2
                        continue
                    os.killpg(proc.pid, signal.SIGKILL)  # the whole group: a hung kernel's process included
                    proc.wait()
                    status = "timeout"
                    break
                time.sleep(0.05)
            read()
        err.seek(0)
        stderr = err.read()
    os.unlink(path)
    if rss["peak"] is not None:
        died_of = (-proc.returncode if status != "timeout" and proc.returncode is not None
                   and proc.returncode < 0 else None)  # a signal the watcher did not send
        mid = None
        if grace is not None:
            mid = grace[1]  # the late growth is what came in the grace
        elif rss["at call"] is not None and in_call:
            mid = _reading_before(in_call, timeout / 2, rss["at call"])
        events.append({"event": "memory", "peak": rss["peak"], "last": rss["last"],
                       "at call": rss["at call"], "mid call": mid,
                       "machine": machine_memory(), "signal": died_of})
    return events, status, stderr



def _reading_before(readings: list[tuple[float, int]], seconds: float, first: int) -> int:
    """The last of ``readings`` (time, resident bytes) at least ``seconds`` older than the
    last one, or ``first`` where none is."""
    at = readings[-1][0] - seconds
    return next((r for t, r in reversed(readings) if t <= at), first)


def _grew_since(readings: list[tuple[float, int]], seconds: float) -> int:
    """Bytes the last of ``readings`` holds past the one ``seconds`` before it (the first
    one where none is)."""
    return max(0, readings[-1][1] - _reading_before(readings, seconds, readings[0][1]))


def start_child(cmd: list[str], err: Any, fork: bool) -> Any:
    """The child of ``cmd``, in a session of its own, its stderr in ``err``: forked from the
    zygote where ``fork`` asks for it and it runs :mod:`scancheck.isolation.child`."""
    child = python_command("scancheck.isolation.child")
    if fork and cmd[:len(child)] == child:
        from .zygote import zygote

        z = zygote()
        if z is not None:
            try:
                return z.start(cmd[len(child):], err.name)
            except OSError:  # it died meanwhile: this child starts afresh
                pass
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, text=True,
                            start_new_session=True)



def exit_text(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"



#: How Python reports an exception its ``sys.excepthook`` raised on: this header, the hook's
#: traceback, then :data:`_ORIGINAL` and the exception the process died of.  A process killed
#: while the hook runs (out of memory, say) leaves the header alone.
_HOOK_FAILED = "Error in sys.excepthook"
_ORIGINAL = "Original exception was:"


def fault_message(stderr: str, status: str = "") -> str:
    """The runtime's own words where it left any (an illegal address, say), else how it died.
    Where Python's excepthook itself failed, its block is left out: the words come from what
    the process said before it, or from the original exception after it, never the hook's."""
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    hook = next((i for i, ln in enumerate(lines) if ln.startswith(_HOOK_FAILED)), None)
    if hook is not None:
        last = len(lines) - lines[::-1].index(_ORIGINAL) if _ORIGINAL in lines else 0
        lines = lines[:hook] + (lines[last:] if last > hook else [])
    keys = ("Error", "error", "illegal", "fault", "Killed", "Segmentation")
    hits = [ln for ln in lines if any(k in ln for k in keys)]
    died = status.replace("died", "the process died").strip() or "the process died"
    if status == "ok":  # it ended well, yet before its checks did: something in it quit
        died = ("the process exited with status 0 before its checks ended (does the target "
                "call sys.exit or os._exit?)")
    return (hits[-1] if hits else died)[:400]
