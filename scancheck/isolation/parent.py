"""Targets in child processes: a fault or a hang is a verdict, and the session goes on.

:func:`check_isolated` first resolves the target in a child (a target that cannot be
imported or compiled is a :class:`UsageError`, not a verdict), then runs each property, each
check past 2**31 and 2**32 elements, and each compute-sanitizer tool in a child of its own,
several at once; the child that resolved a CPU target goes on with the first share of its
properties.  A child reports every case before it runs it; one that goes ``timeout``
seconds without a word is killed with its whole process group and reported as a hang.

Sanitizer runs launch the target at several sizes (tails that are not multiples of 32 or of
any common block) with every pooling allocator off -- CuPy's pool, PyTorch's caching
allocator, JAX's preallocation -- because an overrun inside a pooled chunk is invisible to
memcheck and initcheck; the report names the size that showed the first error.

Each child runs :mod:`scancheck.isolation.child`.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from ..core.devices import usable_cores
from ..engine.diagnosis import Cause, PropertyResult, Reason
from ..engine.options import CheckOptions, Plan
from ..targets.spec import TargetSpec, over_tuples, spec_from_json
from .child import ORDER, SIZE_MARK, Order, python_command, smoke_case
from .watch import (
    Memory,
    fault_message,
    growing_call,
    largest_returned,
    quiet_limit,
    slow_call,
    watch,
)

if TYPE_CHECKING:
    from ..engine.report import ConformanceReport


#: Sizes of a sanitizer run: odd tails past 32, 256 and 1024, and several tiles.
SANITIZE_SIZES = (1, 31, 33, 255, 257, 1000, 4099, 70001)



#: Tools run on GPU targets by default, where compute-sanitizer is installed.
DEFAULT_TOOLS = ("memcheck", "initcheck", "racecheck", "synccheck")



_TOOL_CAUSE = {"racecheck": (Cause.RACE, "data race"), "synccheck": (Cause.RACE, "barrier misuse"),
               "memcheck": (Cause.FAULT, "memory error"),
               "initcheck": (Cause.FAULT, "uninitialised memory read")}



#: What a child's "case" event tells of the case it was in (:meth:`Case.describe`): kept in
#: the smallest case of a fault or hang there, so that its input can be drawn again.
_CASE_KEYS = ("dtype", "data", "seed", "drawn", "skip")
#: What turns pooling off in the child of a sanitizer run.
_NO_POOLS = {"SCANCHECK_NO_MEMORY_POOL": "1", "PYTORCH_NO_CUDA_MEMORY_CACHING": "1",
             "XLA_PYTHON_CLIENT_PREALLOCATE": "false", "XLA_PYTHON_CLIENT_ALLOCATOR": "platform"}


class UsageError(ValueError):
    """The target cannot be checked at all: it cannot be imported, compiled or found."""


class EnvironmentProblem(UsageError):
    """The target cannot run on this machine: its library, CuPy or a GPU is missing."""


def _default_workers() -> int:
    return max(1, usable_cores() // 2)


@dataclass(frozen=True)
class IsolatedCheck:
    """One isolated check's fixed parts: the target's name, what every child is told of
    the check, and who hears what starts and finishes."""

    locator: str
    options: CheckOptions
    progress: Any = None
    #: Each death bisected (:func:`bisect_death`), by how it died: the children of one check
    #: that meet it share one bisection.
    deaths: dict[tuple[str, str], tuple[int, str, str] | None] = field(
        default_factory=dict, compare=False, repr=False)
    bisecting: threading.Lock = field(default_factory=threading.Lock, compare=False,
                                      repr=False)

    def command(self, out: str = "{out}", **order: Any) -> list[str]:
        """The command of a child told ``order`` (the fields of an :class:`Order` beyond
        the target and the options)."""
        return child_command(Order(self.locator, self.options, **order), out)

    @property
    def on_gpu(self) -> bool:
        """Whether a hang's hint is a GPU one: the target's spec says gpu (a kernel, a .cu
        file or a CUDA library scan where no spec is passed)."""
        spec, locator = self.options.spec, self.locator
        if spec is not None:
            return spec.device == "gpu"
        return locator.startswith(("kernel:", "scancheck:")) or locator.endswith(".cu") or (
            "CUDA" in locator or "cupy" in locator)

    @property
    def forkable(self) -> bool:
        """Whether a child may be forked from the zygote: a CPU target's with no GPU asked
        for (a GPU target's child starts afresh, CUDA set up in a process of its own)."""
        return self.options.gpu is None and not self.on_gpu


def check_isolated(locator: str, options: CheckOptions | None = None, *, progress: Any = None,
                   **settings: Any) -> ConformanceReport:
    """Check the target ``locator`` names in child processes as ``options`` say (a
    :class:`~scancheck.engine.options.CheckOptions`; each of ``settings`` replaces the field
    it names: ``check_isolated(name, properties=("rows",), budget=Budget(5))``); returns its
    ConformanceReport.

    ``large`` None runs the checks past 2**31 and 2**32 for GPU targets (each says so where
    memory is short); ``sanitize`` None runs :data:`DEFAULT_TOOLS` on GPU targets where
    compute-sanitizer is installed.  ``timeout`` is how long one case may run before it is a
    hang; ``workers`` how many children run at once (half the cores by default);
    ``progress`` a :class:`scancheck.faces.progress.Task` told what starts and finishes; ``gpu``
    the one GPU (an id CUDA_VISIBLE_DEVICES takes) its children may see.  ``seconds``, the
    wall time the whole check may take from this call on, is shared by each child among the
    properties it has still to run (at least a quarter second each); where ``budget`` is
    ``bounded`` it bounds their ladders of sizes too, and a property whose time runs out
    says how far it got ("slow" or "partial",
    :func:`~scancheck.engine.conformance.check_property`), else each ladder is walked whole.
    A failure found is still shrunk.
    ``overrides`` (TargetSpec field -> value) replace just those fields of the target's own
    spec, in every child (:func:`scancheck.targets.resolve.resolve`).  The plan -- which
    child runs which properties, within what -- is made here, once, and each child is handed
    its part.  :class:`UsageError` where the target cannot be loaded or the overrides make no
    valid spec; :class:`EnvironmentProblem` where it cannot run here (no GPU, no CuPy, its
    library missing); a ValueError naming a setting that is out of range.
    """
    from ..engine.report import ConformanceReport
    from .sanitizer import find_sanitizer

    if not isinstance(locator, str):
        # A child loads the target by its name: an object (a Target, a function) cannot go.
        # A Target's repr holds its whole spec: it is named by its type and name.
        shown = repr(locator) if len(repr(locator)) <= 60 else (
            f"<{type(locator).__name__} {getattr(locator, 'name', '')!r}>")
        raise TypeError(f"locator={shown} must name the target, as 'numpy.cumsum', "
                        f"'path/to/file.py:function' or 'kernel:blelloch': check_isolated "
                        f"loads it by name in its child processes; scancheck.check takes a "
                        f"Target object in this process")
    if options is not None and not isinstance(options, CheckOptions):
        raise TypeError(f"options={options!r} must be a CheckOptions; give properties and "
                        f"the other settings by name")
    options = (options or CheckOptions()).with_settings(**settings)
    t0 = time.time()
    asked = options.checked_properties()
    workers = options.workers or _default_workers()
    # Every property's search ends by then (its ladder too, where the budget is bounded):
    # each child shares what is left among the properties it has still to run.
    until = t0 + options.seconds if options.seconds is not None else None
    job = IsolatedCheck(locator, options, progress)
    told: dict[str, Any] = {}
    heard = threading.Event()

    with tempfile.TemporaryDirectory(prefix="scancheck-plan-") as tmp:
        # The child that resolves the target goes on with the first child's share of the
        # properties, where there are any (one start-up fewer per check): it waits for its
        # plan, written here once the spec it tells is planned.
        handoff = os.path.join(tmp, "first.json") if asked else None

        def on_event(event: dict) -> None:
            if event["event"] == "target":
                first = None
                try:
                    declared = spec_from_json(event["spec"])
                    tasks = plan(declared, options, find_sanitizer() is not None)
                    groups, skipped = deal_groups(tasks, declared, workers)
                    share = first_share(groups, declared) if handoff is not None else ()
                    first = Plan(share, options.budget, until) if share else None
                    if progress is not None:  # before the first child's own properties start
                        progress.plan(sum(len(names) for _, names in groups))
                    told.update(name=event["target"], spec=declared, tasks=tasks, groups=groups,
                                skipped=skipped, first=first, at=time.time())
                except Exception as exc:  # raised in this thread, once the child is done
                    told["error"] = exc
                finally:
                    if handoff is not None:
                        _hand(handoff, first)
                heard.set()
            elif told.get("first") and progress is not None:
                _told(progress, event)

        with ThreadPoolExecutor(max_workers=workers) as pool:
            resolving = pool.submit(watch, job.command(resolve=True, handoff=handoff),
                                    options.timeout, on_event, fork=job.forkable)
            while not heard.is_set() and not resolving.done():
                heard.wait(0.05)
            if "error" in told:
                resolving.result()
                raise told["error"]
            if "spec" not in told:
                raise _refusal(*resolving.result(), locator, options.timeout,
                               options.timeout_flag)
            name, declared = told["name"], told["spec"]
            prepared = told["at"] - t0
            tasks, groups, skipped = told["tasks"], told["groups"], told["skipped"]
            ran = _run_groups(job, pool, resolving, told["at"], groups, told["first"],
                              declared, until)
    ran.update(skipped)
    results = [ran[what] for _, what in tasks]
    return ConformanceReport(name, asdict(declared), results, time.time() - t0, prepared,
                             locator=locator)


def _hand(path: str, plan: Plan | None) -> None:
    """Write ``plan`` (None: no properties) to ``path`` for the child that waits for it,
    whole at once."""
    with open(path + ".part", "w") as fh:
        json.dump(None if plan is None else plan.to_json(), fh)
    os.replace(path + ".part", path)


def _run_groups(job: IsolatedCheck, pool: ThreadPoolExecutor, resolving: Any, told_at: float,
                groups: list[tuple[str, tuple[str, ...]]], first: Plan | None,
                declared: TargetSpec, until: float | None) -> dict[str, PropertyResult]:
    """Each group's results, by name: the first from the child that resolved the target where
    it went on with them (``first``, its plan), the others each in children of their own."""
    from ..engine.checks import LARGE

    budget, progress = job.options.budget, job.progress

    def run(group: tuple[str, tuple[str, ...]]) -> list[PropertyResult]:
        kind, names = group
        with device_turn(declared, job.options.gpu, exclusive=names[0] in LARGE):
            if kind == "sanitizer":
                if progress is not None:
                    progress.start(names[0])
                start = time.time()
                out = [_sanitize(job, names[0], declared)]
                out[0].seconds = round(time.time() - start, 2)
                if progress is not None:
                    progress.finish(names[0], out[0].status)
                return out
            return run_properties(job, Plan(names, budget, until), declared)

    futures = [pool.submit(run, g) for g in (groups[1:] if first else groups)]
    out = []
    if first:  # in this thread: the pool's threads are the children's, one of them its
        events, status, err = resolving.result()
        began = next(i for i, ev in enumerate(events) if ev["event"] == "target")
        out.append(run_properties(job, first, declared, ran=(events[began + 1:], status, err,
                                                             time.time() - told_at)))
    out += [future.result() for future in futures]
    return {what: r for (_, names), results in zip(groups, out) for what, r in zip(names, results)}


def deal(props: list[str], workers: int) -> list[tuple[str, ...]]:
    """``props`` dealt round-robin among as few children as keep ``workers`` busy (a child
    costs a second or more to start: Python, NumPy, numba, the target's library)."""
    share = max(1, min(len(props), workers))
    return [tuple(props[i::share]) for i in range(share) if props[i::share]]


def first_share(groups: list[tuple[str, tuple[str, ...]]], spec: TargetSpec
                ) -> tuple[str, ...]:
    """The properties the child that resolves a target goes on with: the first of
    ``groups`` (:func:`deal_groups`) where it holds conformance properties dealt among
    children, not the checks past 2**31 nor a sanitizer's; none for a GPU target, whose
    children take their turns on the device before they start."""
    from ..engine.checks import LARGE

    if spec.device == "gpu" or not groups or groups[0][0] != "property":
        return ()
    return () if groups[0][1][0] in LARGE else groups[0][1]


def deal_groups(tasks: list[tuple[str, str]], spec: TargetSpec, workers: int
                ) -> tuple[list[tuple[str, tuple[str, ...]]], dict[str, PropertyResult]]:
    """The children a check starts, as (kind, names), and the properties that need none.

    A child costs a second or more to start (Python, NumPy, numba, the target's library), so
    the properties that apply share as few children as keep ``workers`` busy, dealt
    round-robin; those that do not apply are answered here.  The checks past 2**31 and 2**32
    share one child, smallest first: after a hang or a fault at 2**31 the larger one would
    only repeat it, holding the device that long.  Each sanitizer tool has its own."""
    from ..engine.checks import LARGE, not_applicable

    skipped: dict[str, PropertyResult] = {}
    props: list[str] = []
    large: list[str] = []
    tools: list[str] = []
    for kind, what in tasks:
        why = not_applicable(spec, what) if kind == "property" else None
        if why:
            skipped[what] = PropertyResult(what, "skip", why)
        else:
            (tools if kind == "sanitizer" else large if what in LARGE else props).append(what)
    groups = [("property", names) for names in deal(props, workers)]
    if large:
        groups.append(("property", tuple(large)))
    groups += [("sanitizer", (t,)) for t in tools]
    return groups, skipped


@contextlib.contextmanager
def device_turn(spec: TargetSpec, gpu: str | None, exclusive: bool) -> Iterator[None]:
    """A GPU target's children share their GPU with every other child checked from this
    machine, except the checks past 2**31, which need most of its memory: they wait until
    no other child runs on it, and then hold it alone (a file lock, shared or exclusive)."""
    if spec.device != "gpu":
        yield
        return
    from ..core.locks import file_lock

    key = gpu if gpu is not None else os.environ.get("CUDA_VISIBLE_DEVICES", "all")
    with file_lock(f"scancheck-gpu-{key.replace(',', '_')}.lock", exclusive):
        yield


def plan(spec: TargetSpec, options: CheckOptions, have_sanitizer: bool
         ) -> list[tuple[str, str]]:
    """The (kind, name) tasks a check runs: the properties; the checks past 2**31 and 2**32
    where ``options.large`` says so (None: for GPU targets), batched too for a target with an
    axis, the segmented one alone for a segmented target; the sanitizer tools
    ``options.sanitize`` names (None: all of :data:`DEFAULT_TOOLS` for GPU targets, where
    compute-sanitizer exists)."""
    from ..engine.checks import LARGE
    from ..engine.large_batches import BATCH_CHECKS
    from ..engine.large_segments import SEGMENT_CHECKS

    gpu = spec.device == "gpu"
    large, sanitize = options.large, options.sanitize
    bigs = LARGE if (gpu if large is None else large) else ()
    if spec.axis is None:  # the batched ones take N-D arrays
        bigs = tuple(b for b in bigs if b not in BATCH_CHECKS)
    # A segmented scan has its own check past 2**31, and only it.
    bigs = tuple(b for b in bigs if (b in SEGMENT_CHECKS) == (spec.segments is not None))
    if sanitize is None:
        sanitize = DEFAULT_TOOLS if gpu and have_sanitizer else ()
    return [("property", p) for p in (*options.checked_properties(), *bigs)] + [
        ("sanitizer", t) for t in sanitize]


def child_command(order: Order, out: str = "{out}") -> list[str]:
    """The command of a child process told ``order``, writing its events to ``out``
    (``{out}``: the file :func:`~scancheck.isolation.watch.watch` reads); a
    :class:`UsageError` where the spec cannot travel (a user's monoid no module holds)."""
    try:
        text = json.dumps(ORDER.dump(order))
    except ValueError as exc:
        raise UsageError(f"spec: {exc}") from None
    return [*python_command("scancheck.isolation.child"), out, text]


def _refusal(events: list[dict], status: str, err: str, locator: str, timeout: float,
             flag: str = "--timeout") -> UsageError:
    """Why the child that was to resolve and prepare (compile) the target told no target: a
    :class:`UsageError` where it could not, an :class:`EnvironmentProblem` where the target
    cannot run here."""
    for ev in events:
        if ev["event"] == "usage":
            return UsageError(ev["message"])
        if ev["event"] == "unavailable":
            return EnvironmentProblem(ev["message"])
    if status == "timeout":
        return UsageError(f"target {locator!r} could not be loaded: loading it gave no sign of "
                          f"life in {quiet_limit(timeout):.0f} s (does its module hang when "
                          f"imported?); loading may take ten times {flag}, 120 s at least")
    return UsageError(f"target {locator!r} could not be loaded: {fault_message(err, status)}")


def run_properties(job: IsolatedCheck, plan: Plan, spec: TargetSpec,
                   ran: tuple[list[dict], str, str, float] | None = None) -> list[PropertyResult]:
    """The properties of ``plan`` in order in one child, each within its share.  The one
    running when the child hangs or dies is reported so, at the size it reached; the others
    go on in a new child below that size, where the target may work, and say so (after n =
    0, from n = 1).  The checks past 2**31 and 2**32 are not retried: below their size they
    have nothing to check.  ``ran``: the events, status, stderr and seconds of a child that
    has run ``plan`` already (the one that resolved the target), read as the first child's."""
    from ..engine.checks import LARGE

    props, timeout, progress = plan.properties, job.options.timeout, job.progress
    flag = job.options.timeout_flag
    results: list[PropertyResult] = []
    cap, empty, broke = plan.budget.max_n, plan.empty, ""  # what later children keep clear of
    while len(results) < len(props):
        if ran is not None:  # the child that resolved the target has run them
            (events, status, err, spent), ran = ran, None
        else:
            start = time.time()
            rest = replace(plan, properties=props[len(results):],
                           budget=replace(plan.budget, max_n=cap), empty=empty)
            events, status, err = watch(job.command(plan=rest), timeout,
                                        None if progress is None else partial(_told, progress),
                                        fork=job.forkable)
            spent = time.time() - start
        done = [PropertyResult(**ev["result"]) for ev in events if ev["event"] == "result"]
        for r in done:
            if broke and r.status != "skip":
                r.detail["checked"] = broke
        results += done
        if len(results) == len(props):
            break
        stuck = props[len(results)]
        last = next((ev for ev in reversed(events) if ev["event"] in ("case", "call")), None)
        at = f" at n = {last['n']:,}" if last else ""
        # Where it stopped: the size of its last call, and the case around it (its dtype and
        # data, to be drawn again) where that call was the case's own (a twin or a fresh
        # input may be of another).
        around = next((ev for ev in reversed(events) if ev["event"] in ("case", "start")), {})
        case = {"n": last["n"]} if last else None
        if case and around.get("n") == case["n"]:
            case.update((k, v) for k, v in around.items() if k in _CASE_KEYS)
        slow = slow_call(events, timeout) if status == "timeout" else None
        # A GPU target's host memory says nothing of a kernel that spins on the device, and
        # past 2**31 a call writes gigabytes before it may spin.
        growing = (growing_call(events) if status == "timeout" and slow is None
                   and not job.on_gpu and stuck not in LARGE else None)
        memory = Memory.of(events)
        killed_from_outside = memory is not None and memory.killed_from_outside
        if slow is not None:
            results.append(PropertyResult(stuck, "slow", slow.told(timeout, flag), detail={
                "largest n": largest_returned(events, stuck), "timed out at n": slow.n,
                "seconds predicted": round(slow.predicted, 1)}, timeout=timeout))
        elif growing is not None:
            results.append(PropertyResult(stuck, "slow", growing.told(timeout, flag), detail={
                "largest n": largest_returned(events, stuck), "timed out at n": growing.n,
                "memory grown": growing.memory.grew_in_call()}, timeout=timeout))
        elif status == "timeout":
            # "The calls before it were fast" only where some call returned.
            returned_any = any(ev["event"] == "return" for ev in events) or any(
                r.status == "pass" for r in results)
            hint = (" (a block waiting on one never scheduled?)" if job.on_gpu
                    else f" (one call ran past {flag} where the calls before it were fast: "
                    "a loop that never ends)" if returned_any
                    else f" (its first call ran past {flag}: a loop that never ends, or a "
                    f"target slower than {flag} allows at any n)")
            results.append(PropertyResult(stuck, "hang", f"the target gave no answer in "
                                          f"{timeout:g} s{at}{hint}", case,
                                          cause=Cause.FAULT.name, timeout=timeout))
        else:
            held = (f", holding {memory.told()} (a SIGKILL not sent by scancheck is most often "
                    f"the kernel's, out of memory)" if killed_from_outside else "")
            results.append(PropertyResult(stuck, "fault", fault_message(err, status) + at + held,
                                          case, cause=Cause.FAULT.name))
        returned = largest_returned(events, stuck)
        if slow is None and growing is None:
            # A hang's size is not shrunk: each try at it costs a whole --timeout.
            results[-1].detail["largest n"] = returned
            results[-1].minimal = not (case and case["n"] > 1)
        bisected = None
        # Out of memory, the least size that dies is the machine's at that moment, not the
        # target's: such a death is told where it happened.
        if (status.startswith("died") and case and stuck not in LARGE and job.forkable
                and not killed_from_outside):
            start = time.time()
            bisected = bisect_death(job, spec, case["n"], returned, status, err, plan.until)
            spent += time.time() - start
        if bisected is not None:  # the later properties run below it, where it may work
            least, below, said = bisected
            last, case = {"n": least}, smoke_case(spec, least)
            results[-1].diagnosis = (f"{said} at n = {least:,}, called once in a fresh "
                                     f"process on uniform data{below}")
            results[-1].smallest_case = case
        results[-1].seconds = round(max(0.0, spent - sum(r.seconds for r in done)), 2)
        if broke:
            results[-1].detail["checked"] = broke
        if progress is not None:
            progress.finish(stuck, results[-1].status)
        timed = slow is not None or growing is not None
        what = (f"a call past the {timeout:g} s timeout in '{stuck}'" if timed
                else f"the target's {results[-1].status} in '{stuck}'")
        n = last["n"] if last else None
        if slow is not None and stuck not in LARGE:
            # Calls past the last that returned in time grow slower still: the others are
            # checked to it, where each call ends.
            cap = min(n - 1, slow.larger[0]) if n is not None else slow.larger[0]
            broke = f"to n = {cap:,} ({what} at n = {slow.n:,})"
        elif n == 0 and empty:
            empty, broke = False, f"from n = 1 ({what} was at n = 0)"
        elif n is not None and n >= 2 and stuck not in LARGE and status == "timeout" and returned:
            # The sizes between the last that returned and the hang may hang too, each for a
            # whole --timeout: the others are checked to the last that returned.
            cap = min(n - 1, returned)
            broke = f"to n = {cap:,} ({what} at n = {n:,})"
        elif n is not None and n >= 2 and stuck not in LARGE:
            cap, broke = n - 1, f"below n = {n:,} ({what} was there)"
        else:
            for p in props[len(results):]:
                results.append(PropertyResult(p, "skip", f"not run: {what} would repeat here"))
                if progress is not None:
                    progress.finish(p, "skip")
    return results


#: Fresh processes a death's size may be bisected with, each calling the target once.
BISECT_PROBES = 24


def bisect_death(job: IsolatedCheck, spec: TargetSpec, died: int, returned: int | None,
                 status: str, err: str, until: float | None = None
                 ) -> tuple[int, str, str] | None:
    """The least n found at which the target, called once in a fresh process on the data
    of :func:`smoke_case`, dies as it died at ``died`` (``status``; for an exit status, with
    the words of ``err``, its stderr), bisected from the largest n it returned at
    (``returned``), until the time ``until``; with words on the size below it and the words
    it died with there.  None where the call at ``died`` does not die so (the death needs
    its case's data), or the target is no plain 1-D scan of numbers (one such call is what a
    report's script makes of the case).  Children of one check share each bisection."""
    if spec.segments or spec.axis is not None or over_tuples(spec) or died < 2:
        return None
    key = _death(status, fault_message(err, status))
    with job.bisecting:
        known = job.deaths.get(key, ())
        if known is None or (known and known[0] <= died):
            return known or None
        job.deaths[key] = found = _bisected(job, died, returned, key, until)
        return found


def _death(status: str, said: str) -> tuple[str, str]:
    """How a child died, as deaths are matched and their bisections shared: a signal by
    itself, the death's own evidence; an exit status with its words (``said``), without
    which it says little."""
    return status, "" if "killed by" in status else said


def _bisected(job: IsolatedCheck, died: int, returned: int | None, key: tuple[str, str],
              until: float | None) -> tuple[int, str, str] | None:
    """:func:`bisect_death`'s search, each call in a child of its own."""
    last = {"said": ""}

    def dies(n: int) -> bool | None:
        """True where the call at n dies as the case did, False where it returns, None where
        it does neither (a hang, another death): no evidence either way."""
        _, how, err = watch(job.command(smoke=(n,)), job.options.timeout, fork=job.forkable)
        said = fault_message(err, how)
        if _death(how, said) == key:
            last["said"] = said
            return True
        return False if how == "ok" else None

    if not dies(died):
        return None
    lo, hi, fine = 0, died, None  # fine: the largest n seen to return
    for probe in range(BISECT_PROBES + 1):
        if hi - lo <= 1 or (until is not None and time.time() > until):
            break
        # The largest size that returned in the check first: most often the death's edge.
        mid = returned if probe == 0 and returned and lo < returned < hi else (lo + hi) // 2
        fate = dies(mid)
        if fate is None:
            break
        if fate:
            hi = mid
        else:
            lo = fine = mid
    words = (f"; n = {fine:,} returned there" if fine == hi - 1 else
             "; sizes below it not all tried" if hi - lo > 1 else "")
    return hi, words, last["said"]


def _told(progress: Any, event: dict) -> None:
    """A child's property starting or ending, told to ``progress`` as it happens."""
    if event["event"] == "start":
        progress.start(event["property"])
    elif event["event"] == "result":
        progress.finish(event["result"]["name"], event["result"]["status"])


def _sanitize(job: IsolatedCheck, tool: str, declared: TargetSpec) -> PropertyResult:
    from .sanitizer import find_sanitizer, inconclusive, run_command

    name = f"sanitizer: {tool}"
    if find_sanitizer() is None:
        return PropertyResult(name, "skip", "compute-sanitizer is not installed")
    sizes = [n for n in SANITIZE_SIZES if declared.max_n is None or n <= declared.max_n]
    cmd = job.command(os.devnull, smoke=tuple(sizes))
    # Instrumented runs are 10-100x slower: a limit sized for plain cases would cut a sound
    # target off under the sanitizer.
    rep = run_command(tool, cmd, job.locator, timeout=max(job.options.timeout * 4, 240.0),
                      env=dict(os.environ, **_NO_POOLS))
    if rep.timed_out:
        return PropertyResult(name, "hang", f"no answer under {tool}", cause=Cause.FAULT.name)
    why = inconclusive(rep.output)
    if why:
        return PropertyResult(name, "skip", f"not run: {why} ({rep.first_lines(2)[:200]})")
    detail = {"sizes": ", ".join(map(str, sizes))}
    if rep.issues > 0:
        cause, kind = _TOOL_CAUSE[tool]
        at = first_report_size(rep.output)
        case = {"n": at} if at is not None else None
        return PropertyResult(name, "fail", f"{kind}: {tool} reported {rep.issues} "
                              f"(first at n = {at}, allocators unpooled)", case,
                              {**detail, "first": rep.first_lines(3)}, cause=cause.name,
                              reason=Reason.SANITIZER.name)
    if rep.returncode != 0 or rep.issues < 0:
        return PropertyResult(name, "fault", fault_message(rep.output), cause=Cause.FAULT.name)
    return PropertyResult(name, "pass", detail=detail)



def first_report_size(output: str) -> int | None:
    """The size whose launch the first report of a sanitizer's output follows (a report
    is a ``=========`` line that is not indented detail, the banner or a summary)."""
    from .sanitizer import is_report

    size = None
    for line in output.splitlines():
        if line.startswith(SIZE_MARK):
            size = int(line[len(SIZE_MARK):])
        elif is_report(line):
            return size
    return None
