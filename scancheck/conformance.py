"""Conformance of any scan implementation: a verdict per property, with its reasons.

Each property is searched with Hypothesis for its smallest failing case (sizes biased to
block edges, every declared dtype, several data distributions), against the exact oracle:

* ``integers exact`` — integer scans equal the exact answer (two's-complement wrap);
* ``floats within bound`` — float errors within the rounding bound of *any* summation
  order (depth k-1 for the k-th prefix); max/min must be exact;
* ``nan and inf`` — NaN and infinities propagate as IEEE arithmetic says;
* ``deterministic`` — the same bits on every run;
* ``recurrence`` — the (a, b) pair scan solves y_n = a_n*y_{n-1} + b_n;
* ``past 2**31`` (on request) — n = 2**31 + 17 elements, no index overflow.

:func:`check` runs in-process; :func:`check_isolated` runs the target in child processes,
so that a target that faults, hangs or corrupts its CUDA context is reported as
``fault`` or ``hang`` and the session goes on.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from hypothesis import HealthCheck, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from .errors import Verdict, classify, gamma, log_depths, sequential_depths
from .exact import exact_recurrence, exact_scan
from .operators import get_operator
from .strategies import generate_data, scan_sizes
from .targets import Target, TargetSpec, resolve
from .testing import same_bits, to_numpy

PROPERTIES = ("integers exact", "floats within bound", "nan and inf", "deterministic", "recurrence")
LARGE = "past 2**31"


@dataclass
class Failure:
    """Why one case failed: the diagnosis and where."""

    diagnosis: str
    index: int | None = None
    got: Any = None
    expected: Any = None


@dataclass
class PropertyResult:
    """The verdict on one property: pass, fail, skip, fault or hang, and why."""

    name: str
    status: str
    diagnosis: str = ""
    smallest_case: dict[str, Any] | None = None
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class ConformanceReport:
    """Every property's verdict for one target."""

    target: str
    spec: dict[str, Any]
    results: list[PropertyResult]
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return all(r.status in ("pass", "skip") for r in self.results)

    @property
    def diagnosis(self) -> str:
        """One line: what is wrong, across properties (empty when nothing is)."""
        return diagnose(self.results)

    def rows(self) -> list[dict[str, object]]:
        out = []
        for r in self.results:
            case = r.smallest_case or {}
            where = ", ".join(f"{k}={v}" for k, v in case.items() if k != "x")
            out.append({"property": r.name, "verdict": r.status,
                        "diagnosis / detail": r.diagnosis or _detail(r.detail),
                        "smallest failing case": where})
        return out

    def to_json(self) -> str:
        return json.dumps(asdict(self), default=_jsonable, indent=1)


def _detail(d: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in d.items())


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return str(v)


# -- cases ----------------------------------------------------------------------------


@dataclass
class Case:
    n: int
    dtype: str
    distribution: str
    seed: int

    def data(self, op: str) -> np.ndarray:
        rng = np.random.default_rng(self.seed)
        if op == "recurrence":
            return _pairs(rng, self.n, self.dtype)
        return generate_data(rng, self.n, self.dtype, self.distribution)

    def describe(self, failure: Failure | None = None) -> dict[str, Any]:
        d: dict[str, Any] = {"n": self.n, "dtype": self.dtype, "data": self.distribution,
                             "seed": self.seed}
        if failure is not None and failure.index is not None:
            d.update(index=failure.index, got=_short(failure.got), expected=_short(failure.expected))
        return d


def _short(v: Any) -> Any:
    v = np.asarray(v)
    return v.item() if v.ndim == 0 else v.tolist()


def _pairs(rng: np.random.Generator, n: int, dtype: str) -> np.ndarray:
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-3, 4, (n, 2)).astype(dtype)
    a = rng.uniform(0.5, 0.999, n) * rng.choice([-1.0, 1.0], n)
    return np.stack([a, rng.uniform(-1, 1, n)], -1).astype(dtype)


def _cases(dtypes: tuple[str, ...], dists: tuple[str, ...], top: int) -> st.SearchStrategy[Case]:
    return st.builds(Case, scan_sizes(256, top), st.sampled_from(dtypes), st.sampled_from(dists),
                     st.integers(0, 2**32 - 1))


def _first_bad(ok: np.ndarray, got: np.ndarray, want: np.ndarray, diagnosis: str) -> Failure | None:
    if ok.all():
        return None
    k = int(np.flatnonzero(~ok)[0])
    return Failure(diagnosis, k, got[k], want[k])


# -- the properties -------------------------------------------------------------------


def _run(target: Target, case: Case, op: str) -> tuple[np.ndarray, np.ndarray, Failure | None]:
    """The case's input, the target's output, and a failure if the output's shape or dtype
    is not the input's."""
    x = case.data(op)
    got = target(x)
    if got.shape != x.shape or got.dtype != x.dtype:
        return x, got, Failure(f"returned shape {got.shape} dtype {got.dtype}, "
                               f"expected {x.shape} {x.dtype}")
    return x, got, None


def _exact_check(target: Target, case: Case) -> Failure | None:
    x, got, bad = _run(target, case, target.spec.op)
    if bad:
        return bad
    want = exact_scan(x, target.spec.op, target.spec.inclusive)
    return _first_bad(same_bits(got, want), got, want, "logic error: differs from the exact scan")


def _float_check(target: Target, case: Case) -> Failure | None:
    op = get_operator(target.spec.op)
    if op.name != "add":
        return _exact_check(target, case)
    x, got, bad = _run(target, case, "add")
    if bad:
        return bad
    want = exact_scan(x, inclusive=target.spec.inclusive)
    rep = classify(x, got, sequential_depths(x.size, target.spec.inclusive),
                   inclusive=target.spec.inclusive, exact=want)
    if rep.verdict != Verdict.BEYOND_BOUND:
        return None
    k = int(rep.beyond[0])
    return Failure(f"beyond the rounding bound of any summation order "
                   f"({rep.bound_fraction[k]:.3g}x the bound)", k, got[k], want[k])


def _specials_check(target: Target, case: Case) -> Failure | None:
    x, got, bad = _run(target, case, target.spec.op)
    if bad:
        return bad
    want = exact_scan(x, target.spec.op, target.spec.inclusive)
    # Finite outputs are judged elsewhere; here only where NaN and infinities must be.
    special = ~np.isfinite(want) | ~np.isfinite(got)
    ok = ~special | (np.isnan(got) & np.isnan(want)) | (got == want)
    return _first_bad(ok, got, want, "IEEE specials: NaN or infinity not propagated as IEEE says")


def _determinism_check(target: Target, case: Case) -> Failure | None:
    x = case.data(target.spec.op)
    first = target(x)
    for _ in range(3):
        again = target(x)
        bad = _first_bad(same_bits(again, first), again, first, "non-deterministic: bits differ "
                         "between runs (a race, or a reduction order that varies)")
        if bad:
            return bad
    return None


def _recurrence_check(target: Target, case: Case) -> Failure | None:
    x, got, bad = _run(target, case, "recurrence")
    if bad:
        return bad
    want = exact_recurrence(x)
    if x.dtype.kind in "iu":
        return _first_bad(same_bits(got, want), got, want, "logic error in the pair scan")
    # Sequential evaluation bound: two roundings a step, on the magnitudes of the terms.
    mags = exact_recurrence(np.abs(x).astype(np.float64))[:, 1]
    bound = gamma(2 * (np.arange(x.shape[0]) + 1), x.dtype.name) * mags * 1.01
    err = np.abs(got[:, 1].astype(np.float64) - want[:, 1].astype(np.float64))
    return _first_bad(err <= bound + np.spacing(np.abs(want[:, 1])), got, want,
                      "recurrence y_n = a_n*y_{n-1} + b_n not solved: operand order "
                      "of the non-commutative pair, or a logic error")


_CHECKS: dict[str, tuple[Callable[[Target, Case], Failure | None], tuple[str, ...], tuple[str, ...]]] = {
    # property: (check, dtypes it applies to, data distributions)
    "integers exact": (_exact_check, ("int32", "int64"), ("integers", "uniform")),
    "floats within bound": (_float_check, ("float32", "float64"),
                            ("integers", "uniform", "wide", "cancellation")),
    "nan and inf": (_specials_check, ("float32", "float64"), ("specials",)),
    "deterministic": (_determinism_check, ("float32", "float64"), ("uniform", "cancellation")),
    "recurrence": (_recurrence_check, ("float32", "float64", "int32", "int64"), ("uniform",)),
}
#: The exact recurrence runs in rationals whose size grows with n: shorter inputs.
_MAX_N = {"recurrence": 300}


def check_property(target: Target, prop: str, max_examples: int = 40,
                   max_n: int = 5000) -> PropertyResult:
    """Search for the smallest case on which ``target`` breaks property ``prop``."""
    if target.unavailable:
        return PropertyResult(prop, "skip", f"not available here: {target.unavailable}")
    if prop == LARGE:
        return _large_check(target)
    if prop not in _CHECKS:
        raise ValueError(f"property {prop!r} is unknown; allowed: {', '.join(PROPERTIES)}, {LARGE}")
    check, dtypes, dists = _CHECKS[prop]
    spec = target.spec
    if (prop == "recurrence") != (spec.op == "recurrence"):
        return PropertyResult(prop, "skip", f"not applicable to operator {spec.op!r}")
    dts = tuple(d for d in dtypes if d in spec.dtypes)
    if not dts:
        return PropertyResult(prop, "skip", f"no dtype of {dtypes} is declared")
    top = min(max_n, _MAX_N.get(prop, max_n), spec.max_n or max_n)
    # The largest case first: failures that need many blocks (a deadlock, say) are rare
    # among Hypothesis's draws, which favour small sizes.
    largest = Case(top, dts[0], dists[0], 0)
    if prop == "deterministic" and not spec.deterministic:
        seen = check(target, largest)
        return PropertyResult(prop, "skip", "declared non-deterministic" + (
            f"; observed: bits differ between runs at n={top}" if seen else ""))
    if check(target, largest) is not None:
        return _failed(prop, check, target, largest)
    strategy = _cases(dts, dists, top)
    failure: dict[str, Failure] = {}

    def fails(case: Case) -> bool:
        f = check(target, case)
        if f is not None:
            failure["last"] = f
        return f is not None

    try:
        case = find(strategy, fails, settings=settings(
            max_examples=max_examples, database=None, deadline=None,
            suppress_health_check=list(HealthCheck)))
    except NoSuchExample:
        return PropertyResult(prop, "pass", detail=_summary(target, prop, dts))
    return _failed(prop, check, target, case, failure.get("last"))


def _failed(prop: str, check: Callable[[Target, Case], Failure | None], target: Target,
            case: Case, last: Failure | None = None) -> PropertyResult:
    """The fail verdict on the smallest n that still fails, with its diagnosis (or ``last``
    seen, should a flaky target pass on the rerun)."""
    case = _smallest_n(check, target, case)
    final = check(target, case) or last
    return PropertyResult(prop, "fail", final.diagnosis if final else "failed", case.describe(final))


def _smallest_n(check: Callable[[Target, Case], Failure | None], target: Target,
                case: Case, tries: int = 300) -> Case:
    """Walk n up from 1 with the same dtype, distribution and seed: Hypothesis's shrinker
    may stop at a listed hard size (say 127) when 65 fails as well."""
    for n in range(1, min(case.n, tries)):
        smaller = Case(n, case.dtype, case.distribution, case.seed)
        if check(target, smaller) is not None:
            return smaller
    return case


def _summary(target: Target, prop: str, dtypes: tuple[str, ...]) -> dict[str, Any]:
    """Error figures on one fixed case, for the report (ulps; fractions of two bounds)."""
    if prop != "floats within bound" or target.spec.op != "add":
        return {}
    dt = dtypes[0]
    n = min(4096, target.spec.max_n or 4096)
    x = generate_data(np.random.default_rng(1), n, dt, "uniform")
    got = target(x)
    inc = target.spec.inclusive
    seq = classify(x, got, sequential_depths(n, inc), inclusive=inc)
    tree = classify(x, got, log_depths(n) if inc else np.r_[0, log_depths(n - 1)], inclusive=inc)
    return {"dtype": dt, "max ulps": seq.max_ulps,
            "err/seq bound": float(seq.bound_fraction.max()),
            "err/log2 bound": float(tree.bound_fraction.max())}


def _large_check(target: Target) -> PropertyResult:
    """n = 2**31 + 17 float32 with ones at a few places around 2**31: a step function."""
    if target.spec.op != "add" or "float32" not in target.spec.dtypes:
        return PropertyResult(LARGE, "skip", "needs an add scan of float32")
    if target.spec.max_n is not None and target.spec.max_n < 2**31 + 17:
        return PropertyResult(LARGE, "skip", f"declared max_n={target.spec.max_n}")
    n = 2**31 + 17
    marks = np.array([0, 5, 2**31 - 1, 2**31, 2**31 + 16])
    probes = np.unique(np.r_[0, n - 1, marks, np.maximum(marks - 1, 0), marks + 1])
    probes = probes[probes < n]
    on_gpu = target.spec.device == "gpu"
    if on_gpu:
        import cupy as xp
    else:
        xp = np
    x = xp.zeros(n, dtype=xp.float32)
    x[xp.asarray(marks)] = 1
    # On a GPU the output stays there: only the steps and probes come back, not 8 GB.
    out = target.fn(x) if on_gpu else target(x)
    del x
    steps = to_numpy(xp.flatnonzero(out[1:] != out[:-1]) + 1)
    values = to_numpy(out[xp.asarray(probes)])
    inc = target.spec.inclusive
    want_steps = (marks if inc else marks + 1)
    want_steps = want_steps[(want_steps > 0) & (want_steps < n)]
    want = np.searchsorted(marks, probes, side="right" if inc else "left").astype(np.float32)
    if np.array_equal(steps, want_steps) and np.array_equal(values, want):
        return PropertyResult(LARGE, "pass", detail={"n": n})
    bad = int(probes[np.flatnonzero(values != want)[0]]) if not np.array_equal(values, want) else None
    return PropertyResult(LARGE, "fail", "index overflow: wrong past 2**31 elements",
                          {"n": n, "index": bad, "steps at": steps[:8].tolist()})


def diagnose(results: list[PropertyResult]) -> str:
    """Combine per-property verdicts into one diagnosis."""
    by = {r.name: r for r in results}
    parts = []
    for r in results:
        if r.status in ("fault", "hang"):
            parts.append(f"{r.status} in '{r.name}': {r.diagnosis}")
    floats = by.get("floats within bound")
    ints = by.get("integers exact")
    if floats and floats.status == "fail":
        if ints and ints.status == "pass":
            parts.append("precision lost: floats beyond any rounding bound while integers are "
                         "exact (an intermediate kept in lower precision?)")
        else:
            parts.append("logic error")
    elif ints and ints.status == "fail":
        parts.append("logic error")
    for name, text in (("nan and inf", "IEEE NaN/inf semantics broken"),
                       ("deterministic", "non-deterministic (a data race?)"),
                       ("recurrence", "non-commutative operator mishandled (operand order)"),
                       (LARGE, "index overflow past 2**31")):
        if by.get(name) and by[name].status == "fail":
            parts.append(text)
    for r in results:
        if r.name.startswith("sanitizer") and r.status == "fail":
            parts.append(r.diagnosis)
    return "; ".join(dict.fromkeys(parts))


def check(target: Target, properties: tuple[str, ...] = PROPERTIES, large: bool = False,
          max_examples: int = 40, max_n: int = 5000) -> ConformanceReport:
    """Check ``target`` in this process against every property (and n past 2**31 if ``large``)."""
    t0 = time.time()
    props = tuple(properties) + ((LARGE,) if large else ())
    results = []
    for p in props:
        try:
            results.append(check_property(target, p, max_examples, max_n))
        except Exception as exc:  # a target that raises is a verdict, not a crash of ours
            results.append(PropertyResult(p, "fault", f"{type(exc).__name__}: {str(exc)[:300]}"))
    return ConformanceReport(target.name, asdict(target.spec), results, time.time() - t0)


# -- isolation: each target in child processes ----------------------------------------


def check_isolated(
    locator: str, properties: tuple[str, ...] = PROPERTIES, large: bool = False,
    max_examples: int = 40, max_n: int = 5000, timeout: float = 120.0,
    sanitize: tuple[str, ...] = (), spec: TargetSpec | None = None,
) -> ConformanceReport:
    """:func:`check` with the target in child processes: a fault or a hang ends only the child.

    A child reports each property as it finishes; when one faults (dies) or hangs (runs
    past ``timeout`` seconds), that property is reported so and a new child goes on with
    the rest.  ``sanitize`` names compute-sanitizer tools to run the target under.
    """
    t0 = time.time()
    todo = list(properties) + ([LARGE] if large else [])
    results: dict[str, PropertyResult] = {}
    name = locator
    while todo:
        out, got, started, proc_err, status = _run_child(
            locator, todo, max_examples, max_n, timeout, spec)
        name = out.get("target", name)
        results.update(got)
        todo = [p for p in todo if p not in results]
        if not todo:
            break
        current = started or todo[0]
        if status == "timeout":
            results[current] = PropertyResult(current, "hang", f"no answer in {timeout:.0f} s "
                                              "(e.g. a block waiting on one never scheduled)")
        else:
            results[current] = PropertyResult(current, "fault", _fault_message(proc_err, status))
        todo = [p for p in todo if p != current]
    ordered = [results[p] for p in list(properties) + ([LARGE] if large else []) if p in results]
    for tool in sanitize:
        ordered.append(_sanitize(locator, tool, timeout))
    spec_dict = asdict(spec) if spec else {}
    return ConformanceReport(name, spec_dict, ordered, time.time() - t0)


def _exit_text(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


def _fault_message(stderr: str, status: str = "") -> str:
    """The runtime's own words where it left any (an illegal address, say), else how it died."""
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    keys = ("Error", "error", "illegal", "fault", "Killed", "Segmentation")
    hits = [ln for ln in lines if any(k in ln for k in keys)]
    died = status.replace("died", "the process died").strip() or "the process died"
    return (hits[-1] if hits else died)[:400]


def _run_child(locator: str, props: list[str], max_examples: int, max_n: int, timeout: float,
               spec: TargetSpec | None) -> tuple[dict, dict[str, PropertyResult], str | None, str, str]:
    """Run properties in one child; stop it when one property runs past ``timeout`` seconds."""
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl", delete=False) as fh:
        path = fh.name
    cmd = [sys.executable, "-m", "scancheck.conformance", locator, path, "--max-examples",
           str(max_examples), "--max-n", str(max_n), "--props", *props]
    if spec is not None:
        cmd += ["--spec", json.dumps(asdict(spec))]
    head: dict = {}
    got: dict[str, PropertyResult] = {}
    started: str | None = None
    # Until the first property starts, the child is importing and loading: give it a
    # minute, so that a short hang timeout measures the target, not the start-up.
    since, limit = time.time(), max(timeout, 60.0)
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, text=True,
                                start_new_session=True)
        with open(path) as progress:

            def read_events() -> None:
                nonlocal head, started, since, limit
                for line in progress.readlines():
                    ev = json.loads(line)
                    if ev["event"] == "target":
                        head = ev
                    elif ev["event"] == "start":
                        started, since, limit = ev["property"], time.time(), timeout
                    elif ev["event"] == "result":
                        r = PropertyResult(**ev["result"])
                        got[r.name] = r
                        started = None if started == r.name else started

            status = "ok"
            while True:
                read_events()
                if proc.poll() is not None:
                    if proc.returncode != 0:
                        status = f"died ({_exit_text(proc.returncode)})"
                    break
                if time.time() - since > limit:
                    os.killpg(proc.pid, signal.SIGKILL)  # the whole group: a hung kernel's process included
                    proc.wait()
                    status = "timeout"
                    break
                time.sleep(0.1)
            read_events()  # whatever the child wrote last
        err.seek(0)
        stderr = err.read()
    os.unlink(path)
    return head, got, started, stderr, status


def _sanitize(locator: str, tool: str, timeout: float) -> PropertyResult:
    from .sanitizer import find_sanitizer, run_command

    name = f"sanitizer: {tool}"
    if find_sanitizer() is None:
        return PropertyResult(name, "skip", "compute-sanitizer is not installed")
    cmd = [sys.executable, "-m", "scancheck.conformance", locator, os.devnull, "--smoke"]
    # Instrumented runs are 10-100x slower; a hang timeout sized for plain runs would cut
    # a sound target off under the sanitizer.
    rep = run_command(tool, cmd, locator, timeout=max(timeout * 4, 120.0))
    if rep.timed_out:
        return PropertyResult(name, "hang", f"no answer under {tool}")
    if rep.issues > 0:
        kind = {"racecheck": "data race", "synccheck": "barrier misuse",
                "memcheck": "memory error", "initcheck": "uninitialised read"}[tool]
        return PropertyResult(name, "fail", f"{kind}: {rep.issues} reported",
                              detail={"first": rep.first_lines(3)})
    if rep.returncode != 0 or rep.issues < 0:
        return PropertyResult(name, "fault", _fault_message(rep.output))
    return PropertyResult(name, "pass")


def _child(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m scancheck.conformance")
    ap.add_argument("locator")
    ap.add_argument("out")
    ap.add_argument("--props", nargs="*", default=list(PROPERTIES))
    ap.add_argument("--max-examples", type=int, default=40)
    ap.add_argument("--max-n", type=int, default=5000)
    ap.add_argument("--spec")
    ap.add_argument("--smoke", action="store_true", help="run a few fixed cases once (sanitizer)")
    args = ap.parse_args(argv)
    spec = TargetSpec(**{k: tuple(v) if isinstance(v, list) else v
                         for k, v in json.loads(args.spec).items()}) if args.spec else None
    target = resolve(args.locator, spec)
    if args.smoke:
        # One launch past a block edge: the sanitizer's cost is its start, not the cases.
        n = min(257, target.spec.max_n or 257)
        target(Case(n, target.spec.dtypes[0], "uniform", n).data(target.spec.op))
        return 0
    with open(args.out, "w", buffering=1) as fh:
        fh.write(json.dumps({"event": "target", "target": target.name}) + "\n")
        for p in args.props:
            fh.write(json.dumps({"event": "start", "property": p}) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
            r = check_property(target, p, args.max_examples, args.max_n)
            fh.write(json.dumps({"event": "result", "result": asdict(r)}, default=_jsonable) + "\n")
            fh.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
