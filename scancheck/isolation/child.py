"""The child process of an isolated check: it resolves the target, prepares it, and runs
the properties through the engine's loop (or launches it once per size for a sanitizer),
writing each event as a JSON line to the file its parent, :mod:`scancheck.isolation.parent`,
watches.

    python -m scancheck.isolation.child OUT ORDER

``ORDER`` is an :class:`Order` in its JSON form (:data:`ORDER`): the check's
:class:`~scancheck.engine.options.CheckOptions` and what this child does with them.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..engine.options import (
    FLAG,
    OPTIONS,
    PLAN,
    SIZES,
    TEXT,
    CheckOptions,
    Plan,
    Schema,
    optional,
)
from ..targets.spec import spec_json

#: The line a sanitizer run's child prints before each launch, followed by its size.
SIZE_MARK = "scancheck-sanitize: n="


@dataclass(frozen=True)
class Order:
    """What one child does with the target ``locator`` names, resolved as ``options`` say
    (their ``spec``, ``overrides`` and ``gpu``): tell its spec first where ``resolve`` asks
    (or why it has none); run ``plan``, the properties its parent planned for it, or, with
    ``resolve``, the plan its parent writes to the file ``handoff`` once it has heard the
    spec (JSON null: none); or launch it once at each of the ``smoke`` sizes (a sanitizer
    run)."""

    locator: str
    options: CheckOptions = field(default_factory=CheckOptions)
    resolve: bool = False
    plan: Plan | None = None
    handoff: str | None = None
    smoke: tuple[int, ...] | None = None


ORDER = Schema("Order", Order, {
    "locator": TEXT, "options": OPTIONS.nested(), "resolve": FLAG,
    "plan": optional(PLAN.nested()), "handoff": optional(TEXT), "smoke": optional(SIZES)})


def python_command(module: str, safe_path: bool = sys.version_info >= (3, 11)) -> list[str]:
    """The command line that runs ``module`` as ``python -m`` does, except that the working
    directory is not put first on the import path (``-P``; where Python lacks it, before 3.11,
    ``safe_path=False`` takes it off through :mod:`runpy`).  A folder there named
    ``scancheck`` -- a clone of this project, with no ``__init__.py`` at its root -- would
    be imported as a namespace package in place of the installed one."""
    if safe_path:
        return [sys.executable, "-P", "-m", module]
    return [sys.executable, "-c", "import runpy, sys; del sys.path[0]; "
            f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)"]


def smoke_case(spec: Any, n: int) -> dict[str, Any]:
    """The case of a one-call child's input at ``n`` (:func:`smoke`): the spec's first
    dtype, uniform data, its seed n."""
    return {"n": n, "dtype": spec.dtypes[0], "data": "uniform", "seed": n}


def smoke(target: Any, sizes: tuple[int, ...] | list[int]) -> None:
    """Launch the target once per size, each after a marker line, so that a sanitizer's
    report can be traced to the size that showed it."""
    from ..engine.cases import Case
    from ..targets.target import InputWritten

    for n in sizes:
        print(f"{SIZE_MARK}{n}", flush=True)
        case = smoke_case(target.spec, n)
        x = Case(n, case["dtype"], case["data"], case["seed"]).data(target.spec.op)
        with contextlib.suppress(InputWritten):  # the value properties' verdict, not a fault
            if target.spec.segments is None:
                target(x)
                continue
            # A segmented scan is called with its description: segments drawn as the
            # 'segments' property draws them, one head along axis 0 of a (T, H) target.
            from ..engine.properties.segments import call
            from ..engine.segments import draw_layout

            kind, _, index_dtype = target.spec.segments.partition(":")
            layout = draw_layout(np.random.default_rng(n), n, kind, index_dtype or None)
            call(target, x if target.spec.axis is None else x.reshape(n, 1),
                 layout.description())


def _no_core_files() -> None:
    """Let this process write no core file when it dies (where the platform has limits)."""
    try:
        import resource
    except ImportError:  # Windows: no core files
        return
    hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
    resource.setrlimit(resource.RLIMIT_CORE, (0, hard))


def _handed(path: str) -> Plan | None:
    """The plan the parent writes to ``path`` once it has heard the target's spec (None
    where it gives this child none), waited for while the parent lives."""
    parent = os.getppid()
    while not os.path.exists(path):
        if os.getppid() != parent:  # the parent is gone: no plan will come
            return None
        time.sleep(0.005)
    with open(path) as fh:
        data = json.load(fh)
    return None if data is None else PLAN.load(data)


def _end_with_parent() -> None:
    """End this child's session once the process that started it is gone (a check killed
    from outside): a hung target left running would hold its CPU, GPU and memory for good."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        if os.getpgrp() == os.getpid():  # a session of its own: its subprocesses too
            os.killpg(0, signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)  # run by hand, in another's group: itself alone

    threading.Thread(target=watch, daemon=True, name="scancheck-parent-watch").start()


def main(argv: list[str]) -> int:
    """Run the child of ``python -m scancheck.isolation.child OUT ORDER``; its exit code."""
    if len(argv) != 2:
        print("usage: python -m scancheck.isolation.child OUT ORDER", file=sys.stderr)
        return 2
    out, order = argv[0], ORDER.load(json.loads(argv[1]))
    _end_with_parent()
    options = order.options
    if options.gpu is not None:  # before CUDA starts
        os.environ["CUDA_VISIBLE_DEVICES"] = options.gpu
    if os.environ.get("SCANCHECK_NO_MEMORY_POOL"):
        try:
            import cupy as cp
        except ImportError:  # a CPU target: no pool to turn off
            pass
        else:
            cp.cuda.set_allocator(None)
            cp.cuda.set_pinned_memory_allocator(None)
    # The engine (Hypothesis, numba, the oracles) loads only where a property runs: a child
    # that only resolves the target -- one per check -- starts in a third of the time.
    from ..core.loading import LibraryMissing
    from ..targets.resolve import resolve

    def jsonable(v: Any) -> Any:
        from ..engine.report import jsonable

        return jsonable(v)

    with open(out, "w", buffering=1) as fh:

        def emit(**event: Any) -> None:
            fh.write(json.dumps(event, default=jsonable) + "\n")
            fh.flush()

        try:
            target = resolve(order.locator, options.spec, overrides=dict(options.overrides))
            if target.prepare is not None and not target.unavailable:
                target.prepare()
            try:  # the parent rebuilds the spec from JSON: a user's monoid goes as its locator
                declared = spec_json(target.spec)
            except ValueError as exc:
                raise ValueError(f"target {target.name!r}'s spec: {exc}") from None
        except LibraryMissing as exc:  # the machine's, not the target's, verdict
            emit(event="unavailable", message=str(exc))
            return 0
        except ValueError as exc:
            emit(event="usage", message=str(exc))
            return 0
        if order.resolve and target.unavailable:  # the machine's, not the target's, verdict
            gpu_spec = " (its spec has device='gpu')" if target.spec.device == "gpu" else ""
            called = (f"target {order.locator!r}" if order.locator == target.name
                      else f"target {order.locator!r} ({target.name})")
            emit(event="unavailable", message=f"{called} cannot run here: "
                 f"{target.unavailable}{gpu_spec}")
            return 0
        emit(event="target", target=target.name, spec=declared)
        plan = _handed(order.handoff) if order.handoff is not None else order.plan
        # When, on a clock every process of the machine shares: the parent tells a slow
        # call from a hung one by the times of the calls before it.
        target.watch = lambda what, n: emit(event=what, n=n, t=round(time.monotonic(), 4))
        if order.smoke is not None:
            # A call expected to die, perhaps many times over: no core file for each.
            _no_core_files()
            smoke(target, order.smoke)
            return 0
        if plan is None or not plan.properties:  # resolved: done, without loading the engine
            return 0
        from ..engine.conformance import run_plan

        def told(kind: str, **what: Any) -> None:
            if "result" in what:
                what["result"] = asdict(what["result"])
            emit(event=kind, **what)

        # An exception that ends a property ends this child: the parent reports it as the
        # target's fault and goes on in a fresh child, below the size where it happened.
        # One raised by scancheck's own code alone is a result (partial), and the next
        # property runs here.
        run_plan(target, plan, told, contain=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
