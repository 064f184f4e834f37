"""``segments``: a segmented scan (offsets, flags, keys or groups; forward or reverse;
1-D or (T, H, ...) with the segments along T) judged segment by segment, each by its
operator's 1-D criteria against the exact scan of that segment alone; a failure shrinks to
the fewest segments and elements that still fail."""

from __future__ import annotations

import time
import warnings
from dataclasses import replace
from typing import Any

import numpy as np

from ...core.arrays import dtype_name, same_bits
from ...core.dtypes import is_float
from ...oracle.segmented import gather_rows, segment_ids, segment_rows
from ...targets.spec import TargetSpec
from ...targets.target import Target, raised_by_target
from ..cases import Case
from ..diagnosis import Cause, Reason
from ..layouts import LAYOUTS, laid_out, memory_of
from ..segments import Layout, draw_layout, shrunk_layouts
from ..strategies import generate_data
from .base import Contract, Failure
from .rows import row_verdicts
from .running import promoted, runs_differ

#: Trailing shapes (H, ...) of a target with axis=0: one head, a few, odd, two dimensions,
#: and one past each usual tile of heads (8 and 32).
HEADS: tuple[tuple[int, ...], ...] = ((1,), (2,), (3,), (4,), (2, 3), (9,), (33,))
#: What the shrinking of one failure may spend: target calls, and seconds.
SHRINK_CALLS = 1000
SHRINK_SECONDS = 10.0
#: Inputs up to this many elements are kept whole in a smallest case, their segment
#: description too: what a report's reproducer rebuilds them from.
SHOWN = 2**12


def segments_check(target: Target, case: Case) -> Failure | None:
    """The case's data in a segment layout drawn from its seed (:func:`draw_layout`), the
    target's output judged segment by segment; a failure shrunk to fewer segments and
    elements (:func:`shrink`)."""
    spec = target.spec
    x, layout, memory = drawn(spec, case)
    heads = x.shape[1:]
    try:
        failure = judge(target, laid_out(x, memory), layout,
                        again=spec.deterministic and is_float(x.dtype))
    except Exception as exc:
        # A description of another kind than it reads may make it raise (flags as indices):
        # right on the same segments handed as that kind, the raise is the contract's.
        if not raised_by_target(exc):
            raise
        raised = Failure(Cause.LOGIC, f"raised {type(exc).__name__}",
                         at={**layout.describe(), "shape": list(x.shape)}, reason=Reason.RAISED)
        told = _described_otherwise(target, x, layout, memory, raised)
        if told is None:
            raise
        return _sized(told, x, case)
    if failure is None:
        return None
    if heads:
        failure.at["memory"] = memory
    if failure.cause == Cause.NONDETERMINISM:
        return _sized(failure, x, case)
    x, layout, failure = shrink(target, x, layout, failure, memory)
    failure = _sized(failure, x, case)
    if heads:
        failure.at["memory"] = memory
        if memory["layout"] != "C":
            failure.diagnosis += f" (input of shape {list(x.shape)}, {memory['layout']} layout)"
    if failure.cause == Cause.LOGIC and failure.reason != Reason.SHAPE:
        otherwise = _described_otherwise(target, x, layout, memory, failure)
        if otherwise is not None:
            return otherwise
        failure.diagnosis += _how_read(target, x, layout, memory, failure)
    if _special(x, failure):
        # As 'nan and inf' tells it of an unsegmented scan, unless finite data in the same
        # segments fail too: then the NaN or infinity only carried a logic error.
        if _wrong_on_steps(target, x, layout, memory):
            failure.diagnosis += ("; wrong also on 'steps' data (finite) in the same segments, "
                                  "so not its NaN or infinity handling")
        else:
            failure.cause = Cause.SPECIALS
            failure.diagnosis += (f"; {failure.got} where IEEE arithmetic gives "
                                  f"{failure.expected}, the segment holding NaN or infinities")
    elif is_float(x.dtype) and spec.family == "sum" and failure.cause == Cause.LOGIC and (
            failure.reason in (Reason.BEYOND_BOUND, Reason.CERTIFICATE, Reason.ACCUMULATOR)):
        if _wrong_on_steps(target, x, layout, memory):
            failure.diagnosis += ("; wrong also on 'steps' data in the same segments, so no "
                                  "rounding explains it")
        else:
            failure.cause = Cause.PRECISION
            failure.diagnosis += "; right on 'steps' data in the same segments: precision lost"
    return failure


def drawn(spec: TargetSpec, case: Case) -> tuple[np.ndarray, Layout, dict[str, Any]]:
    """The input (C order, (T, H, ...) where the spec scans an axis of a batch), its segment
    layout and the memory layout it is handed in, as the case's seed draws them: what the
    target got first, rebuilt bit for bit (a report's script rebuilds a fault's so)."""
    rng = np.random.default_rng([case.seed, 0x5E6])
    heads = () if spec.axis is None else HEADS[int(rng.integers(len(HEADS)))]
    width = int(np.prod(heads, dtype=np.int64))
    t = case.n // width if case.n >= width else min(case.n, 1)
    kind, _, index_dtype = spec.segments.partition(":")
    layout = draw_layout(rng, t, kind, index_dtype or None)
    x = generate_data(np.random.default_rng(case.seed), t * width, case.dtype,
                      case.distribution).reshape((t, *heads))
    # (T, H, ...) in one of the memory layouts the rows property draws, shrunk in it too.
    memory = memory_of(rng, LAYOUTS[int(rng.integers(len(LAYOUTS)))], x.ndim) if heads else {
        "layout": "C"}
    return x, layout, memory


def _special(x: np.ndarray, failure: Failure) -> bool:
    """Whether ``failure``, on float data holding a NaN or an infinity, gave a NaN or an
    infinity where the exact scan has none, or none where it has one."""
    if (not is_float(x.dtype) or np.isfinite(x).all() or failure.cause == Cause.INPUT_WRITTEN
            or failure.got is None or failure.expected is None):
        return False
    return bool(np.isnan(failure.got) != np.isnan(failure.expected)
                or np.isinf(failure.got) != np.isinf(failure.expected))


def _sized(failure: Failure, x: np.ndarray, case: Case) -> Failure:
    """``failure`` whose case says n, the elements of the input ``x`` it failed on (the
    product of its shape), and where the case drew more, the n its seed draws from."""
    failure.at["n"] = int(x.size)
    if x.size != case.n:  # whole (T, H, ...) rows of it, or shrunk: the seed draws at case.n
        failure.at["drawn"] = case.n
    return failure


def call(target: Target, x: np.ndarray, desc: np.ndarray) -> Any:
    """The target on ``x`` and a copy of the description ``desc`` (on the device for a GPU
    target), as :meth:`Target.__call__` runs it: the data handed as a copy and checked for
    writes; :class:`DescriptionWritten` where the call changed the description."""
    given = desc.copy()
    handed: Any = given
    if target.spec.device == "gpu":
        import cupy as cp

        handed = cp.asarray(given)
    fn = target.fn
    out = replace(target, fn=lambda a: fn(a, handed))(x)
    if handed is not given:
        given = handed.get()
    moved = ~same_bits(desc, given)
    if moved.any():
        k = int(np.flatnonzero(moved)[0])
        kind = target.spec.segments.partition(":")[0]
        raise DescriptionWritten(f"writes into its {kind}: {kind}[{k}] was {desc[k]}, is {given[k]} "
                                 f"after the call")
    return out


class DescriptionWritten(Exception):
    """The target changed the segment description it was handed."""


#: The kinds of segment description one set of segments can be handed as (groups' labels
#: need not be contiguous, so no other kind describes them, nor they another's).
DESCRIBED_AS = ("offsets", "flags", "keys")


def _described_otherwise(target: Target, x: np.ndarray, layout: Layout,
                         memory: dict[str, Any], wrong_here: Failure) -> Failure | None:
    """A contract difference where the target, wrong on ``x`` in ``layout``'s segments
    (``wrong_here``, whose output it is told with: a script rebuilds that output and holds
    it to the exact scan of its segment), is right on the same segments handed as another
    kind of description (offsets where flags are declared, say): it reads its second
    argument as that kind.  CPU targets only, and
    not one that declares its offsets' dtype: a kernel handed an array of another length or
    type than it takes may read past it, and a target pinned to one offsets dtype is handed
    no other."""
    kind = layout.kind
    # No element: every kind describes it alike, and shows nothing of how one is read.
    if kind not in DESCRIBED_AS or target.spec.device != "cpu" or ":" in str(
            target.spec.segments) or layout.t < 1:
        return None
    def described(other: str, lengths: tuple[int, ...]) -> Layout:
        live = tuple(n for n in lengths if n > 0)  # flags and keys have no empty segments
        return Layout(lengths if other == "offsets" else live, other, layout.shape_class,
                      keys=tuple(i % 2 for i in range(len(live))) if other == "keys" else None)

    # The same segments, then all of them as one, where the target takes that length: a few
    # flags read as offsets (True as 1) can come out right by chance on one small layout,
    # seldom on a longer one; and segments of one element each read alike under every kind
    # whose values all differ (keys narrowed to int8 handed 0, 1, 2 as keys), a segment of
    # them all does not.
    twice = [(np.concatenate([x, x]), layout.lengths + (layout.t,))] if 2 * layout.t <= (
        target.spec.max_n or 2 * layout.t) else []
    for other in DESCRIBED_AS:
        if other == kind:
            continue
        declared = replace(target, spec=replace(target.spec, segments=other))
        try:
            with warnings.catch_warnings():  # what the target says of a kind it does not take
                warnings.simplefilter("ignore")
                wrong = next((w for data, lengths in [(x, layout.lengths), *twice]
                              if (w := judge(declared, laid_out(data, memory),
                                             described(other, lengths))) is not None), None)
        except Exception:  # noqa: BLE001 - a description it refuses is not the one it reads
            continue
        if wrong is None:
            flag = f"--segments {other}"
            how = (f"{wrong_here.diagnosis} on these" if wrong_here.reason == Reason.RAISED
                   else "wrong on these")
            return Failure(Cause.CONTRACT, f"reads its segments as {other}: {how} {kind}, "
                           f"right on the same segments handed as {other}; declare "
                           f"{flag}", wrong_here.index, wrong_here.got, wrong_here.expected,
                           detail={"contract": flag}, at=wrong_here.at,
                           contract=Contract(f"reads its segments as {other}", flag,
                                             (("segments", other),)),
                           rerun_refutes=False, reason=Reason.UNDECLARED)
    return None


#: Integer types a target may narrow its keys or labels to, widest first: keys that differ
#: only past such a type's bits become one segment.
NARROWED = ("int32", "int16", "int8")


def _narrowed(layout: Layout, narrow: str) -> tuple[Layout, tuple[int, int]] | None:
    """``layout``'s segments as its keys or labels make them narrowed to ``narrow`` (wrapping
    as a cast does), and two that it joins; None where it joins none."""
    desc = layout.description()
    if np.dtype(narrow).itemsize >= desc.dtype.itemsize:
        return None
    read = desc.astype(narrow).astype(np.int64)
    if layout.kind == "groups":
        labels = {}
        for wide, low in zip(desc.tolist(), read.tolist()):
            if labels.setdefault(low, wide) != wide:
                return replace(layout, labels=tuple(read.tolist())), (labels[low], wide)
        return None
    starts = np.flatnonzero(np.r_[True, read[1:] != read[:-1]])
    if starts.size == len(layout.keys or ()):
        return None
    joined = next(k for k in range(len(layout.keys) - 1)
                  if np.int64(layout.keys[k]).astype(narrow) == np.int64(
                      layout.keys[k + 1]).astype(narrow))
    lengths = np.diff(np.r_[starts, read.size])
    return (replace(layout, lengths=tuple(lengths.tolist()), keys=tuple(read[starts].tolist())),
            (layout.keys[joined], layout.keys[joined + 1]))


#: Steps the search for a group's scan order may take (a zero or a repeated value lets
#: several elements come next, and only some of them lead on), and the most elements of a
#: group it is searched in.
ORDER_STEPS, ORDER_MEMBERS = 10_000, 64


def _order_of(out: np.ndarray, vals: np.ndarray, members: list[int], combine: np.ufunc,
              inclusive: bool) -> list[int] | None:
    """An order of ``members`` in which each output is, bit for bit in the output's type, the
    running combine up to its element (inclusive) or before it; None where no order is
    found within :data:`ORDER_STEPS` steps."""
    steps = 0

    def extend(order: list[int], total: Any) -> list[int] | None:
        nonlocal steps
        if len(order) == len(members):
            return order
        for p in members:
            steps += 1
            if steps > ORDER_STEPS:
                return None
            if p in order:
                continue
            after = combine(total, vals[p])
            if same_bits(out[p:p + 1], np.asarray([after if inclusive else total],
                                                   out.dtype))[0]:
                found = extend([*order, p], after)
                if found is not None:
                    return found
        return None

    return extend([], out.dtype.type(1 if combine is np.multiply else 0))


def _how_read(target: Target, x: np.ndarray, layout: Layout, memory: dict[str, Any],
              failure: Failure) -> str:
    """Words for a keys or groups target's logic error where its output shows how it read
    the description (:func:`_read_narrowed`, :func:`_out_of_order`); "" where it does not, or
    where the call raises."""
    if layout.kind not in ("keys", "groups"):
        return ""
    data = laid_out(x, memory)
    try:
        seen = call(target, data, layout.description())
    except Exception:  # noqa: BLE001 - no output to read it from
        return ""
    return (_read_narrowed(target, data, layout, seen)
            or _out_of_order(target, x, layout, seen, failure))


def _read_narrowed(target: Target, data: np.ndarray, layout: Layout, seen: Any) -> str:
    """Words for a keys or groups target whose output ``seen`` on ``data``, wrong, is bit for
    bit its output on the keys or labels narrowed to a smaller integer type, and right for
    the segments those make: it joins keys that differ only past that type's bits.  "" where
    no such type explains it (or a call raises)."""
    try:
        for narrow in NARROWED:
            made = _narrowed(layout, narrow)
            if made is None:
                continue
            read, (a, b) = made
            if same_bits(call(target, data, read.description()), seen).all() and judge(
                    target, data, read, seen=seen) is None:
                what = "labels" if layout.kind == "groups" else "keys"
                bits = 8 * np.dtype(narrow).itemsize
                return (f"; {what} {a} and {b} differ only past their low {bits} bits, and it "
                        f"joins them: its output is the exact scan of the "
                        f"{'groups' if what == 'labels' else 'segments'} its {what} make "
                        f"narrowed to {narrow}")
    except Exception:  # noqa: BLE001 - a description it refuses is not the one it reads
        return ""
    return ""


def _out_of_order(target: Target, x: np.ndarray, layout: Layout, got: Any,
                  failure: Failure) -> str:
    """Words for a groups sum or product whose failing group's outputs (of ``got``) are its
    running combines in another order than its elements' (each output the combine of the
    one before it in that order with its own element, bit for bit in the output type): the
    group was scanned out of order, as after an unstable sort by label.  "" where no order
    is found."""
    if layout.kind != "groups" or target.spec.family not in ("sum", "product") or (
            "group" not in failure.at):
        return ""
    spec = target.spec
    col = int(failure.at.get("column", 0))
    out = got.reshape(got.shape[0], -1)[:, col]
    vals = promoted(target, x).reshape(x.shape[0], -1)[:, col].astype(out.dtype)
    members = np.flatnonzero(np.asarray(layout.labels) == failure.at["group"])
    if members.size > ORDER_MEMBERS:  # a case the shrinking left long: its words stay plain
        return ""
    with np.errstate(all="ignore"):
        order = _order_of(out, vals, members.tolist(), np.add if spec.family == "sum"
                          else np.multiply, spec.inclusive)
    scan_order = (members[::-1] if spec.reverse else members).tolist()
    if order is None or order == scan_order:
        return ""
    shown = ", ".join(map(str, order[:8])) + (", ..." if len(order) > 8 else "")
    how = ("from its last element to its first, as a scan in the other direction (or an "
           "unstable sort of two elements) orders it" if order == scan_order[::-1] else
           "the group is scanned out of order, as after an unstable sort by label")
    return (f"; its outputs are the group's running {spec.family}s in another order than its "
            f"elements' (positions {shown}): {how}")


def judge(target: Target, x: np.ndarray, layout: Layout, again: bool = False,
          seen: Any = None) -> Failure | None:
    """The target's scan of ``x`` (segments along axis 0 as ``layout`` says; ``seen``, where
    given, an output of it already in hand) against the exact scan of every segment alone,
    by the 1-D criteria of its operator; the first wrong output in element order (None
    where none is).  With ``again``, a right scan is run once more and must give the same
    bits (a segmented target's ``deterministic``)."""
    spec = target.spec
    desc = layout.description()
    at = {**layout.describe(), "shape": list(x.shape)}
    if x.size <= SHOWN:
        at["x"] = x.tolist()
        at["description"] = {"dtype": desc.dtype.name, "values": desc.tolist()}
    try:
        got = call(target, x, desc) if seen is None else seen
    except DescriptionWritten as exc:
        return Failure(Cause.INPUT_WRITTEN, str(exc), at=at, independent=True,
                       reason=Reason.INPUT_WRITTEN)
    out = spec.output_dtype(x.dtype)
    if got.shape != x.shape or dtype_name(got.dtype) != out:
        return Failure(Cause.LOGIC, f"returned shape {got.shape} dtype {got.dtype} for shape "
                       f"{x.shape} dtype {x.dtype} (expected dtype {out})", at=at,
                       reason=Reason.SHAPE)
    if x.size == 0:
        return None
    xp = promoted(target, x)
    ids = segment_ids(layout.kind, desc, x.shape[0])
    plan = segment_rows(ids, spec.reverse)
    cols = x.size // x.shape[0]
    worst: tuple[int, int, Reason, str, Any, Any, int] | None = None
    for index, seg in zip(plan.index, plan.segment):
        bad, told = row_verdicts(target, gather_rows(xp, index), gather_rows(got, index))
        bad = bad.reshape(index.shape[0], cols, index.shape[1]) & (index >= 0)[:, None, :]
        if not bad.any():
            continue
        r, c, k = np.argwhere(bad).T
        pos = index[r, k]
        first = int(np.lexsort((c, pos))[0])
        p, col = int(pos[first]), int(c[first])
        if worst is None or (p, col) < worst[:2]:
            reason, why, shown, wanted = told(int(r[first]) * cols + col, int(k[first]))
            worst = (p, col, reason, why, shown, wanted, int(seg[r[first]]))
    if worst is None:
        return _differs_again(target, x, desc, got, at) if again else None
    p, col, reason, why, shown, wanted, s = worst
    members = np.flatnonzero(ids == s)
    name = _segment_name(layout, desc, ids, s)
    # Plain numbers: NumPy 2 shows its own scalars as np.int64(1) inside a list.
    head = (f", column {[int(i) for i in np.unravel_index(col, x.shape[1:])]}" if x.ndim > 1
            else "")
    span = (f"elements {members[0]}..{members[-1]}" if layout.kind != "groups" else
            f"{members.size} element{'' if members.size == 1 else 's'}")
    diagnosis = (f"{name} ({span} of {x.shape[0]}){head}, output {p}: {why}"
                 + (" (a reverse scan: output k combines its segment from k to the end)"
                    if spec.reverse else ""))
    # The segment as the diagnosis names it: a group by its label, a segment counted from 1.
    which = ({"group": int(np.unique(desc)[s])} if layout.kind == "groups"
             else {"segment": s + 1})
    return Failure(Cause.LOGIC, diagnosis, p, shown, wanted,
                   at={**at, **which, **({"column": col} if x.ndim > 1 else {})},
                   reason=reason)


def _differs_again(target: Target, x: np.ndarray, desc: np.ndarray, got: np.ndarray,
                   at: dict[str, Any]) -> Failure | None:
    """A second run's first output (in element order) whose bits differ from the right
    first run's, the second run's value against the first's."""
    return runs_differ(got, call(target, x, desc), lambda k: (
        f"bits differ between runs on the same input and segments at element {k}, the first "
        f"run right (an order of combines that varies, or a race)"), at)


def _segment_name(layout: Layout, desc: np.ndarray, ids: np.ndarray, s: int) -> str:
    """How a person finds segment ``s`` (an index from 0): a group by its label, a segment by
    its place counted from 1 ("segment 2 of 3" is the middle one)."""
    if layout.kind == "groups":
        return f"group {np.unique(desc)[s]}"
    count = desc.size - 1 if layout.kind == "offsets" else int(ids[-1]) + 1
    return f"segment {s + 1} of {count}"


def shrink(target: Target, x: np.ndarray, layout: Layout, failure: Failure,
           memory: dict[str, Any] | None = None) -> tuple[np.ndarray, Layout, Failure]:
    """A smaller input and layout that fail with the same cause: whole segments removed
    first, then segments emptied, cut to one element or halved, for as long as one still
    fails (at most :data:`SHRINK_CALLS` calls and :data:`SHRINK_SECONDS` seconds); each
    smaller input handed in the memory layout ``memory`` (:func:`laid_out`; C by default)."""
    deadline = time.monotonic() + SHRINK_SECONDS
    calls = 0
    improved = True
    while improved:
        improved = False
        for smaller, keep in shrunk_layouts(layout):
            calls += 1
            if calls > SHRINK_CALLS or time.monotonic() > deadline:
                return x, layout, failure
            try:
                f = judge(target, laid_out(x[keep], memory or {"layout": "C"}), smaller)
            except Exception:  # a smaller input the target refuses shows nothing of this bug
                continue
            if f is not None and f.cause == failure.cause:
                x, layout, failure, improved = x[keep], smaller, f, True
                break
    return x, layout, failure


def _wrong_on_steps(target: Target, x: np.ndarray, layout: Layout,
                    memory: dict[str, Any]) -> bool:
    """Whether the same shape, segments and memory layout on 'steps' data (finite, every sum
    of adjacent elements in [-3, 3], exact in any order) fail too, for one of three seeds."""
    for seed in range(3):
        steps = generate_data(np.random.default_rng(seed), x.size, x.dtype.name,
                              "steps").reshape(x.shape)
        if judge(target, laid_out(steps, memory), layout) is not None:
            return True
    return False
