"""Is it rounding or a bug?  One computed scan judged against its input, with evidence.

Where the exactness certificate holds (:func:`~scancheck.oracle.bounds.certified`) every summation
order gives the exact sum, so any difference there is a proven logic error.  Elsewhere a
difference is rounding only if it is inside the rigorous any-order bound; inside it, the
result is put beside the rounding of real orders computed on the same input (sequential, a
log-depth tree, the blocked orders of common kernels), and an error many times theirs is
suspicious although no bound refutes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.counts import check_flag
from ..core.dtypes import is_float
from ..core.operators import exclusive_of, get_operator
from .bounds import Verdict, certified, classify, narrower_type, sequential_depths, ulp
from .exact import exact_scan

EXACT, ROUNDING, SUSPICIOUS, PROVEN = "exact", "rounding", "suspicious", "not rounding (proven)"
#: A result whose RMS error exceeds this many times the largest of the real orders' is
#: suspicious: correct kernels' orders sit between the log-depth tree and the sequential.
SUSPICIOUS_FACTOR = 4.0


def _kogge_stone(t: np.ndarray) -> np.ndarray:
    """The log-depth order along the last axis: at step s every output adds the partial sum
    s places back (the right side is evaluated first, from old values, as in lockstep)."""
    y = t.copy()
    s = 1
    while s < y.shape[-1]:
        y[..., s:] = y[..., s:] + y[..., :-s]
        s *= 2
    return y


def _sequential(t: np.ndarray) -> np.ndarray:
    return np.add.accumulate(t, axis=-1, dtype=t.dtype)


def _blocked(x: np.ndarray, tile: int, within: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Tiles scanned by ``within``, their totals scanned left to right and added: the order
    of a reduce-then-scan, chained or look-back kernel with tiles of ``tile``."""
    tiles = -(-x.size // tile)
    pad = np.zeros(tiles * tile, dtype=x.dtype)
    pad[:x.size] = x
    local = within(pad.reshape(tiles, tile))
    carry = exclusive_of(_sequential(local[:, -1]), x.dtype.type(0))
    return (local + carry[:, None]).ravel()[:x.size]


#: Real summation orders, computed in the input's dtype (inclusive; shifted for exclusive).
ORDERS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sequential": _sequential,
    "log-depth tree (Kogge-Stone)": _kogge_stone,
    "tiles of 256, sequential within": lambda x: _blocked(x, 256, _sequential),
    "tiles of 1024, sequential within": lambda x: _blocked(x, 1024, _sequential),
    "tiles of 256, Kogge-Stone within": lambda x: _blocked(x, 256, _kogge_stone),
}


def _rms(d: np.ndarray) -> float:
    d = d[np.isfinite(d)]
    return float(np.sqrt(np.mean(d * d))) if d.size else 0.0


@dataclass
class Explanation:
    """The verdict on one computed scan and the numbers behind it."""

    verdict: str
    headline: str
    n: int
    dtype: str
    op: str
    inclusive: bool
    #: The first output a correct scan cannot have produced (None where there is none).
    first_wrong: int | None = None
    #: Outputs where every summation order is exact.
    certified: int = 0
    #: The result's errors against the exact scan: RMS, max and the largest fraction of
    #: the any-order bound.
    error: dict[str, float] = field(default_factory=dict)
    #: RMS and max error of each real order on the same input.
    orders: dict[str, dict[str, float]] = field(default_factory=dict)
    reference: dict[str, Any] | None = None
    #: The input's dtype where the result's is a wider one, in which the input is judged
    #: (a promoting scan's); "" where the two are one.
    promoted_from: str = ""
    #: Outputs of an integer sum whose exact value lies outside the dtype's range: judged
    #: wrapped, as the dtype's arithmetic wraps them.
    wrapped: int = 0
    #: A float sum proven wrong whose every output is a value of one narrower type, some
    #: inputs not (:func:`~scancheck.oracle.bounds.narrower_type`): that type; "" otherwise.
    kept_in: str = ""
    #: Where a result proven wrong is right under another convention (exclusive for
    #: inclusive, or a reverse scan), which, in words.
    hint: str = ""

    def lines(self) -> list[str]:
        """The headline, then the numbers, one fact a line."""
        kind = f"{'inclusive' if self.inclusive else 'exclusive'} {self.op} scan"
        promoted = (f" (the {self.promoted_from} input promoted, as the result is)"
                    if self.promoted_from else "")
        why = ("every summation order is exact there" if self.op == "add" else
               "a running maximum or minimum rounds nothing")
        out = [f"{self.verdict}: {self.headline}",
               f"  input: n = {self.n:,} {self.dtype}{promoted}, {kind}; {_outputs(self.certified)} "
               f"certified exact ({why})"]
        if self.error:
            e = self.error
            share = ("none allowed: every output certified exact"
                     if e["bound fraction"] is None else
                     f"{e['bound fraction']:.3g} of the any-order bound at worst where some "
                     f"order rounds (output {int(e['worst'])})")
            out.append(f"  error against the exact scan: RMS {e['rms']:.4g}, max {e['max']:.4g}; "
                       f"{share}")
        for name, o in self.orders.items():
            out.append(f"  rounding of a real order, {name}: RMS {o['rms']:.4g}, max {o['max']:.4g}")
        if self.reference:
            r = self.reference

            def special(count: int) -> str:
                return f" and {_outputs(count)} NaN or infinite on one side alone" if count else ""

            wider = f" ({r['dtype']})" if r["dtype"] != self.dtype else ""
            share = "" if r["share"] is None else (
                f", {_percent(r['share'])} of the disagreement's RMS")
            apart = ("; RMS over the outputs finite on every side" if
                     r["special disagreements"] or r["reference special errors"] else "")
            out.append(f"  against the reference{wider}: RMS disagreement "
                       f"{r['rms disagreement']:.4g}"
                       f"{special(r['special disagreements'])}; the reference's own error "
                       f"against the exact scan is RMS {r['reference rms']:.4g}"
                       f"{special(r['reference special errors'])}{share} (the reference "
                       f"alone: {r['verdict']}{apart})")
        if self.wrapped:
            out.append(f"  {_outputs(self.wrapped)} wrapped: {'its' if self.wrapped == 1 else 'their'} "
                       f"exact sums lie outside {self.dtype}'s range, and are judged as "
                       f"{self.dtype} arithmetic wraps them (a scan that must not wrap is wrong "
                       f"there)")
        if self.hint:
            out.append(f"  hint: {self.hint}")
        return out

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}


def explain(x: Any, result: Any, reference: Any | None = None, op: str = "add",
            inclusive: bool = True) -> Explanation:
    """Judge ``result`` as the ``op`` scan of ``x``: "exact", "rounding", "suspicious" (inside
    the any-order bound but over :data:`SUSPICIOUS_FACTOR` times the rounding of every real
    order tried) or "not rounding (proven)", with the evidence; with ``reference``, how much
    of the disagreement between the two is the reference's own error (a reference of a
    dtype that holds every ``result`` value is judged in its own).  A ``result`` of a
    wider dtype that holds every value of ``x``'s is judged with ``x`` promoted to it, as a
    promoting scan computes.  A result proven wrong that is right as the exclusive (or
    inclusive) scan, as the reverse one, as the scan of another of add, max and min, or as a
    scan that skips or ignores NaN inputs, says so in its ``hint``."""
    oper = get_operator(op)
    if oper.family not in ("sum", "order"):
        raise ValueError(f"op={op!r}: explain takes add, max or min")
    check_flag("inclusive", inclusive, np.bool_)
    # On the host once: the other conventions below read them again.
    x = oper.host_elements(x, "x", allow_empty=True)
    result = oper.host_elements(result, "result", allow_empty=True)
    given = x.dtype
    if result.shape != x.shape or not np.can_cast(x.dtype, result.dtype, "safe"):
        raise ValueError(f"result has shape {result.shape} and dtype {result.dtype}; expected "
                         f"{x.shape} and {x.dtype}, the input's, or a dtype that holds every "
                         f"{x.dtype} value (a promoting scan's)")
    x = x.astype(result.dtype, copy=False)
    want = exact_scan(x, oper, inclusive)
    e = _explain(x, result, reference, op, inclusive, want)
    if e.verdict == PROVEN and oper.family == "sum" and is_float(x.dtype):
        e.kept_in = narrower_type(x, result, want, inclusive) or ""
    if given != x.dtype:
        e.promoted_from = given.name
    if oper.name == "add":
        e.wrapped = _wrapped(x, inclusive)
    if e.verdict != PROVEN or not e.n:
        return e
    # A NaN rule first: where the input holds NaN it is the likelier convention.
    e.hint = _nan_rule_hint(x, result, oper.name, inclusive)
    if not e.hint and e.kept_in:
        e.hint = (f"every output is a {e.kept_in} value where some inputs or exact prefixes "
                  f"are not: rounded in {e.kept_in}, as if summed or stored in it, not in "
                  f"{x.dtype.name}")
    other = "exclusive" if inclusive else "inclusive"
    tries = [(f"as the {other} scan", "pass --exclusive" if inclusive else "leave --exclusive out",
              x, result, not inclusive, op),
             ("as the reverse scan (output k from x[k] to the end)",
              "explain judges forward scans: reverse INPUT and RESULT", x[::-1], result[::-1],
              inclusive, op)]
    tries += [(f"as the {_OP_WORDS[o]}", f"pass --op {o}", x, result, inclusive, o)
              for o in _OP_WORDS if o != oper.name and x.dtype.name in get_operator(o).dtypes]
    for what, do, xs, rs, inc, o in tries if e.n > 1 and not e.hint else ():  # one output is thin evidence
        again = _explain(xs, rs, None, o, inc)
        if again.verdict in (EXACT, ROUNDING):  # right there, not merely unproven
            e.hint = f"{what} it is {again.verdict}: {do}"
            break
    return e


def _wrapped(x: np.ndarray, inclusive: bool) -> int:
    """How many outputs of the sum of integers ``x`` have an exact value outside its dtype's
    range (0 for floats): in int64 for narrower types, in Python's integers for 64-bit ones."""
    if x.dtype.kind not in "iu" or not x.size:
        return 0
    info = np.iinfo(x.dtype)
    if x.dtype.itemsize < 8:
        sums = np.cumsum(x, dtype=np.int64)
    else:
        sums = np.cumsum(x.astype(object))
    sums = sums if inclusive else sums[:-1]
    return int(np.count_nonzero((sums < info.min) | (sums > info.max)))


#: The operators explain judges, as a hint names a result that is another one's scan.
_OP_WORDS = {"add": "running sum", "max": "running maximum", "min": "running minimum"}

#: What a NaN input is read as when a NaN rule leaves it out: -0.0 for add, so that adding
#: it changes no bit of any sum (a -0.0 sum included).
_NAN_READ_AS = {"add": -0.0, "max": -np.inf, "min": np.inf}
#: Under --nan-prefix identity, what an output whose whole prefix is NaN holds.
_PREFIX_VALUE = {"add": 0.0, "max": -np.inf, "min": np.inf}
#: The NaN rules scancheck check takes as declared, tried in this order: the flags, what a
#: scan that keeps the rule does, and which outputs the rule itself decides ("each", the
#: NaN inputs', or "prefix", those whose whole prefix is NaN) and what they hold.
_NAN_RULES = (
    ("--nans skip", "skips NaN (NaN at each NaN input, the others scanned without them)",
     "each", "nan"),
    ("--nans ignore", "ignores NaN (NaN inputs left out; NaN while the whole prefix is NaN)",
     "prefix", "nan"),
    ("--nans ignore --nan-prefix identity", "ignores NaN (NaN inputs left out; the identity "
     "while the whole prefix is NaN)", "prefix", "identity"),
)


def _nan_rule_hint(x: np.ndarray, result: np.ndarray, op: str, inclusive: bool) -> str:
    """Where ``result`` is exact or rounding as an inclusive scan that keeps a declared NaN
    rule (:data:`_NAN_RULES`) in place of IEEE propagation, that rule and its flags in
    words; "" where the input has no NaN or no rule fits."""
    if not inclusive or not is_float(x.dtype) or not np.isnan(x).any():
        return ""  # the rules are declared for inclusive scans (targets.contracts)
    isnan = np.isnan(x)
    decides = {"each": isnan, "prefix": np.logical_and.accumulate(isnan)}
    clean = np.where(isnan, x.dtype.type(_NAN_READ_AS[op]), x).astype(x.dtype)
    want = exact_scan(clean, get_operator(op), True)
    fits = []
    for flags, does, which, owed in _NAN_RULES:
        decided = decides[which]
        held = result[decided]
        kept = np.isnan(held) if owed == "nan" else held == held.dtype.type(_PREFIX_VALUE[op])
        if not kept.all():
            continue
        # The rule's own outputs are right: the rest is judged as the scan of ``clean``.
        rest = np.where(decided, want, result).astype(result.dtype)
        again = _explain(clean, rest, None, op, True)
        if again.verdict in (EXACT, ROUNDING):
            fits.append((flags, does, again.verdict))
    if not fits:
        return ""
    flags, does, verdict = fits[0]
    more = (f" (or {' or '.join(f for f, _, _ in fits[1:])}: this input does not tell them "
            f"apart)" if len(fits) > 1 else "")
    return (f"as a scan that {does} it is {verdict}: explain propagates NaN, as IEEE "
            f"arithmetic does; declare {flags} when checking it{more}")


def _explain(x: np.ndarray, result: np.ndarray, reference: Any | None, op: str,
             inclusive: bool, want: np.ndarray | None = None) -> Explanation:
    """:func:`explain` of host arrays already checked against each other, without a hint;
    ``want``, where given, is the exact scan of ``x``."""
    oper = get_operator(op)
    base = dict(n=int(x.shape[0]), dtype=x.dtype.name, op=oper.name, inclusive=inclusive)
    if want is None:
        want = exact_scan(x, oper, inclusive)
    if oper.family != "sum" or not is_float(x.dtype):
        return _explain_exact_type(x, result, want, base)
    where = certified(x, inclusive)
    e = Explanation(ROUNDING, "", certified=int(where.sum()), **base)
    rep = classify(x, result, sequential_depths(x.shape[0], inclusive), inclusive, exact=want)
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, which the checks below skip
        diff = result.astype(np.float64) - want.astype(np.float64)
    if x.size:
        # Over the outputs the certificate holds exact the bound is only underflow's slack:
        # a fraction of it there means nothing.
        fraction = np.where(~where & np.isfinite(rep.bound_fraction), rep.bound_fraction,
                            -1.0)
        worst = int(np.argmax(fraction))
        e.error = {"rms": rep.rms, "max": rep.max_abs, "worst": float(worst),
                   "bound fraction": float(fraction[worst]) if fraction[worst] >= 0 else None}
    wrong_certified = np.flatnonzero(where & (result != want) & ~(np.isnan(result) & np.isnan(want)))
    if reference is not None:
        e.reference = _reference(x, reference, result, want, inclusive)
    if wrong_certified.size:
        k = int(wrong_certified[0])
        e.verdict, e.first_wrong = PROVEN, k
        e.headline = (f"output {k} is {_num(result[k])} where the exact sum is {_num(want[k])}, "
                      f"and every summation order gives the exact sum there (the exactness "
                      f"certificate): a correct scan cannot differ; "
                      f"{wrong_certified.size:,} certified "
                      f"{'output differs' if wrong_certified.size == 1 else 'outputs differ'}")
        return e
    if rep.verdict == Verdict.BEYOND_BOUND:
        k = int(rep.beyond[0])
        e.verdict, e.first_wrong = PROVEN, k
        frac = rep.bound_fraction[k]
        far = (f"{frac:.3g}x the rigorous bound of any summation order" if np.isfinite(frac)
               else _special(x, result, want, k, inclusive))
        beyond = rep.beyond.size
        e.headline = (f"output {k} is {_num(result[k])} where the exact sum is {_num(want[k])}: "
                      f"{far}; {_outputs(beyond)} {'is' if beyond == 1 else 'are'} beyond the "
                      f"bound")
        return e
    if not np.any(diff[np.isfinite(diff)]) and rep.overflowed.size == 0:
        e.verdict, e.headline = EXACT, "equal to the exact scan at every output"
        return e
    e.orders = _orders(x, want, inclusive)
    # Where every real order tried happens to be (nearly) exact, a correct tree may still
    # round once per level: one ulp per log2 of the prefix length is the floor.
    n = x.shape[0]
    with np.errstate(invalid="ignore"):
        floor = _rms(ulp(want, x.dtype.name) * np.ceil(np.log2(np.arange(1, n + 1) + 1)))
    roughest = max(o["rms"] for o in e.orders.values())
    typical = max(roughest, floor)
    ratio = rep.rms / typical if typical else np.inf
    against = ("the rounding of the roughest real order tried" if roughest >= floor else
               "the rounding floor of a tree (one ulp a level; every real order tried rounds "
               "less here)")
    over = (f"; {_outputs(rep.overflowed.size)} overflowed where some summation order can"
            if rep.overflowed.size else "")
    if ratio > SUSPICIOUS_FACTOR:
        e.verdict = SUSPICIOUS
        e.headline = (f"inside the worst-case bound ({e.error['bound fraction']:.3g} of it), but "
                      f"{_times(ratio)} {against} (RMS "
                      f"{rep.rms:.4g} against {typical:.4g}): no proof, but few correct scans "
                      f"round like this{over}")
    else:
        e.headline = (f"within the rigorous bound of any summation order ({e.error['bound fraction']:.3g} "
                      f"of it at worst), and {ratio:.3g}x {against}{over}")
    return e


def _special(x: np.ndarray, result: np.ndarray, want: np.ndarray, k: int, inclusive: bool
             ) -> str:
    """Why output ``k``, non-finite where the exact sum is finite, finite or infinite where it
    is NaN, finite where it is infinite or an infinity of the other sign, is beyond every
    summation order, in words: which way it went wrong and which inputs the result lost."""
    r, w = float(result[k]), float(want[k])
    prefix = x[:k + 1] if inclusive else x[:k]
    got = "a finite output" if np.isfinite(r) else "an infinity" if np.isinf(r) else "a NaN"
    nans, infs = np.flatnonzero(np.isnan(prefix)), np.flatnonzero(np.isinf(prefix))
    if np.isnan(w) and nans.size:
        return (f"{got} where the exact scan is NaN: the NaN {_inputs(nans)} skipped or read "
                f"as some number")
    if np.isnan(w):  # no NaN input: +inf and -inf meet in the prefix, NaN in every order
        return (f"{got} where the exact scan is NaN (+inf and -inf meet in the prefix, at "
                f"{_indices(infs)}): an infinity was skipped or read as some number")
    if np.isinf(r) and np.isinf(w):
        return "an infinity of the other sign, which no summation order reaches"
    if np.isfinite(r) and np.isinf(w) and infs.size:
        return (f"{got} where the exact sum is infinite: the infinite {_inputs(infs)} skipped "
                f"or read as some number")
    if np.isfinite(r) and np.isinf(w):  # the exact sum of finite inputs overflows
        return (f"{got} where the exact sum overflows, farther from the threshold than any "
                f"summation order rounds")
    return (f"{got} where the exact sum is {'infinite' if np.isinf(w) else 'finite'}, which no "
            f"summation order reaches")


def _inputs(where: np.ndarray) -> str:
    """Inputs at ``where``, with the verb: "input at index 1 was", "inputs at indices 1, 4 were"."""
    one = where.size == 1
    return f"input{'' if one else 's'} at {_indices(where)} {'was' if one else 'were'}"


def _indices(where: np.ndarray) -> str:
    """Input indices in words, the first three of more."""
    shown = ", ".join(str(int(i)) for i in where[:3])
    more = f" and {where.size - 3:,} more" if where.size > 3 else ""
    return f"{'index' if where.size == 1 else 'indices'} {shown}{more}"


def _explain_exact_type(x: np.ndarray, result: np.ndarray, want: np.ndarray,
                        base: dict[str, Any]) -> Explanation:
    """Max, min and integer add round nothing: any difference is proven (at a zero answer a
    zero of a sign its prefix holds agrees, as for a max or min that leaves their order
    open)."""
    from ..core.arrays import same_bits
    from ..core.rules import zero_held

    ok = same_bits(result, want)
    if is_float(x.dtype):
        ok |= (want == 0) & zero_held(x, result, base["inclusive"])
    bad = np.flatnonzero(~ok)
    e = Explanation(EXACT, "equal to the exact scan at every output", certified=int(x.shape[0]),
                    **base)
    if bad.size:
        k = int(bad[0])
        e.verdict, e.first_wrong = PROVEN, k
        nans = np.flatnonzero(np.isnan(x[:k + 1] if base["inclusive"] else x[:k])
                              if is_float(x.dtype) else [])
        lost = (f": the NaN {_inputs(nans)} skipped or read as some number"
                if nans.size and not np.isnan(result[k]) else "")
        e.headline = (f"output {k} is {_num(result[k])} where the exact answer is {_num(want[k])}"
                      f"{lost}; {base['op']} on {base['dtype']} rounds nothing, so any difference "
                      f"is a logic error ({_outputs(bad.size)} differ{'s' if bad.size == 1 else ''})")
    return e


def _orders(x: np.ndarray, want: np.ndarray, inclusive: bool) -> dict[str, dict[str, float]]:
    out = {}
    w = want.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        for name, fn in ORDERS.items():
            got = fn(x)
            if not inclusive:
                got = exclusive_of(got, x.dtype.type(0))
            d = got.astype(np.float64) - w
            out[name] = {"rms": _rms(d), "max": float(np.max(np.abs(d[np.isfinite(d)]), initial=0))}
    return out


def _reference(x: np.ndarray, reference: Any, result: np.ndarray, want: np.ndarray,
               inclusive: bool) -> dict[str, Any]:
    ref = get_operator("add").host_elements(reference, "reference", allow_empty=True)
    if ref.shape != x.shape or not np.can_cast(x.dtype, ref.dtype, "safe"):
        raise ValueError(f"reference has shape {ref.shape} and dtype {ref.dtype}; expected "
                         f"{x.shape} and {x.dtype}, the result's, or a dtype that holds every "
                         f"{x.dtype} value (a float64 reference of a float32 result)")
    # A wider reference is judged with x promoted, against the exact scan rounded to its
    # dtype: one exact scan of its own, none where its dtype is the result's.
    if ref.dtype != x.dtype:
        x = x.astype(ref.dtype)
        want = exact_scan(x, get_operator("add"), inclusive)
    alone = _explain(x, ref, None, "add", inclusive, want)
    got, ref64, exact = (a.astype(np.float64) for a in (result, ref, want))
    # Both RMS figures are over the same outputs, those finite on every side: a NaN or an
    # infinity on one side alone is counted apart, not left out unsaid, and where no finite
    # output disagrees there is no share to give (None).
    both = np.isfinite(got) & np.isfinite(ref64) & np.isfinite(exact)
    disagreement = _rms(got[both] - ref64[both])
    own = _rms(ref64[both] - exact[both])
    return {"dtype": ref.dtype.name, "rms disagreement": disagreement, "reference rms": own,
            "share": own / disagreement if disagreement else None, "verdict": alone.verdict,
            "special disagreements": _specials_differ(result, ref),
            "reference special errors": _specials_differ(ref, want)}


def _specials_differ(a: np.ndarray, b: np.ndarray) -> int:
    """How many outputs hold a NaN or an infinity on one side that the other does not."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    return int((~same & ~(np.isfinite(a) & np.isfinite(b))).sum())


def _percent(share: float) -> str:
    """A share as a percentage, two significant digits where it is under 0.1%."""
    return f"{share:.1%}" if share >= 1e-3 else f"{share * 100:.2g}%"


def _outputs(count: int) -> str:
    return f"{count:,} output{'' if count == 1 else 's'}"


def _num(v: Any) -> str:
    v = np.asarray(v).item()
    return f"{v:.9g}" if isinstance(v, float) else str(v)


def _times(ratio: float) -> str:
    return "infinitely many times" if not np.isfinite(ratio) else f"{ratio:.3g}x"
