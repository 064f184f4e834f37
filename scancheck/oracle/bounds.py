"""Error metrics against the exact oracle, rigorous rounding bounds, and the verdict per output.

An output computed by a summation tree of depth ``d`` over inputs ``x_i`` satisfies
``|computed - exact| <= gamma_d * sum|x_i|`` with ``gamma_d = d*u / (1 - d*u)``
(Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., eq. 4.4).
:func:`classify` compares each output with the correctly rounded exact value:
an error larger than the bound plus half an ulp of that value (its own rounding)
cannot be rounding, whatever its size — it is a logic error.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..core.arrays import as_dtype, dtype_name
from ..core.dtypes import FLOAT_DTYPES, SIGNIFICAND_BITS, finfo
from ..core.operators import get_operator, shifted
from .exact import exact_scan

UNIT_ROUNDOFF = {dt: 2.0**-p for dt, p in SIGNIFICAND_BITS.items()}


class Verdict(enum.IntEnum):
    """How an output compares with the exact answer (ordered from best to worst)."""

    EXACT = 0
    WITHIN_BOUND = 1
    #: An infinity or NaN (or a finite value where the exact sum rounds to infinity) at a
    #: prefix whose magnitudes reach the overflow threshold: some summation orders overflow
    #: there, so it is legitimate rounding, not a proven error.
    OVERFLOWED = 2
    BEYOND_BOUND = 3

    @property
    def label(self) -> str:
        """The verdict as reports print it: ``within bound``."""
        return self.name.lower().replace("_", " ")


def gamma(depth: np.ndarray | int, dtype: str) -> np.ndarray:
    """Higham's gamma_d = d*u / (1 - d*u) for the unit roundoff of ``dtype``; +inf where
    d*u >= 1, where no bound of this form exists (a float32 sequential sum of 2**24 terms)."""
    try:
        u = UNIT_ROUNDOFF[dtype_name(dtype)]
    except KeyError:
        raise ValueError(f"dtype={dtype!r} has no rounding bound; allowed: "
                         f"{', '.join(FLOAT_DTYPES)}") from None
    d = np.asarray(depth, dtype=np.float64)
    if d.size and d.min() < 0:
        raise ValueError("depth must be non-negative")
    du = d * u  # once: every scan a check judges passes here, at up to 2**20 outputs
    if du.ndim and (not du.size or du.max() < 1):  # the usual case, in two passes fewer
        out = 1 - du
        return np.divide(du, out, out=out)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(du < 1, du / (1 - du), np.inf)


def sequential_depths(n: int, inclusive: bool = True) -> np.ndarray:
    """Tree depth of each output of a left-to-right scan: k-1 roundings for the k-th prefix."""
    d = np.arange(n, dtype=np.int64)
    return d if inclusive else np.concatenate([[0], d[:-1]])


def log_depths(n: int) -> np.ndarray:
    """The smallest depth any scan can have at every output: ceil(log2(k)) for the k-th prefix."""
    k = np.arange(1, n + 1)
    return np.ceil(np.log2(k)).astype(np.int64)


def ulp(values: np.ndarray, dtype: str) -> np.ndarray:
    """The spacing of ``dtype`` floats at each of ``values`` (the ulp of the exact answer),
    as float64: 2**(e - p + 1) for a value in [2**e, 2**(e+1)), the subnormal spacing below
    the smallest normal, NaN at infinities."""
    from ..core.arrays import array_module

    xp = array_module(values)  # device values stay on the device
    dt = as_dtype(dtype)
    name, info = dtype_name(dt), finfo(dt)
    p = SIGNIFICAND_BITS[name]
    if xp is np and name in ("float16", "float32", "float64"):
        # NumPy's spacing of |v| is the gap to the next float up: the ulp, in three passes
        # where the exponent arithmetic below takes nine (a check judges every scan by it);
        # past the largest finite value that gap is infinite, and the ulp is the one below.
        with np.errstate(over="ignore", invalid="ignore"):
            out = np.spacing(np.abs(np.asarray(values).astype(dt))).astype(np.float64)
        top = np.isinf(out)
        if top.any():
            out[top] = np.ldexp(1.0, int(info.maxexp) - p)
        return out
    v = xp.abs(xp.asarray(values).astype(dt).astype(np.float64))
    e = xp.frexp(v)[1] - 1  # v in [2**e, 2**(e+1))
    e = xp.where(v > 0, xp.maximum(e, int(info.minexp)), int(info.minexp))
    with np.errstate(invalid="ignore"):
        return xp.where(xp.isfinite(v), xp.ldexp(xp.float64(1.0), e - p + 1), xp.nan)


def _float_elements(x: np.ndarray, argname: str, who: str, rows: bool = False) -> np.ndarray:
    """``x`` checked and made native and contiguous: 1-D, or 2-D rows with ``rows``."""
    if rows:
        x = np.asarray(x)
        if x.ndim != 2:
            raise ValueError(f"{argname} must be 2-D (one scan per row), got shape {x.shape}")
        x = np.ascontiguousarray(x.astype(x.dtype.newbyteorder("=")) if not x.dtype.isnative else x)
    else:
        x = get_operator("add").host_elements(x, argname, allow_empty=True)
    if dtype_name(x.dtype) not in UNIT_ROUNDOFF:
        raise ValueError(f"{argname} has dtype {x.dtype.name!r}; {who} takes "
                         f"{', '.join(FLOAT_DTYPES)}")
    return x


def certified(x: np.ndarray, inclusive: bool = True, flush: bool = False, rows: bool = False
              ) -> np.ndarray:
    """Per output of an add-scan of ``x``: True where *every* summation order is exact.

    That holds where every input of the prefix is a multiple of 2**e and the prefix's
    sum of magnitudes is below 2**(p+e) (p significand bits) and below the overflow
    threshold: then every partial sum of any order is some m * 2**e with |m| < 2**p, which
    the dtype represents, so no addition rounds.  A scan that differs from the exact answer
    at a certified output has dropped, repeated or misplaced an element, or kept a partial
    sum in fewer bits -- a proven error, with no bound needed.  Prefixes with NaN or
    infinities are never certified; the comparison ignores the sign of a zero sum.  With
    ``flush`` (subnormals may read as zero) the grid 2**e must also be at least the smallest
    normal number, so that no nonzero partial sum is subnormal.  With ``rows``, ``x`` is 2-D
    and each row is a scan of its own.
    """
    x = _float_elements(x, "x", "the certificate", rows)
    kind = dtype_name(x.dtype)
    from .exact import lowest_set_bit

    if x.size == 0:
        return np.zeros(x.shape, dtype=bool)
    finite = np.logical_and.accumulate(np.isfinite(x), axis=-1)
    low = lowest_set_bit(np.where(np.isfinite(x), x, 0).astype(x.dtype))
    e = np.minimum.accumulate(low, axis=-1)  # zeros impose nothing (their lowest bit is +inf)
    p = SIGNIFICAND_BITS[kind]
    with np.errstate(over="ignore"):
        limit = np.ldexp(1.0, np.clip(p + e, -1100, 1100).astype(np.int64))
    s = abs_sums(x)  # upper bounds: "bound < limit" implies "sum < limit"
    ok = finite & (s < limit) & (s < float(finfo(x.dtype).max))
    if flush:
        ok &= e >= int(finfo(x.dtype).minexp)
    return ok if inclusive else shifted(ok, True)


def overflow_threshold(dtype: str, halved: bool = False) -> float:
    """The smallest magnitude that rounds to infinity in ``dtype``: the largest finite value
    plus half its ulp, (2 - 2**-p) * 2**emax (half that with ``halved``).  For float64 the
    whole of it is past every float64, so the answer is +inf there: a float64 bound reaches
    it exactly when it overflows itself."""
    dt = as_dtype(dtype)
    p = SIGNIFICAND_BITS[dtype_name(dt)]
    with np.errstate(over="ignore"):
        return float(np.ldexp(2.0 - 2.0**-p, int(finfo(dt).maxexp) - 1 - int(halved)))


def may_overflow(x: np.ndarray, depths: np.ndarray, inclusive: bool = True,
                 sums: np.ndarray | None = None) -> np.ndarray:
    """Per output of an add-scan of ``x``: True where some summation order of depth at most
    ``depths`` may overflow, so an infinity or NaN there can be rounding.

    Every partial sum of a prefix is at most ``(1 + u)**d * sum|x|`` in magnitude (each of at
    most d roundings on its path grows it by at most a factor 1 + u), so where
    that stays below :func:`overflow_threshold` no order overflows and a non-finite output is
    a proven error.  Prefixes holding a NaN or an infinity are never True: IEEE arithmetic
    fixes their outputs exactly.
    """
    x = _float_elements(x, "x", "may_overflow", rows=np.ndim(x) == 2)
    if sums is None:
        sums = abs_sums(x, inclusive)
    finite = np.logical_and.accumulate(np.isfinite(x), axis=-1)
    if not inclusive:
        finite = shifted(finite, True)
    depths = np.broadcast_to(np.asarray(depths, dtype=np.int64), x.shape)
    u = UNIT_ROUNDOFF[dtype_name(x.dtype)]
    with np.errstate(over="ignore", invalid="ignore"):
        # exp and the products round too: a relative 2**-40 more covers them.
        reach = sums * np.exp(depths * np.log1p(u)) * (1 + 2.0**-40)
    return finite & (reach >= overflow_threshold(dtype_name(x.dtype)))


def flush_allowance(x: np.ndarray, inclusive: bool = True) -> np.ndarray:
    """Per output, how far reading subnormals as zero can move an add-scan: the subnormal
    inputs of the prefix dropped (DAZ), and each of the prefix's k - 1 combines, and the
    output, flushed (FTZ), each by less than the smallest normal number."""
    tiny = float(finfo(x.dtype).smallest_normal)
    a = np.abs(np.where(np.isfinite(x), x, 0)).astype(np.float64)
    dropped = np.cumsum(np.where(a < tiny, a, 0.0), axis=-1)
    out = (dropped + tiny * np.arange(1, x.shape[-1] + 1)) * (1 + 2.0**-40)
    return out if inclusive else shifted(out, 0.0)


#: The narrower float types a wider one's scan may keep its sums in, fewest significand bits
#: first: a bfloat16 value in float16's range is a float16 value too.
NARROWER: dict[str, tuple[str, ...]] = {"float32": ("bfloat16", "float16"),
                                        "float64": ("bfloat16", "float16", "float32")}


def narrower_type(x: np.ndarray, got: np.ndarray, want: np.ndarray,
                  inclusive: bool = True) -> str | None:
    """The narrower float type (:data:`NARROWER`) every output ``got`` of a sum of ``x`` is a
    value of, where each infinity ``got`` holds for a finite exact prefix ``want`` has a
    prefix whose magnitudes sum past that type's largest value, and either some input is
    not a value of it, or some finite exact prefix is not while every output lies within
    the bound of a sum in that type: what the sum was kept in.  None where no such type
    fits (or ``x`` is empty)."""
    if x.size < 1:
        return None
    reach = abs_sums(x.astype(np.float64), inclusive)
    lost = np.isinf(got) & np.isfinite(want)
    for name in NARROWER.get(dtype_name(x.dtype), ()):
        t = as_dtype(name)
        with np.errstate(over="ignore", invalid="ignore"):
            holds = np.array_equal(got.astype(t).astype(got.dtype), got, equal_nan=True)
            needs = (not np.array_equal(x.astype(t).astype(x.dtype), x, equal_nan=True)
                     or _rounded_in(name, got, want, reach, inclusive))
        if holds and needs and bool(np.all(reach[lost] > float(finfo(name).max))):
            return name
    return None


def _rounded_in(name: str, got: np.ndarray, want: np.ndarray, reach: np.ndarray,
                inclusive: bool) -> bool:
    """Whether a sum of inputs that are all values of ``name`` was rounded in it: some finite
    exact prefix is not a value of it, and every finite output lies within the bound of a
    sum in it (outputs that copy inputs, as a running max's, are far from the sums)."""
    fin = np.isfinite(want) & np.isfinite(got)
    exact = want[fin]
    if np.array_equal(exact.astype(as_dtype(name)).astype(exact.dtype), exact):
        return False
    err = np.abs(got[fin].astype(np.float64) - exact.astype(np.float64))
    allowed = gamma(sequential_depths(want.shape[-1], inclusive), name)[fin] * reach[fin]
    return bool(np.all(err <= allowed))


def abs_sums(x: np.ndarray, inclusive: bool = True) -> np.ndarray:
    """Upper bounds on sum|x_i| of each prefix (finite terms): the float64 running sum, whose
    k-th value errs by at most gamma_(k-1) of the true sum, inflated by 4*k*2**-53 to cover
    that error and the inflation's own roundings (valid for k < 2**50)."""
    from ..core.arrays import array_module

    xp = array_module(x)  # device arrays stay on the device
    if xp is np:  # the same values in place, in half the passes
        a = np.abs(x.astype(np.float64))
        finite = np.isfinite(a)
        if not finite.all():
            a[~finite] = 0
    else:
        a = xp.abs(xp.where(xp.isfinite(x), x, 0)).astype(np.float64)
    with np.errstate(over="ignore"):
        s = xp.cumsum(a, axis=-1)
        inflation = xp.arange(1, a.shape[-1] + 1, dtype=np.float64)
        inflation *= 4.0 * 2.0**-53
        inflation += 1
        s *= inflation
    return s if inclusive else shifted(s, 0.0)


class Rule(enum.Enum):
    """Which rule of a judge (products, log-sum-exp) an output broke."""

    #: A NaN, an infinity, a zero or a sign not where the operator's rules put it.
    SPECIALS = "specials"
    #: Not the exact answer where every order of the operation is exact.
    CERTIFICATE = "certificate"
    #: Beyond the rounding bound of any order.
    BOUND = "bound"
    #: An infinity where no order can overflow.
    OVERFLOW = "overflow"


@dataclass
class Judgement:
    """Per output of a scan held to a bound of its own (products, log-sum-exp): acceptable or
    not, its error (relative for products), the bound (NaN where only IEEE's specials and
    signs are checked), why a failing output fails (the :class:`Rule` it broke, and in
    words), and the float64 reference it was judged against, specials applied (for
    reports)."""

    ok: np.ndarray
    error: np.ndarray
    bound: np.ndarray
    reason: np.ndarray
    reference: np.ndarray
    rule: np.ndarray

    @classmethod
    def start(cls, error: np.ndarray, bound: np.ndarray, reference: np.ndarray) -> Judgement:
        """Every output acceptable until a rule fails it."""
        return cls(np.ones(error.shape, dtype=bool), error, bound,
                   np.full(error.shape, "", dtype=object), reference,
                   np.full(error.shape, None, dtype=object))

    def fail(self, where: np.ndarray, rule: Rule, why: str) -> None:
        """Fail the outputs ``where`` selects for breaking ``rule`` (``why``, in words),
        unless an earlier rule failed them."""
        new = where & self.ok
        self.reason[new] = why
        self.rule[new] = rule
        self.ok[new] = False


@dataclass
class ErrorReport:
    """Per-output errors of one computed scan against the exact answer, with the verdicts."""

    name: str
    dtype: str
    abs_err: np.ndarray
    bound: np.ndarray
    verdicts: np.ndarray
    #: The float64 exact answer and half its ulp, from which the relative and ulp errors
    #: are taken when asked for (a check reads neither of a passing scan).
    exact: np.ndarray = field(repr=False)
    half_ulp: np.ndarray = field(repr=False)
    #: Outputs non-finite where they should not be: their error is infinite.
    wrong_special: np.ndarray | None = field(default=None, repr=False)
    notes: list[str] = field(default_factory=list)

    @cached_property
    def rel_err(self) -> np.ndarray:
        """|computed - exact| / |exact| per output (0 for a misplaced special, whose
        absolute error is infinite)."""
        err = (self.abs_err if self.wrong_special is None
               else np.where(self.wrong_special, 0.0, self.abs_err))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.exact != 0, err / np.abs(self.exact),
                            np.where(err > 0, np.inf, 0))

    @cached_property
    def ulp_err(self) -> np.ndarray:
        """|computed - exact| in ulps of the exact answer's dtype."""
        with np.errstate(invalid="ignore", divide="ignore"):
            err = self.abs_err / np.where(self.half_ulp > 0, 2 * self.half_ulp, np.inf)
        return err if self.wrong_special is None else np.where(self.wrong_special, np.inf, err)

    @property
    def measured(self) -> np.ndarray:
        """Outputs whose rounding error is a number: all but the overflowed ones (their
        error is infinite and legitimate, so the figures below leave them out)."""
        return self.verdicts != Verdict.OVERFLOWED

    @property
    def overflowed(self) -> np.ndarray:
        """Indices of outputs that overflowed where some summation order may overflow."""
        return np.flatnonzero(self.verdicts == Verdict.OVERFLOWED)

    @property
    def rms(self) -> float:
        err = self.abs_err[self.measured]
        return float(np.sqrt(np.mean(err**2))) if err.size else 0.0

    @property
    def l2(self) -> float:
        return float(np.sqrt(np.sum(self.abs_err[self.measured] ** 2)))

    @property
    def max_abs(self) -> float:
        return float(self.abs_err[self.measured].max(initial=0.0))

    @property
    def max_ulps(self) -> float:
        return float(self.ulp_err[self.measured].max(initial=0.0))

    @property
    def worst_index(self) -> int:
        """The output whose error is the largest fraction of its bound."""
        return int(np.argmax(self.bound_fraction))

    @property
    def bound_fraction(self) -> np.ndarray:
        # An error over a tiny bound may be a fraction past the largest float: infinite.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            frac = np.where(self.bound > 0, self.abs_err / self.bound,
                            np.where(self.abs_err > 0, np.inf, 0))
        return np.where(self.measured, frac, 0.0)

    @property
    def verdict(self) -> Verdict:
        return Verdict(int(self.verdicts.max(initial=Verdict.EXACT)))

    @property
    def beyond(self) -> np.ndarray:
        """Indices of outputs whose error rounding cannot explain."""
        return np.flatnonzero(self.verdicts == Verdict.BEYOND_BOUND)

    def row(self) -> dict[str, object]:
        return {
            "scan": self.name,
            "dtype": self.dtype,
            "max ulps": self.max_ulps,
            "mean ulps": float(self.ulp_err[self.measured].mean()) if self.measured.any() else 0.0,
            "max err/bound": float(self.bound_fraction.max()),
            "RMS": self.rms,
            "L2": self.l2,
            "max abs": self.max_abs,
            "worst index": self.worst_index,
            "overflowed": int(self.overflowed.size),
            "verdict": self.verdict.label,
        }


def rounding_bound(x: np.ndarray, half_ulp: np.ndarray, depths: np.ndarray, inclusive: bool = True,
                   slack: float = 1.0, spread: np.ndarray | None = None) -> np.ndarray:
    """Per output, ``gamma_d * sum|x| + ulp/2`` (each term times ``slack``; ``half_ulp`` is
    half an ulp of each exact output; ``spread`` is ``gamma(depths) * abs_sums(x,
    inclusive)`` where the caller has it): the largest error rounding alone can cause at
    summation-tree depth d."""
    if spread is None:
        spread = gamma(depths, dtype_name(x.dtype)) * abs_sums(x, inclusive)
    return spread * slack + half_ulp * slack


def _specials_agree(computed: np.ndarray, exact: np.ndarray) -> np.ndarray:
    both_nan = np.isnan(computed) & np.isnan(exact)
    same_inf = np.isinf(exact) & (computed == exact)
    return both_nan | same_inf


def classify(
    x: np.ndarray,
    computed: np.ndarray,
    depths: np.ndarray,
    inclusive: bool = True,
    name: str = "scan",
    exact: np.ndarray | None = None,
    sums: np.ndarray | None = None,
    flush: bool = False,
    rows: bool = False,
) -> ErrorReport:
    """Compare a computed float add-scan of ``x`` with the exact answer, output by output.

    ``depths[k]`` is the summation-tree depth of output k (0 for an output that is
    a copy of one input).  An output is BEYOND_BOUND only when rounding provably
    cannot explain it: ``|computed - exact_rounded| > gamma_d * sum|x| + ulp/2``, or it is
    non-finite where the exact sum is not (or the other way round) and no summation order
    can overflow (:func:`may_overflow`); where one can, it is OVERFLOWED.
    ``exact`` and ``sums`` (``abs_sums(x, inclusive)``) may be passed in where one input
    is classified against several scans.  With ``flush`` the bound grows by
    :func:`flush_allowance`: the target may read subnormals as zero.  With ``rows``, ``x``
    and ``computed`` are 2-D and each row is a scan of its own (``exact`` is then required).
    """
    x = _float_elements(x, "x", "classify", rows)
    if rows:
        computed = _float_elements(computed, "computed", "classify", rows)
        if exact is None:
            raise ValueError("classify(rows=True) needs exact= (exact_scan_axis of x)")
    else:
        computed = get_operator("add").host_elements(computed, "computed", allow_empty=True)
    dtype = dtype_name(x.dtype)
    if computed.shape != x.shape:
        raise ValueError(f"computed has shape {computed.shape}, expected {x.shape} like x")
    depths = np.broadcast_to(np.asarray(depths, dtype=np.int64), x.shape)
    if exact is None:
        exact = exact_scan(x, inclusive=inclusive)
    if sums is None:  # the bound and the overflow judgement both need it
        sums = abs_sums(x, inclusive)
    ex = np.asarray(exact, dtype=np.float64)
    cp = np.asarray(computed, dtype=np.float64)
    finite_cp = np.isfinite(cp)
    finite = np.isfinite(ex) & finite_cp
    all_finite = bool(finite.all())
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        abs_err = np.abs(cp - ex)
        if not all_finite:
            abs_err[~finite] = 0.0
        half_ulp = ulp(exact, dtype) / 2
        # float64 differences of float64 data may round: inflate by a relative 2**-50.
        slack = 1 + 2.0**-50
        # gamma_d * sum|x|, for the bound and for the reach of an overflow below.
        spread = gamma(depths, dtype) * sums
        bound = rounding_bound(x, half_ulp, depths, inclusive, slack, spread=spread)
        if flush:
            bound = bound + flush_allowance(x, inclusive)
    verdicts = np.full(x.shape, Verdict.WITHIN_BOUND, dtype=np.int8)
    if all_finite:  # no special anywhere: nothing to agree on, nothing overflowed
        verdicts[cp == ex] = Verdict.EXACT
        verdicts[abs_err > bound] = Verdict.BEYOND_BOUND
        return ErrorReport(name, dtype, abs_err, bound, verdicts, ex, half_ulp)
    agree = _specials_agree(cp, ex)
    verdicts[(cp == ex) | agree] = Verdict.EXACT
    wrong_special = ~finite & ~agree
    verdicts[(abs_err > bound) | wrong_special] = Verdict.BEYOND_BOUND
    if not wrong_special.any():  # no special where it should not be: nothing overflowed
        return ErrorReport(name, dtype, abs_err, bound, verdicts, ex, half_ulp)
    # A partial sum that overflows stays infinite (or meets the other sign's infinity: NaN)
    # in every later combine; where no order can overflow that is a proven error.
    # +inf needs a +inf in the prefix or positive terms that reach the threshold in some
    # order, and no -inf (which turns it into NaN); -inf likewise; NaN both.  A finite answer
    # needs an infinity no order reaches: none in the prefix (an infinite input stays, in
    # every order), where the exact sum only rounds past the threshold.
    up, down, p_inf, n_inf, nan = _infinities_in_reach(x, depths, inclusive)
    can = np.where(cp == np.inf, up & ~n_inf, np.where(cp == -np.inf, down & ~p_inf,
                                                       np.where(np.isnan(cp), up & down,
                                                                (up | down) & ~p_inf & ~n_inf)))
    overflowed = wrong_special & can & ~nan
    # Where the exact sum itself rounds to infinity, a finite answer is rounding only if it
    # has that sign and lies within the bound of it: |answer| + gamma_d * sum|x| reaches the
    # threshold (halved, so that float64's is a float64).
    with np.errstate(invalid="ignore", over="ignore"):
        reach = (np.abs(cp) + spread) * 0.5
    finite_for_inf = np.isinf(ex) & finite_cp
    implausible = finite_for_inf & ((np.sign(cp) != np.sign(ex)) |
                                    ~(reach >= overflow_threshold(dtype, halved=True)))
    verdicts[overflowed & ~implausible] = Verdict.OVERFLOWED
    abs_err[wrong_special] = np.inf
    return ErrorReport(name, dtype, abs_err, bound, verdicts, ex, half_ulp, wrong_special)


def _infinities_in_reach(x: np.ndarray, depths: np.ndarray, inclusive: bool
                         ) -> tuple[np.ndarray, ...]:
    """Per output: whether some order of depth at most ``depths`` can make a partial sum +inf
    (a +inf in the prefix, or finite positive terms that may overflow), whether -inf likewise,
    whether the prefix holds a +inf, a -inf, and a NaN (then NaN is the only answer)."""
    finite = np.isfinite(x)
    zero = np.zeros((), dtype=x.dtype)

    def held(mask: np.ndarray) -> np.ndarray:
        h = np.logical_or.accumulate(mask, axis=-1)
        return h if inclusive else shifted(h, False)

    p_inf, n_inf = held(x == np.inf), held(x == -np.inf)
    with np.errstate(invalid="ignore"):
        up = p_inf | may_overflow(np.where(finite & (x > 0), x, zero), depths, inclusive)
        down = n_inf | may_overflow(np.where(finite & (x < 0), -x, zero), depths, inclusive)
    return up, down, p_inf, n_inf, held(np.isnan(x))
