"""The child process of an isolated check: it resolves the target, prepares it, and runs
the properties (or launches it once per size for a sanitizer), writing each event as a JSON
line to the file its parent, :mod:`scancheck.isolation.parent`, watches.

    python -m scancheck.isolation.child LOCATOR OUT [--props P ...] [--budget S] ...
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from dataclasses import asdict, replace
from typing import Any

import numpy as np

from ..targets.spec import TargetSpec, spec_json

#: The line a sanitizer run's child prints before each launch, naming its size.
_MARK = "scancheck-sanitize: n="
#: The least a property may search when a check's time is shared out (its ladder's first
#: rungs run whatever is left).
_LEAST_SEARCH = 0.25


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


def _spec_from(d: dict[str, Any]) -> TargetSpec:
    """A spec from its JSON form (lists back to tuples, the promotions' pairs too)."""
    def tup(v: Any) -> Any:
        return tuple(tup(e) for e in v) if isinstance(v, list) else v

    return TargetSpec(**{k: tup(v) for k, v in d.items()})


def deal(props: list[str], workers: int) -> list[tuple[str, ...]]:
    """``props`` dealt round-robin among as few children as keep ``workers`` busy (a child
    costs a second or more to start: Python, NumPy, numba, the target's library)."""
    share = max(1, min(len(props), workers))
    return [tuple(props[i::share]) for i in range(share) if props[i::share]]


def first_share(props: tuple[str, ...], spec: TargetSpec, workers: int) -> tuple[str, ...]:
    """The properties the child that resolves a target goes on with: the first child's share
    of those of ``props`` that apply to ``spec`` (the checks past 2**31 have a child of their
    own), as the parent deals them (:func:`scancheck.isolation.parent._groups`), so that
    the check starts one child fewer; none for a GPU target, whose children take their
    turns on the device before they start."""
    if spec.device == "gpu":
        return ()
    from ..engine.checks import LARGE, not_applicable

    dealt = deal([p for p in props if not not_applicable(spec, p) and p not in LARGE], workers)
    return dealt[0] if dealt else ()


def _smoke(target: Any, sizes: list[int]) -> None:
    """Launch the target once per size, each after a marker line, so that a sanitizer's
    report can be traced to the size that showed it."""
    from ..engine.cases import Case
    from ..targets.target import InputWritten

    for n in sizes:
        print(f"{_MARK}{n}", flush=True)
        x = Case(n, target.spec.dtypes[0], "uniform", n).data(target.spec.op)
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


def _child(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m scancheck.isolation.child")
    ap.add_argument("locator")
    ap.add_argument("out")
    ap.add_argument("--props", nargs="*", default=[])
    ap.add_argument("--budget", type=float, help="seconds (default: Budget's)")
    ap.add_argument("--examples", type=int, help="examples (default: Budget's)")
    ap.add_argument("--max-n", type=int)
    ap.add_argument("--until", type=float, help="time.time() by which the properties end")
    ap.add_argument("--bounded", action="store_true", help="the budget bounds the ladder too")
    ap.add_argument("--no-empty", action="store_true", help="skip n = 0 (it broke the target)")
    ap.add_argument("--spec")
    ap.add_argument("--overrides", help="JSON: TargetSpec fields replacing the declared ones")
    ap.add_argument("--resolve", action="store_true", help="resolve and prepare, report the spec")
    ap.add_argument("--share", type=int, help="with --resolve: then run the first of the --props "
                    "shared among this many children (a CPU target's; a GPU target's wait for "
                    "their turn on the device, which the parent takes)")
    ap.add_argument("--smoke", nargs="*", type=int, help="launch once at each size (sanitizer)")
    ap.add_argument("--gpu", help="the one GPU this child may see (before CUDA starts)")
    args = ap.parse_args(argv)
    if args.gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
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

    with open(args.out, "w", buffering=1) as fh:

        def emit(**event: Any) -> None:
            fh.write(json.dumps(event, default=jsonable) + "\n")
            fh.flush()

        try:
            target = resolve(args.locator, _spec_from(json.loads(args.spec)) if args.spec else None,
                             overrides=json.loads(args.overrides) if args.overrides else None)
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
        if args.resolve and target.unavailable:  # the machine's, not the target's, verdict
            gpu_spec = " (its spec has device='gpu')" if target.spec.device == "gpu" else ""
            emit(event="unavailable", message=f"target {target.name!r} cannot run here: "
                 f"{target.unavailable}{gpu_spec}")
            return 0
        emit(event="target", target=target.name, spec=declared)
        if args.share is not None:
            # The first child of a check: it goes on with the properties the parent would
            # give the first child, planned alike from the spec it was just told.
            told = _spec_from(json.loads(json.dumps(declared, default=jsonable)))
            args.props = list(first_share(tuple(args.props), told, args.share))
        if args.no_empty:
            target = replace(target, spec=replace(target.spec, allows_empty=False))
        # When, on a clock every process of the machine shares: the parent tells a slow
        # call from a hung one by the times of the calls before it.
        target.watch = lambda what, n: emit(event=what, n=n, t=round(time.monotonic(), 4))
        if args.smoke is not None:
            _smoke(target, args.smoke)
            return 0
        if not args.props:  # --resolve: done, without loading the engine
            return 0
        from ..engine.cases import Budget
        from ..engine.conformance import check_property

        budget = Budget(Budget.seconds if args.budget is None else args.budget,
                        Budget.max_examples if args.examples is None else args.examples,
                        args.max_n, args.bounded)
        for k, p in enumerate(args.props):
            emit(event="start", property=p)
            start = time.time()
            share = budget
            if args.until is not None:  # an even share of what is left, however little
                left = (args.until - start) / (len(args.props) - k)
                share = replace(budget, seconds=max(_LEAST_SEARCH, min(budget.seconds, left)))
            r = check_property(target, p, share, on_case=lambda n: emit(event="case", n=n))
            r.seconds = round(time.time() - start, 2)
            emit(event="result", result=asdict(r))
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
