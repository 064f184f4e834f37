"""``scancheck check --report report.md``: the verdicts as a person reads them.

Per target: the verdict and its one diagnosis, every property's line, and for a target that
fails, its smallest failing case as a Python snippet that rebuilds the input, calls the
target and prints the output beside the exact answer -- with NumPy alone (and the target's
own library), no scancheck.  The environment the run saw closes the report.
"""

from __future__ import annotations

import base64
import datetime
import importlib.metadata
import math
import os
import platform
import subprocess
import textwrap
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ...adapters import reproducer_call
from ...core.arrays import as_dtype
from ...core.dtypes import is_float
from ...core.loading import is_file_form, shadowed_beside
from ...core.monoids import Monoid, monoid_locator
from ...core.operators import get_operator
from ...core.rules import flushed_dtypes
from ...engine.cases import Case
from ...engine.diagnosis import Cause, Diagnosis, Finding
from ...engine.options import CheckOptions
from ...engine.report import ConformanceReport
from ...targets.spec import output_dtype, reverse_convention

#: Inputs up to this many bytes are written into the snippet; larger ones beside the report.
INLINE_BYTES = 1 << 16
#: Inputs of this many elements or fewer are written out as values a reader can read.
SHOWN_ELEMENTS = 32
#: Runs a snippet of a non-deterministic scan compares, bit for bit: the check saw bits
#: differ within four.
DIFFERING_RUNS = 50

def environment() -> dict[str, str]:
    """What ran the check: Python, the platform, library versions, the GPUs and driver."""
    env = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
           "python": platform.python_version(), "platform": platform.platform()}
    for dist in ("scancheck", "numpy", "hypothesis", "mpmath", "ml_dtypes", "cupy-cuda12x",
                 "cupy-cuda13x", "torch", "jax", "jaxlib"):
        try:
            env[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=index,name,driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        if smi.returncode == 0 and smi.stdout.strip():
            env["GPUs (index, name, driver)"] = "; ".join(smi.stdout.strip().splitlines())
    except (OSError, subprocess.TimeoutExpired):
        env["GPUs"] = "none (no nvidia-smi)"
    return env


def _input_of(report: ConformanceReport, case: dict[str, Any], prop: str
              ) -> tuple[np.ndarray, int | None]:
    """The failing input, rebuilt bit for bit from its case (and the axis of a batched one):
    the input at a type's limits it names where it was judged on one."""
    if "edge input" in case:
        return np.array(case["edge input"], dtype=as_dtype(case["dtype"])), None
    c = Case(int(case["n"]), case["dtype"], case["data"], int(case["seed"]),
             int(case.get("drawn", 0)), int(case.get("skip", 0)))
    if prop == "rows":
        from ...engine.layouts import batch
        from ...targets.spec import ranks_taken

        spec_axis = report.spec.get("axis")
        b = batch(c, fixed_axis=spec_axis if isinstance(spec_axis, int) else None,
                  ranks=ranks_taken(spec_axis, tuple(report.spec.get("ndim") or ())),
                  layout=case.get("layout"))
        # The axis the check handed (counted from the front, where a negative one was refused).
        return b.x, int(case.get("axis", b.axis))
    return c.data(report.spec["op"]), None


def _shown(x: np.ndarray) -> str | None:
    """An expression a reader reads as ``x``'s values -- ``np.array([...], dtype=...)`` --
    where ``x`` is contiguous, holds at most :data:`SHOWN_ELEMENTS` and the expression
    rebuilds it bit for bit (booleans, integers and NumPy's floats without NaN, whose payload
    a literal loses); else None."""
    if x.size > SHOWN_ELEMENTS or not x.flags.c_contiguous:
        return None
    flat = x.ravel()
    if flat.dtype.kind in "biu":
        items = [repr(v) for v in flat.tolist()]
        if np.array(flat.tolist(), dtype=x.dtype).tobytes() != flat.tobytes():
            return None
    elif flat.dtype.kind != "f" or np.isnan(flat).any():
        return None
    else:
        # Each value's shortest digits in its own type, unless a value read from them as a
        # Python float rounds to another (a double rounding): then the float64 digits.
        for items in ([str(v) for v in flat], [repr(v) for v in flat.tolist()]):
            with np.errstate(all="ignore"):
                back = np.array([float(t) for t in items], dtype=x.dtype)
            if back.tobytes() == flat.tobytes():
                break
        else:
            return None
        items = [t.replace("inf", "np.inf") for t in items]
    shape = f".reshape({tuple(x.shape)})" if x.ndim != 1 else ""
    return f'np.array([{", ".join(items)}], dtype=np.dtype("{x.dtype.name}")){shape}'


def _literal(x: np.ndarray, files: Path, name: str) -> str:
    """Python lines that rebuild ``x`` as ``x``, its memory layout included: its values
    written out (:func:`_shown`), inline (zlib, base64) or from a .npy file."""
    if x.ndim > 1 and not x.flags.c_contiguous:
        root = x
        while isinstance(root.base, np.ndarray):
            root = root.base
        offset = (x.__array_interface__["data"][0] - root.__array_interface__["data"][0])
        # The buffer the view lies in, then the same view of it: strides, order and offset.
        return (_literal(root.ravel(order="K"), files, name).replace("x = ", "buf = ", 1) +
                f"x = np.lib.stride_tricks.as_strided(buf[{offset // x.itemsize}:], "
                f"shape={tuple(x.shape)}, strides={tuple(x.strides)})\n")
    x = np.ascontiguousarray(x)
    dtype = x.dtype.name
    make = f'np.dtype("{dtype}")' if dtype != "bfloat16" else "ml_dtypes.bfloat16"
    head = "import ml_dtypes\n" if dtype == "bfloat16" else ""
    shown = _shown(x)
    if shown is not None:
        return f"{head}x = {shown}\n"
    if x.nbytes <= INLINE_BYTES:
        blob = base64.b64encode(zlib.compress(x.tobytes(), 9)).decode()
        lines = [f'{blob[i:i + 88]}' for i in range(0, len(blob), 88)] or [""]
        body = "\n".join(f'    "{ln}"' for ln in lines)
        return (f"{head}x = np.frombuffer(zlib.decompress(base64.b64decode(\n{body}\n)), "
                f"dtype={make}).reshape({tuple(x.shape)}).copy()\n")
    files.mkdir(parents=True, exist_ok=True)
    path = (files / f"{name}.npy").resolve()  # found from any folder the snippet runs in
    np.save(path, x.view(np.uint16) if dtype == "bfloat16" else x)
    view = ".view(ml_dtypes.bfloat16)" if dtype == "bfloat16" else ""
    return f'{head}x = np.load("{path}"){view}  # {x.size:,} elements\n'


def _call(target: str, spec: dict[str, Any], axis: int | None, locator: str | None = None
          ) -> tuple[str, str]:
    """Imports and the expression that runs ``target`` on ``x`` (scancheck's own kernels and
    models resolved by ``locator`` where given: their shown name may be none)."""
    ax = str(axis if axis is not None else 0)
    plain = reproducer_call(target)
    if plain is not None:
        imports, call = plain
        return imports, call.replace("AXIS", ax)
    path = _user_path(target)
    if path is not None:
        args, note = (f"x, {ax}" if spec.get("axis") == "arg" else "x"), ""
        if spec.get("initial"):  # x[0] is the initial value, the rest the data
            # An exclusive scan never reads its last element: the check put a value there
            # other than the initial value, as this does.
            args = ("x[1:], initial=x[0]" if spec.get("inclusive") else
                    "np.concatenate([x[1:], x[-1:] if x.size > 1 and x[-1] != x[0] else "
                    "(1 - 2 * x[:1] if x.dtype.kind == 'f' else ~x[:1])]), initial=x[0]")
            note = "# x below: x[0] is the initial value, x[1:] the data" + (
                "\n" if spec.get("inclusive") else "; the call appends one element\n# (an "
                "exclusive scan never reads its last input: one other than the initial value)\n")
        return _imported(path)[0] + note, f"{path.rsplit(':', 1)[1]}({args})"
    # scancheck's own kernels and .cu files need its launcher: the one line that does.
    return ("from scancheck.targets.resolve import resolve  # the target needs scancheck's harness\n",
            f'resolve("{_resolved_by(target, locator)}")(x{", " + ax if axis is not None else ""})')


def _imported(path: str) -> tuple[str]:
    """Lines that import the function of ``package.module:fn`` or ``path/to/file.py:fn``
    (the file loaded from where the check loaded it, whatever the folder the snippet runs
    in) under its own name, or exit 125 where it cannot be loaded: ``git bisect run`` skips a
    revision it cannot test."""
    file = is_file_form(path)
    module, fn = path.rsplit(":", 1) if file else path.split(":", 1)
    head = fn.split(".")[0]
    if not file:
        load = f"from {module} import {head}\n"
    else:
        where = os.path.abspath(module)
        # A directory beside the file named as an installed package it imports would shadow
        # that package once the folder is on the path: such packages are imported first.
        folder, real = os.path.dirname(where), os.path.dirname(os.path.realpath(where))
        shadowed = shadowed_beside(where)
        first = (f"_path = sys.path[:]  # {folder} off the path: its "
                 f"{', '.join(n + '/' for n in shadowed)} is no package\n"
                 f"sys.path[:] = [p for p in _path if os.path.realpath(p) != {real!r}]\n"
                 f"import {', '.join(shadowed)}\nsys.path[:] = _path\n") if shadowed else ""
        load = (f"import importlib.util, {'os, ' if shadowed else ''}sys\n" + first +
                f"sys.path.append({folder!r})  # the modules beside it\n"
                f"_spec = importlib.util.spec_from_file_location('target', {where!r})\n"
                "_module = importlib.util.module_from_spec(_spec)\n"
                f"_spec.loader.exec_module(_module)\n{head} = _module.{head}\n")
    return ("try:\n" + textwrap.indent(load, "    ") +
            "except Exception as exc:  # no target to test here: git bisect run skips it\n"
            "    print('the target cannot be loaded:', repr(exc))\n"
            "    raise SystemExit(125)\n",)


#: The modules a snippet may use, each imported where its body names it.
_HEADER = (("import base64\n", "base64."), ("import math\n", "math."),
           ("import zlib\n", "zlib."), ("from fractions import Fraction\n", "Fraction"),
           ("import mpmath\n", "mpmath."), ("import numpy as np\n", "np."))


def _snippet(lines: list[str]) -> str:
    """The snippet of ``lines``, under the imports of the modules they use and no other (a
    reader's environment with NumPy alone runs one that needs nothing else)."""
    body = "".join(lines)
    return "".join(imp for imp, used in _HEADER if used in body) + "\n" + body


#: Lines finding ``members``, the rows of the segment that holds row ``p``, from the
#: description ``seg`` of each kind (an empty segment holds no row).
_MEMBERS = {
    "offsets": "s = int(np.searchsorted(seg, p, 'right')) - 1\n"
               "members = np.arange(seg[s], seg[s + 1])\n",
    "flags": "heads = seg.copy()\nheads[0] = True\nstart = np.flatnonzero(heads[:p + 1])[-1]\n"
             "after = np.flatnonzero(heads[p + 1:])\n"
             "members = np.arange(start, p + 1 + after[0] if after.size else len(seg))\n",
    "keys": "ids = np.cumsum(np.r_[False, seg[1:] != seg[:-1]])\n"
            "members = np.flatnonzero(ids == ids[p])\n",
    "groups": "members = np.flatnonzero(seg == seg[p])\n",
}


def _segmented_reproducer(report: ConformanceReport, verdict: Any, files: Path,
                          name: str) -> str:
    """The shrunk input and its segment description as literals, the call ``fn(x, seg)``,
    and the failing output beside the exact scan of its segment alone, in plain NumPy and
    Python; for a call that raised, the input its seed drew and the call
    (:func:`_segmented_call`)."""
    spec = report.spec
    case = verdict.smallest_case or {}
    desc = case.get("description")
    if case.get("index") is None:
        return _segmented_call(report, verdict, files, name)
    kind = _segments_kind(report, case)
    x = np.array(case["x"], dtype=as_dtype(case["dtype"])).reshape(case["shape"])
    if "memory" in case:  # handed in that memory layout, which the literal keeps
        from ...engine.layouts import laid_out

        x = laid_out(x, case["memory"])
    p, col = int(case["index"]), int(case.get("column", 0))
    zeros = spec.get("zeros", "either")
    imports, fn, args, get = _segmented_fn(report)
    seg = f"seg = np.array({desc['values']!r}, dtype=np.{desc['dtype']})  # {kind}\n"
    if verdict.cause == Cause.NONDETERMINISM:  # no value is wrong: runs are held to each other
        return _snippet([imports, _literal(x, files, name), seg,
                         *_runs_compared(f"{get}({fn}({args}))")])
    out_dtype = output_dtype(spec.get("promote", ()), x.dtype)  # the type the target returns
    from ...oracle.segmented import segment_ids

    ids = segment_ids(kind, np.array(desc["values"], dtype=desc["dtype"]), x.shape[0])
    members = np.flatnonzero(ids == ids[p])
    k = int(np.flatnonzero((members[::-1] if spec.get("reverse") else members) == p)[0])
    got = f"got = {get}({fn}({args})).reshape(len(x), -1)\n"
    lines = [imports, _literal(x, files, name), seg, got,
             f"p, col = {p}, {col}  # the failing output: row p, column col of (T, -1)\n"
             if x.ndim > 1 else f"p, col = {p}, 0  # the failing output p (one column: x is "
             f"1-D)\n",
             _MEMBERS[kind],
             "members = members[::-1]  # a reverse scan: from the segment's end\n"
             if spec.get("reverse") else "",
             "row = x.reshape(len(x), -1)[members, col]  # the segment alone, in scan order\n",
             f"k = int(np.flatnonzero(members == p)[0])  # {k}: its place in the segment\n",
             _expected(spec["op"], spec["inclusive"], out_dtype, k, zeros=zeros),
             _still(case, "got[p, col]", _exact_rule(spec, out_dtype, verdict.source),
                    again=got, zero=_zero_rule(spec, out_dtype),
                    family=get_operator(spec["op"]).family,
                    show='print(f"output {p}' + (', column {col}' if x.ndim > 1 else '') +
                    ': got", got[p, col], "exact", float(exact) if isinstance(exact, '
                    'Fraction) else exact)\n')]
    return _snippet(lines)


def _runs_compared(call: str) -> list[str]:
    """Lines that run ``call`` :data:`DIFFERING_RUNS` times on one input and end with "still
    reproduces" (1) where the bits of some run differ from the first's, else "does not
    reproduce" (0): a non-deterministic scan's runs held to each other."""
    return [f"runs = [{call}.copy() for _ in range({DIFFERING_RUNS})]  # one input\n",
            "differ = sum(r.tobytes() != runs[0].tobytes() for r in runs[1:])\n",
            'print(differ, "of", len(runs) - 1, "runs differ from the first in their bits")\n',
            'verdict, status = (("still reproduces", 1) if differ else\n'
            f'                   ("does not reproduce in {DIFFERING_RUNS} runs", 0))\n'
            "print(verdict)\nraise SystemExit(status)\n"]


def _segmented_fn(report: ConformanceReport) -> tuple[str, str, str, str]:
    """A segmented target's imports, its function, the arguments ``fn(x, seg)`` is called
    with and the function that brings its output to the host."""
    imports, fn = _loaded(report.target, report.locator)
    if report.spec.get("device") == "gpu":
        return imports + "import cupy as cp\n", fn, "cp.asarray(x), cp.asarray(seg)", "cp.asnumpy"
    return imports, fn, "x, seg", "np.asarray"


def _user_path(target: str) -> str | None:
    """``module:fn`` or ``path/to/file.py:fn`` where ``target`` names a user's function (a
    script imports it), else None: scancheck's kernels, models, ``.cu`` files and built-in
    ``scancheck:`` variants load through its resolver."""
    path = target[len("import:"):] if target.startswith("import:") else target
    if ":" not in path or path.endswith(".cu") or path.startswith(
            ("kernel:", "model:", "cu:", "scancheck:")):
        return None
    return path


def _loaded(target: str, locator: str | None = None) -> tuple[str, str]:
    """Lines that load ``target``'s function, and the expression that names it: a user's
    module or file imported as :func:`_imported` does, a built-in found by scancheck's
    resolver (by ``locator`` where given)."""
    path = _user_path(target)
    if path is not None:
        return _imported(path)[0], path.rsplit(":", 1)[1]
    return ("from scancheck.targets.resolve import resolve\n",
            f"resolve({_resolved_by(target, locator)!r}).fn")


def _resolved_by(target: str, locator: str | None) -> str:
    """The name scancheck's resolver loads ``target`` by: its locator where that names one of
    scancheck's kernels or models (a name such as ``scancheck:kogge_stone (block 128)`` says
    the block, which only the locator holds in a form the resolver reads), else its name."""
    if locator and locator.startswith(("kernel:", "model:")):
        return locator
    return target


def _segmented_call(report: ConformanceReport, verdict: Any, files: Path, name: str) -> str:
    """The input and segment description the case's seed drew, rebuilt bit for bit, and the
    call ``fn(x, seg)`` that raised (a fault, an empty input refused: no output to hold to
    an exact scan)."""
    case = verdict.smallest_case or {}
    from ...engine.layouts import laid_out
    from ...engine.properties.segments import drawn
    from ...targets.spec import spec_from_json

    c = Case(int(case.get("drawn") or case["n"]), case["dtype"], case["data"], int(case["seed"]))
    kind = _segments_kind(report, case)
    spec = spec_from_json(report.spec)
    if kind != spec.segments.partition(":")[0]:
        spec = replace(spec, segments=kind)
    x, layout, memory = drawn(spec, c)
    desc = layout.description()
    imports, fn, args, get = _segmented_fn(report)
    note = verdict.text if verdict.status in ("fault", "hang") else ""
    return _snippet([imports, _literal(laid_out(x, memory), files, name),
                     f"seg = np.array({desc.tolist()!r}, dtype=np.{desc.dtype})  # {kind}\n",
                     f"# In the check this call did not return: {note}\n" if note else "",
                     f"got = {get}({fn}({args}))\n",
                     'print("got", got.shape, got.dtype)\n'])


def _segments_kind(report: ConformanceReport, case: dict[str, Any]) -> str:
    """The kind of segment description the case was handed: the spec's, or the one a
    contract the check tried declared (a case told under it is rebuilt as it was run)."""
    return str(case.get("segments") or report.spec["segments"]).partition(":")[0]


#: Calls a snippet makes at most of a case the check saw right in another run, until one
#: comes out wrong: a bug that strikes one call in 32 shows within 200 but 2 times in 1,000.
REPRODUCER_RUNS = 200


def _still(case: dict[str, Any], output: str, exact_rule: bool, again: str = "",
           zero: str = "", family: str = "sum", show: str = "") -> str:
    """Lines that judge ``output`` as it is now against what the check saw there and against
    ``exact``: "still reproduces" and exit status 1 (as ``git bisect run`` reads a bad
    revision) while the call gives the value seen, a zero's sign included; "does not
    reproduce" and 0 once it gives a right one: within the error the check allows there where
    it judges by a bound (off the exact answer rounded to the output's type for a sum, off
    ``exact`` for a log-sum-exp, as the check measures each), else exactly ``exact`` where
    that is the only right answer (``exact_rule``), a zero of its sign under ``zero`` "sign",
    of a sign the prefix has (``signs``) under "held"; "still wrong, with another value" and
    1 where it gives neither; and where neither criterion is known here (a float output the
    check judged by its own rules), "another value" and 125, which ``git bisect run`` skips:
    a check of that revision judges it.  Where the check saw the case right in another run,
    ``again`` (lines that call the target anew) runs until the output is wrong,
    :data:`REPRODUCER_RUNS` calls at most; ``show``, the line printing the output, runs
    after the last call, so that what it prints is what is judged."""
    if "got" not in case:
        return show
    got = case["got"]
    seen = _number_literal(got)
    lines = [f"seen = {seen}  # what the check saw there\n"]
    # -0.0 == 0.0: a mend that turns the zero seen into the other one is not the value seen.
    judge = [f"now = {output}\n", "same = bool(np.all(now == seen) and np.all(np.signbit(now) "
             "== np.signbit(seen))) or bool(np.all(np.isnan(np.asarray(now, dtype=float))) and "
             "np.isnan(seen))\n"]
    allowed = case.get("allowed error")
    if allowed is not None and family == "logsumexp":  # the check's own test: off the
        # float64 reference, which ``exact`` (to 60 digits) stands in for, by its bound
        lines.append(f"allowed = {allowed!r}  # the error the check allows there: its bound "
                     f"on a log-sum-exp of these terms\n")
        judge.append("right = bool(np.isfinite(float(now)) and mpmath.isfinite(exact) and "
                     "abs(float(now) - float(exact)) <= allowed)\n")
    elif allowed is not None:  # the check's own test: off the exact answer rounded, by the bound
        lines += [f"rounded = {case['expected']!r}  # the exact answer in the output's type\n",
                  f"allowed = {allowed!r}  # the error the check allows there: the rounding "
                  "bound of any summation order\n"]
        judge.append("right = bool(np.isfinite(float(now)) and np.isfinite(rounded) and "
                     "abs(Fraction(float(now)) - Fraction(rounded)) <= allowed)\n")
    else:
        equal = {"": "now == exact",
                 "sign": "now == exact and np.signbit(now) == np.signbit(exact)",
                 "held": "now == exact and (now != 0 or math.copysign(1.0, now) in signs)"
                 }[zero]
        judge.append(f"right = bool({equal}) or (exact is not None and bool("
                     "np.isnan(float(now)) and np.isnan(float(exact))))\n")
    lines += judge
    if case.get("reruns right") and again:
        body = "".join("    " + ln for ln in (again + "".join(judge)).splitlines(True))
        lines.append(f"runs = 1\n# The check saw this case right in {case['reruns right']} more "
                     f"runs: wrong in some runs only, it is called until it shows wrong.\n"
                     f"while right and runs < {REPRODUCER_RUNS}:\n{body}    runs += 1\n"
                     f'print("calls:", runs)\n')
    lines.append(show)
    other = ('"still wrong, with another value", 1' if allowed is not None or exact_rule else
             '"another value, not the exact one: check the target again to judge it", 125')
    return "".join(lines) + (
        "if same:\n    verdict, status = \"still reproduces\", 1\n"
        "elif right:\n    verdict, status = \"does not reproduce\", 0\n"
        f"else:\n    verdict, status = {other}\n"
        "print(verdict)\nraise SystemExit(status)\n")


def _zero_rule(spec: dict[str, Any], dtype: str) -> str:
    """Which zero is right where the right output of a scan of ``spec`` returning ``dtype``
    is a zero, as :func:`_still` reads it: of one sign ("sign": a float max or min declared
    zeros='ordered', -0 < +0), of a sign its prefix has ("held": zeros='either', a max or min
    returns an operand), or either ("")."""
    if not (is_float(dtype) and get_operator(spec["op"]).family == "order"):
        return ""
    return "sign" if spec.get("zeros", "either") == "ordered" else "held"


def _exact_rule(spec: dict[str, Any], dtype: str, prop: str | None) -> bool:
    """Whether the snippet's ``exact`` is the only right output of a scan of ``spec``
    returning ``dtype``, as property ``prop`` judged it: integer sums and products (exact in
    Python's integers, wrapped as the type wraps), max and min (which round nothing; not
    where the spec lets ``dtype``'s subnormals flush, which a compare-and-select may return
    unflushed) and the outputs the exactness certificate holds to it."""
    family = get_operator(spec["op"]).family
    return (as_dtype(dtype).kind in "iub" and family in ("sum", "product")
            or family == "order" and dtype not in flushed_dtypes(spec.get("subnormals", "keep"))
            or prop == "certified exact")


def _expected(op: str, inclusive: bool, dtype: str, k: int, reverse: bool = False,
              nans: str = "propagate", first: int = 0, zeros: str = "either",
              wraps: bool = True, index_of: bool = False, nan_prefix: str = "nan") -> str:
    """:func:`_exact_of`'s lines, then, for a float scan declared nans='skip' or 'ignore',
    the NaN its rule puts there: at a NaN input (skip), or where the whole prefix is NaN
    (ignore: NaN, or the operator's identity under nan_prefix='identity')."""
    lines = _exact_of(op, inclusive, dtype, k, reverse, nans, first, zeros, wraps, index_of)
    if nans == "propagate" or index_of or not is_float(dtype):
        return lines
    if nans == "skip":
        at = k if reverse else first + k
        return lines + (f"if np.isnan(float(row[{at}])):\n    exact = float('nan')  # skip: "
                        f"NaN at each NaN input\n")
    held = (f"float({str(float(get_operator(op).identity(dtype)))!r})"
            if nan_prefix == "identity" else "float('nan')")
    return lines + (f"if not vals.size:\n    exact = {held}  # ignore: the whole prefix is NaN "
                    f"(nan_prefix={nan_prefix!r})\n")


def _exact_of(op: str, inclusive: bool, dtype: str, k: int, reverse: bool = False,
              nans: str = "propagate", first: int = 0, zeros: str = "either",
              wraps: bool = True, index_of: bool = False) -> str:
    """Lines computing ``exact``, the right value of output k of a scan in ``dtype`` (the
    type the target returns), in plain Python: of ``row[first:]``, forward or (``reverse``)
    from output k to the end, under the spec's NaN and zero rules; NaN and infinities as IEEE
    arithmetic has them; an integer sum or product wrapped as the type wraps, or (not
    ``wraps``) in Python's integers; with ``index_of``, the index a cummax or cummin returns
    there (the last position of the running extreme, ties and NaNs to the later)."""
    if reverse:
        prefix = f"row[{k}:]" if inclusive else f"row[{k + 1}:]"
    else:
        end = first + k + 1 if inclusive else first + k
        prefix = f"row[:{end}]"
    if index_of:
        return (f"vals = {prefix}.tolist()\nnans = [j for j, v in enumerate(vals) if v != v]\n"
                f"exact = nans[-1] if nans else max(j for j, v in enumerate(vals) if v == {op}("
                f"vals))  # the last position of the running {op}: ties and NaNs to the later\n")
    vals = f"vals = {prefix}.astype(float)\n"
    if nans != "propagate":  # 'ignore' and 'skip' leave the NaN inputs out of the scan
        vals += "vals = vals[~np.isnan(vals)]  # the spec's NaN rule leaves NaN inputs out\n"
    family = get_operator(op).family
    if family == "order":  # no prefix (an exclusive scan's output 0): the identity
        ident = get_operator(op).identity(dtype).item()
    if family == "order" and as_dtype(dtype).kind in "iub":  # Python's integers: no rounding
        return f"exact = {op}((int(v) for v in {prefix}), default={int(ident)})\n"
    if family == "order" and zeros == "ordered":
        return vals + (f"exact = float('nan') if np.isnan(vals).any() else {op}(vals.tolist(), "
                       f"key=lambda v: (v, math.copysign(1.0, v)), default=float("
                       f"{str(float(ident))!r}))  # -0 < +0, as the spec's zeros='ordered' "
                       f"declares\n")
    if family == "order":
        return vals + (f"exact = float('nan') if np.isnan(vals).any() else {op}(vals.tolist(), "
                       f"default=float({str(float(ident))!r}))\n"
                       f"signs = {{math.copysign(1.0, v) for v in vals.tolist() if v == 0}}"
                       f"  # -0 and +0 tie (zeros='either'): a zero of a sign the prefix has\n")
    fold = "math.prod" if family == "product" else "sum"
    if as_dtype(dtype).kind in "iu" and not wraps:
        return f"exact = {fold}(int(v) for v in {prefix})  # in Python's integers: no wrapping\n"
    if as_dtype(dtype).kind in "iu":
        bits = as_dtype(dtype).itemsize * 8
        lo = int(np.iinfo(as_dtype(dtype)).min)
        return (f"exact = ({fold}(int(v) for v in {prefix}) - ({lo})) % 2**{bits} + ({lo})"
                f"  # wraps as {dtype} does\n")
    if family == "logsumexp":
        return vals + ("mpmath.mp.dps = 60\nexact = mpmath.log(mpmath.fsum(mpmath.exp(v) for v "
                       "in vals.tolist()))  # to 60 digits\n")
    if family == "product":  # 53 bits a factor: no rounding; infinities and NaN as IEEE has them
        return vals + ("mpmath.mp.prec = 53 * len(vals) + 10\nexact = mpmath.fprod("
                       "vals.tolist())  # no rounding\n")
    return vals + ("exact = (sum(Fraction(v) for v in vals.tolist()) if np.isfinite(vals).all() "
                   "else float(np.sum(vals)))  # no rounding; NaN and infinities as IEEE\n")


def _must_raise(spec: dict[str, Any], x: np.ndarray, case: dict[str, Any], axis: int | None,
                row: tuple, out_dtype: str) -> bool:
    """Whether the one right answer of the case's call is to raise: the spec declares
    overflow='raise' for an integer sum or product, and some output's exact prefix in the
    case's row (of ``x`` as the call gets it) leaves ``out_dtype``."""
    if (spec.get("overflow") != "raise" or as_dtype(out_dtype).kind not in "iu"
            or get_operator(spec["op"]).family not in ("sum", "product")):
        return False
    from ...engine.properties.overflow import first_overflow

    values = x if axis is None else np.moveaxis(x, axis, -1)[row]
    if case.get("reversed"):  # the call gets it flipped
        values = values[::-1]
    if spec.get("reverse"):  # its outputs are the suffixes
        values = values[::-1]
    inclusive = bool(spec["inclusive"] or spec.get("initial"))
    return first_overflow(np.ascontiguousarray(values), spec["op"], inclusive, out_dtype) is not None


def _raise_expected(case: dict[str, Any], call: str, row_x: str, row_got: str, k: int,
                    exact: str, out_dtype: str, identity: int) -> list[str]:
    """The lines from the call on where the one right answer is to raise (declared
    overflow='raise', a prefix leaving ``out_dtype``): "still reproduces" (1) while it returns
    the value seen, "still wrong, with another value" (1) while it returns another, "does not
    reproduce" (0) once it raises where the same call on an input of the identity returns,
    and 125 (``git bisect run``'s skip) where that call raises too: it raises for another
    reason.  A case the check saw right in other runs is called until it returns."""
    info = np.iinfo(as_dtype(out_dtype))
    reruns = case.get("reruns right")
    again = ("runs = 1\n"
             f"# The check saw this case raise in {reruns} more runs: wrong in some runs "
             f"only, it is called until it returns.\n"
             f"while isinstance(got, Exception) and runs < {REPRODUCER_RUNS}:\n"
             "    got = call()\n    runs += 1\n"
             'print("calls:", runs)\n') if reruns else ""
    return [
        "\n\ndef call():\n    \"\"\"The target on x: its output, or what it raised.\"\"\"\n"
        f"    try:\n        return np.asarray({call})\n"
        f"    except Exception as exc:  # declared overflow='raise': right where a prefix "
        f"leaves {out_dtype}\n        return exc\n\n\n",
        "got = call()\n",
        f"row = {row_x}\n",
        exact,
        f'print("output {k}: exact prefix", exact, "- a prefix of x leaves {out_dtype} '
        f'({info.min} to {info.max}): declared overflow=\'raise\', the call must raise")\n',
        f"seen = {case['got']!r}  # what the check saw there\n",
        again,
        "if isinstance(got, Exception):\n"
        '    print("raised", type(got).__name__ + ":", got)\n'
        f"    x_case, x = x, np.full_like(x, {identity!r})  # no prefix leaves {out_dtype} here\n"
        "    plain = call()\n    x = x_case\n"
        "    if isinstance(plain, Exception):\n"
        f'        verdict, status = "raised where no prefix leaves {out_dtype} too: check the '
        f'target again to judge it", 125\n'
        "    else:\n"
        '        verdict, status = "does not reproduce", 0\n'
        "else:\n"
        f"    now = {row_got}[{k}]\n"
        f'    print("output {k}: got", now)\n'
        '    verdict, status = (("still reproduces", 1) if now == seen else\n'
        '                       ("still wrong, with another value", 1))\n'
        "print(verdict)\nraise SystemExit(status)\n",
    ]


def _number_literal(v: Any) -> str:
    """``v`` as Python source: ``float('inf')`` and ``float('nan')`` for what repr writes as
    names no script defines."""
    return f"float({str(v)!r})" if isinstance(v, float) and not math.isfinite(v) else repr(v)


def _tuple_literal(values: Any) -> str:
    """A tuple of numbers as Python source (:func:`_number_literal` each)."""
    items = [_number_literal(v) for v in values]
    return f"({', '.join(items)}{',' if len(items) == 1 else ''})"


def _monoid_reproducer(report: ConformanceReport, case: dict[str, Any], prop: str) -> str:
    """The failing case of a target over tuples of arrays: its elements drawn again from the
    monoid and the seed (a monoid's draw is its own: no literal), the call, and its output k
    judged against the one the check saw and the exact scan (as :func:`_still` judges a
    scan of arrays; 125 where the monoid rounds and has no exact scan)."""
    spec = report.spec
    op = spec.get("op")
    if isinstance(op, Monoid):  # a report made in this process: the name it loads back by
        op = monoid_locator(op)
    if case["data"] in ("drawn", "declared monoid"):
        if is_file_form(op):  # loaded from where the check loaded it, from any folder
            path, attr = op.rsplit(":", 1)
            op = f"{os.path.abspath(path)}:{attr}"
        # As a target that cannot be loaded: exit 125, which git bisect run skips.
        monoid = (f"try:\n    monoid = load_monoid({op!r})\nexcept Exception as exc:\n"
                  f"    print('the monoid cannot be loaded:', repr(exc))\n"
                  f"    raise SystemExit(125)\n")
    else:
        monoid = f"monoid = PROBES[{case['data']!r}]\n"
    head = ("import numpy as np\nfrom scancheck.core.monoids import PROBES, load_monoid\n\n"
            + monoid)
    if prop == "operator laws":
        return head + ("from scancheck.oracle.monoid_scan import broken_law\n\n"
                       f"broken = broken_law(monoid, {case['n']}, {case['seed']})\n"
                       "print(broken.line(monoid.name) if broken else 'every law holds there')\n"
                       'verdict, status = ("still reproduces", 1) if broken else ("does not '
                       'reproduce", 0)\nprint(verdict)\nraise SystemExit(status)\n')
    shape = tuple(case.get("shape") or (case["n"],))
    axis, row, k = case.get("axis", 0), case.get("row", 0), case.get("index")
    args = ", monoid.bound" if spec.get("combine") else ""
    if spec.get("axis") == "arg":
        args += f", {axis}"
    laid = ("from scancheck.engine.layouts import laid_out\n"
            f"elems = tuple(laid_out(v, m) for v, m in zip(elems, {case['memory']!r}))"
            f"  # each leaf's memory layout\n" if case.get("memory") else "")
    load, fn = _loaded(report.target, report.locator)
    conv = reverse_convention(spec.get("reverse", False))
    judge = "" if "got" not in case or k is None else (
        "from scancheck.oracle.monoid_scan import exact_monoid_scan\n\n\n"
        "def at(leaves):\n    \"\"\"Output k of the row the check names, one value a leaf.\"\"\"\n"
        "    return tuple(np.moveaxis(np.asarray(v.get() if hasattr(v, 'get') else v), "
        f"{axis}, -1).reshape(-1, {shape[axis]})[{row}, {k}].item() for v in leaves)\n\n\n"
        "def same(a, b):\n    return all(u == v or (u != u and v != v) for u, v in zip(a, b))\n\n\n"
        f"now = at(got)\nseen = {_tuple_literal(case['got'])}  # what the check saw there\n"
        f"want = exact_monoid_scan(monoid, elems, {bool(spec.get('inclusive', True))}, "
        f"{conv!r}, {axis})\n"
        f"exact = None if want is None else at(want)\n"
        f"print('output {k}: got', now, 'exact', exact)\n"
        "if same(now, seen):\n    verdict, status = 'still reproduces', 1\n"
        "elif exact is not None and same(now, exact):\n"
        "    verdict, status = 'does not reproduce', 0\n"
        "elif exact is not None:\n    verdict, status = 'still wrong, with another value', 1\n"
        "else:  # a rounding monoid: the check judges it within its orders' spread\n"
        "    verdict, status = 'another value, not the one seen: check the target again to "
        "judge it', 125\n"
        "print(verdict)\nraise SystemExit(status)\n")
    return head + (f"elems = monoid.draw(np.random.default_rng({case['seed']}), {shape})\n"
                   + laid + load + f"got = {fn}(elems{args})\n" + judge)


def rebuilds(report: ConformanceReport, finding: Finding | None = None) -> bool:
    """Whether :func:`reproducer` gives a snippet for ``finding`` (default: the report's
    primary cause): its case names the seed that drew its input, or a segmented case keeps
    its input whole; not for a recurrence."""
    verdict = report.verdict if finding is None else finding
    case = verdict.smallest_case or {}
    seeded = {"n", "dtype", "data", "seed"} <= set(case)
    if report.spec.get("segments"):  # a wrong output's input kept whole, or a call that raised
        kept = "x" in case and case.get("description") is not None and "index" in case
        return verdict.source == "segments" and (kept or (seeded and "index" not in case))
    return verdict.source is not None and seeded and report.spec.get("op") != "recurrence"


def reproducer(report: ConformanceReport, files: Path, name: str,
               finding: Finding | None = None) -> str | None:
    """A Python snippet that reproduces one of the report's causes (``finding``; default:
    its primary one), or None where its failure has no case to rebuild (a fault in the
    target's set-up, say)."""
    verdict = report.verdict if finding is None else finding
    case = verdict.smallest_case or {}
    if not rebuilds(report, verdict):
        return None
    # What the failure shows: a Finding's own, a whole verdict's its primary finding's.
    primary = verdict.findings[0] if isinstance(verdict, Diagnosis) and verdict.findings \
        else verdict
    reason = getattr(primary, "reason", "")
    if report.spec.get("segments"):
        return _segmented_reproducer(report, verdict, files, name)
    if verdict.source in ("operator laws", "monoid scan", "probe monoids"):
        return _monoid_reproducer(report, case, verdict.source)
    x, axis = _input_of(report, case, verdict.source)
    imports, call = _call(report.target, report.spec, axis, report.locator)
    # A cummax/cummin with indices returns (values, indices): the part the failure is in.
    index_of = bool(report.spec.get("indices")) and reason == "INDICES"
    if report.spec.get("indices"):
        call += f"[{int(index_of)}]"
    part = (f"  # of (values, indices), the {'indices' if index_of else 'values'}"
            if report.spec.get("indices") else "")
    lines = [imports, _literal(x, files, name), f"got = np.asarray({call}){part}\n"]
    made = []  # the input the call got, from the case's: first opened with NaN, then flipped
    if case.get("lead nans"):  # the NaN rule's own case
        made.append(f"x[:{case['lead nans']}] = np.nan  # the case's input, opened with NaN\n")
    made_as = case.get("input made")
    if made_as:  # judged on an input made from the case's: its specials replaced
        finite = "x" if made_as["finite"] is None else repr(made_as["finite"])
        made.append(f"x[...] = np.where(np.isnan(x), {made_as['nan']!r}, np.where(np.isposinf(x), "
                    f"{made_as['+inf']!r}, np.where(np.isneginf(x), {made_as['-inf']!r}, "
                    f"{finite})))  # the input judged: the case's, its NaN and infinities "
                    f"replaced\n")
    if case.get("reversed"):  # checked as the forward scan of its input reversed
        made.append(f"x[...] = np.flip(x, {axis or 0}).copy()  # the input the call got\n")
    lines[2:2] = made
    if verdict.cause == Cause.NONDETERMINISM:  # no value is wrong: runs are held to each other
        lines[-1:] = _runs_compared(f"np.asarray({call})")
        return _snippet(lines)
    written = case.get("input index")
    if written is not None:  # the call changes x: show the element before and after
        at = ", ".join(map(str, written)) if isinstance(written, list) else str(written)
        lines[-1] = "before = x.copy()\n" + lines[-1]
        lines.append(f'print("x[{at}] was", before[{at}], "is", x[{at}], "after the call")\n'
                     "changed = before.tobytes() != x.tobytes()  # bit for bit, -0.0 and NaNs "
                     "too\n"
                     'verdict, status = ("still reproduces", 1) if changed else ("does not '
                     'reproduce", 0)\nprint(verdict)\nraise SystemExit(status)\n')
        return _snippet(lines)
    k = case.get("index")
    spec = report.spec
    out_dtype = output_dtype(spec.get("promote", ()), x.dtype)  # the type the target returns
    initial = bool(spec.get("initial"))  # x holds the initial value first: inclusive
    zeros = spec.get("zeros", "either")
    if k is not None:
        if axis is not None:
            r = tuple(case.get("row", ()))
            row_x, row_got = f"np.moveaxis(x, {axis}, -1)[{r}]", f"np.moveaxis(got, {axis}, -1)[{r}]"
        else:
            r, row_x, row_got = (), "x", "got"
        must_raise = _must_raise(spec, x, case, axis, r, out_dtype)
        exact = _expected(spec["op"], spec["inclusive"] or initial, out_dtype, k,
                          bool(spec.get("reverse")), spec.get("nans", "propagate"),
                          first=int(initial and spec["inclusive"]), zeros=zeros,
                          wraps=not must_raise, index_of=index_of,
                          nan_prefix=spec.get("nan_prefix", "nan"))
        if must_raise:
            lines[-1:] = _raise_expected(case, call, row_x, row_got, k, exact, out_dtype,
                                         int(get_operator(spec["op"]).identity(out_dtype)))
            return _snippet(lines)
        rows = f"row, got_row = {row_x}, {row_got}\n"
        again = lines[-1] + rows  # the call, and the row it judges
        lines.append(rows)
        lines.append(exact)
        lines.append(_still(case, f"got_row[{k}]",
                            index_of or _exact_rule(spec, out_dtype, verdict.source), again,
                            zero="" if index_of else _zero_rule(spec, out_dtype),
                            family=get_operator(spec["op"]).family,
                            show=f'print("output {k}: got", got_row[{k}], "exact", '
                                 f'float(exact) if isinstance(exact, Fraction) else exact)\n'))
    elif "returned dtype" in case:  # the output's shape or dtype is what failed
        seen = (tuple(case["returned shape"]), case["returned dtype"])
        lines.append(
            f'print("got", got.shape, got.dtype, "for", x.shape, x.dtype, "(its spec says '
            f'{out_dtype})")\n'
            f"seen = {seen!r}  # the shape and dtype the check saw\n"
            "now = (got.shape, str(got.dtype))\n"
            "if now == seen:\n    verdict, status = \"still reproduces\", 1\n"
            f"elif now == (x.shape, {out_dtype!r}):\n"
            "    verdict, status = \"does not reproduce\", 0\n"
            "else:\n    verdict, status = \"still wrong, with another shape or dtype\", 1\n"
            "print(verdict)\nraise SystemExit(status)\n")
    else:
        if verdict.status in ("fault", "hang"):
            # No value to hold the output to: the call itself is what the check saw fail.
            lines.insert(-1, f"# In the check this call did not return: {verdict.text}\n")
        if verdict.status == "hang":
            # A call that never returns ends the script with status 1 (a bad revision to
            # git bisect run) once the check's timeout has passed.
            held = next((r.timeout for r in report.results if r.name == verdict.source
                         and r.timeout), None) or CheckOptions.timeout
            lines.insert(-1, f"import faulthandler\nfaulthandler.dump_traceback_later({held:g}, "
                             f"exit=True)  # a hang: exit 1 after the check's timeout\n")
        if verdict.status == "fault":
            lines[-1:] = _in_a_child(lines[-1])
            return _snippet(lines)
        if reason == "NOT_AN_ARRAY":  # what it returns is the failure: kept as it is
            lines[-1] = (f"got = {call}\n"
                         'print("got", type(got).__name__)\n'
                         'array = hasattr(got, "shape") and hasattr(got, "dtype")\n'
                         'verdict, status = ("does not reproduce", 0) if array else ("still '
                         'reproduces", 1)\nprint(verdict)\nraise SystemExit(status)\n')
            return _snippet(lines)
        lines.append('print("got", got.shape, got.dtype)\n')
    return _snippet(lines)


def _in_a_child(call: str) -> list[str]:
    """Lines that make the ``call`` line in a child process and end with "still reproduces"
    (1) where it raised or its process died, "does not reproduce" (0) where it returned: a
    signal's own status (128 + n, an abort's 134) would stop ``git bisect run``.  Where the
    platform has no fork the call is made in the script's own process."""
    return ["import os\nimport sys\nimport traceback\n\n\n",
            "def call():\n    " + call + "\n\n",
            "def raised():\n    try:\n        call()\n    except BaseException:\n"
            "        traceback.print_exc()\n        sys.stderr.flush()\n        return True\n"
            "    return False\n\n\n",
            'if hasattr(os, "fork"):  # the call in a child process: its crash is told, not '
            "this one's\n    pid = os.fork()\n    if pid == 0:\n"
            "        os._exit(int(raised()))\n"
            "    _, ended = os.waitpid(pid, 0)\n"
            "    if os.WIFSIGNALED(ended):\n"
            '        print("the call\'s process was killed by signal", os.WTERMSIG(ended))\n'
            "    failed = os.WIFSIGNALED(ended) or os.WEXITSTATUS(ended) != 0\n"
            "else:  # no fork (Windows): a crash here ends the script with its own status\n"
            "    failed = raised()\n",
            'verdict, status = ("still reproduces", 1) if failed else ("does not reproduce", 0)\n',
            "print(verdict)\nraise SystemExit(status)\n"]


def markdown(reports: list[ConformanceReport], path: str | Path) -> str:
    """Write the report to ``path`` (inputs too large to inline beside it) and return it."""
    path = Path(path)
    files = path.with_suffix("")
    files = files.parent / f"{files.name}-inputs"
    out = ["# scancheck conformance report", ""]
    out += ["| target | verdict | largest n | seconds | diagnosis |", "|---|---|---|---|---|"]
    for r in reports:
        word = "**does not conform**" if r.failed else r.verdict_word
        out.append(f"| {r.target} | {word} | {r.reached:,} | {r.seconds:.0f} | "
                   f"{_cell(r.summary)} |")
    for i, r in enumerate(reports):
        out += ["", f"## {r.target}", ""]
        verdict = r.verdict
        word = "Does not conform" if r.failed else r.verdict_word.capitalize()
        out.append(f"**{word}**" + (f": {r.summary}" if r.summary else "."))
        if verdict.findings:  # each cause once, the properties it explains folded under it
            out += ["", "Causes, primary first:", ""]
            out += [f"{k}. {_cell(f.folded())}" for k, f in enumerate(verdict.findings, 1)]
        if r.notes:
            out += ["", "Found beside the verdict:", ""] + [f"- {_cell(n)}" for n in r.notes]
        spec = ", ".join(f"{k}={v}" for k, v in r.spec.items())
        out += ["", f"Spec: `{spec}`", "", "| property | verdict | diagnosis / detail | "
                "smallest failing case |", "|---|---|---|---|"]
        out += [f"| {row['property']} | {row['verdict']} | {_cell(row['diagnosis / detail'])} | "
                f"{_cell(row['smallest failing case'])} |" for row in r.rows()]
        out += _curve(r, files, f"bounds-{i}", path.parent)
        causes = verdict.findings or [None] if r.failed else []
        for k, finding in enumerate(causes):  # a snippet for each cause
            snippet = reproducer(r, files, f"case-{i}" + (f"-{k + 1}" if k else ""), finding)
            if snippet:
                how = ("the case drawn again from its monoid and seed" if "load_monoid" in
                       snippet else "NumPy and the target's own library; no scancheck")
                what = f"cause {k + 1}" if len(causes) > 1 else "it"
                out += ["", f"Reproduce {what} ({how}):", "", "```python", snippet.rstrip(),
                        "```"]
    out += ["", "## Environment", "", "| | |", "|---|---|"]
    out += [f"| {k} | {_cell(v)} |" for k, v in environment().items()]
    text = "\n".join(out) + "\n"
    path.write_text(text)
    return text


def _curve(report: ConformanceReport, files: Path, name: str, home: Path) -> list[str]:
    """The float error against the bounds over n: a plot where matplotlib is installed (the
    ``plot`` extra), else a table."""
    curve = next((r.detail["error/bound by n"] for r in report.results
                  if "error/bound by n" in r.detail), None)
    if not curve:
        return []
    dtype = next(r.detail.get("dtype") for r in report.results if "error/bound by n" in r.detail)
    head = ["", f"The error of the last output on uniform {dtype} data, as a fraction of the "
            f"rounding bound (1 is the bound: rounding never passes it):", ""]
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return head + ["| n | of the sequential bound | of the log2-depth bound |", "|---|---|---|",
                       *(f"| {n:,} | {a:.3g} | {b:.3g} |" for n, a, b in curve)]
    files.mkdir(parents=True, exist_ok=True)
    png = files / f"{name}.png"
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ns = [c[0] for c in curve]
    for col, label in ((1, "of the sequential bound (depth k-1)"), (2, "of the log2-depth bound")):
        ax.loglog(ns, [max(c[col], 1e-12) for c in curve], "o-", label=label)
    ax.axhline(1.0, color="k", lw=1, ls="--", label="the bound")
    ax.set_xlabel("n")
    ax.set_ylabel("|error| / bound, last output")
    ax.set_title(f"{report.target}, {dtype}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)
    return head + [f"![error against the bounds]({png.relative_to(home)})"]


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")
