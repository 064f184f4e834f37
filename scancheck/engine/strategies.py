"""Public Hypothesis strategies for scan inputs: sizes, block sizes, dtypes and data.

Sizes are biased toward where scans break — one element, a block minus or plus one,
one past each level of a multi-level hierarchy, primes, and the canonical 23
elements at block size 4 — and every strategy shrinks toward the smallest case:
fewer elements, smaller blocks, simpler values.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ..core.arrays import as_dtype
from ..core.dtypes import INPUT_DTYPES, SIGNIFICAND_BITS, finfo, is_float
from ..core.operators import get_operator

#: Data distributions :func:`scan_data` can draw from.
DISTRIBUTIONS: tuple[str, ...] = (
    "integers",  # integer-valued floats in [0, 1000), as in the seeds' practicals
    "uniform",  # uniform in [-1, 1)
    "wide",  # magnitudes spread over most of the exponent range
    "cancellation",  # large terms of both signs that nearly cancel, and small ones
    "subnormal",  # values around the smallest normal number: the largest and smallest subnormals
    "specials",  # finite values with NaN, +inf, -inf and -0.0 mixed in
    "dyadic",  # integer multiples of one power of two whose prefixes cross 2**p (exactness edge)
    "steps",  # nonzero steps in [-3, 3] whose running sum stays in [0, 3]: every partial sum tiny
    "overflow",  # magnitudes whose running sum crosses the overflow threshold, some of them max
    "zeros",  # -0.0 and +0.0 in every position among small values of one sign
    "factors",  # products' data: magnitudes near 1 of both signs, some zeros, some huge or tiny
    "powers",  # signed powers of two (a few times 3) whose products dip below the normal numbers
    "odd",  # odd integers (mostly +-1 and +-3; floats +-1): products never wrap to 0, as even do
    "roundoff",  # a head, then fractions of its ulp: a running sum rounds at each, one way
)

#: Data no search draws, that confirms a contract found on the key's data: the same data
#: with its trigger where the rule's every clause applies.  A NaN rule read off a case
#: whose NaNs come among finite values says nothing of a prefix of NaNs alone (whether the
#: outputs there are NaN, and whether the first finite value starts the scan afresh).
CONFIRMING: dict[str, str] = {"specials": "specials first", "lone specials": "specials first"}

#: The blocks 2**j, j in this range, whose residues a size k * 2**j + r is drawn to spread
#: over: a bug of one residue modulo a block of 32 to 4096 elements (a tail of 7 past a
#: tile of 64, say) lies in 1/2**j of the sizes, no tile edge among them.  Lone specials
#: fall in the last partial tile of one of them.
BLOCKS_LOG2 = (5, 12)
#: The blocks (log2) whose last tile holds a lone special, each drawn 1.3 times as often
#: as one twice its size.
_BLOCKS = np.arange(BLOCKS_LOG2[0], BLOCKS_LOG2[1] + 1)
_BLOCK_WEIGHTS = 1.3 ** -np.arange(_BLOCKS.size) / (1.3 ** -np.arange(_BLOCKS.size)).sum()

#: Data the sweep of residues (:class:`~scancheck.engine.cases.Sweep`) draws in place of
#: the key's, and only it: where one element in 20 is special, every output past the first
#: hundred or so is NaN already, and a NaN mishandled in a scan's last tile alone is never
#: seen.  Drawn only by the sweep, whose seed differs every run, so the ladder and
#: Hypothesis's draws (which draw the key's data), and what they find first, stay as they
#: are.
SWEPT: dict[str, str] = {"specials": "lone specials"}

_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 61, 127, 251, 509, 1021, 2039, 4093, 8191)


def _check_positive(name: str, value: int, limit: int | None = None) -> None:
    if not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name}={value!r} must be a positive integer")
    if limit is not None and value > limit:
        raise ValueError(f"{name}={value} is over the limit of {limit}")


def hard_sizes(block: int, max_size: int, levels: int = 3) -> list[int]:
    """Sizes at which block-structured scans go wrong, for tiles of ``block`` elements."""
    _check_positive("block", block)
    _check_positive("max_size", max_size)
    sizes = {1, 2, 3, block - 1, block, block + 1, 2 * block - 1, 2 * block + 1}
    for level in range(2, levels + 1):
        tile = block**level
        sizes |= {tile - 1, tile, tile + 1}
    sizes |= set(_PRIMES)
    if block == 4:
        sizes.add(23)  # seed 003's worked example
    return sorted(s for s in sizes if 1 <= s <= max_size)


def block_sizes(
    min_value: int = 2, max_value: int = 1024, *, powers_of_two: bool = True
) -> st.SearchStrategy[int]:
    """Threads per block: powers of two in [min_value, max_value] (any size if not required)."""
    _check_positive("min_value", min_value, 1024)
    _check_positive("max_value", max_value, 1024)
    if min_value > max_value:
        raise ValueError(f"min_value={min_value} is greater than max_value={max_value}")
    if not powers_of_two:
        return st.integers(min_value, max_value)
    powers = [2**k for k in range(11) if min_value <= 2**k <= max_value]
    if not powers:
        raise ValueError(f"no power of two lies in [{min_value}, {max_value}]")
    return st.sampled_from(powers)


def scan_sizes(block: int, max_size: int = 4096, levels: int = 3) -> st.SearchStrategy[int]:
    """Element counts, half of them snapped down to the nearest of :func:`hard_sizes`.

    One integer is drawn and, if a drawn flag says so, lowered to the hard size at or
    below it.  For a bug that strikes at every size past some point, turning the flag
    off never turns a failure into a pass, so the shrinker can always go on in plain
    integers and reaches the smallest failing size.  (A ``one_of`` of the two cannot:
    its shrinker stays in the branch where it found the failure, at 131 when 7 fails.)
    """
    return _snapped_sizes(tuple(hard_sizes(block, max_size, levels)), max_size)


@st.composite
def _snapped_sizes(draw: st.DrawFn, hard: tuple[int, ...], max_size: int) -> int:
    n = draw(st.integers(1, max_size))
    if draw(st.booleans()):
        n = hard[int(np.searchsorted(hard, n, side="right")) - 1]
    return n


@st.composite
def sizes_and_blocks(
    draw: st.DrawFn,
    min_block: int = 2,
    max_block: int = 1024,
    max_size: int = 4096,
    levels: int = 3,
) -> tuple[int, int]:
    """An ``(n, block)`` pair; failures shrink to the smallest block, then the smallest n."""
    block = draw(block_sizes(min_block, max_block))
    n = draw(scan_sizes(block, max_size, levels))
    return n, block


def dtypes(allowed: tuple[str, ...] = INPUT_DTYPES) -> st.SearchStrategy[str]:
    """Element dtype names, simplest (float32) first."""
    unknown = set(allowed) - set(INPUT_DTYPES)
    if unknown or not allowed:
        raise ValueError(f"allowed={allowed!r} must be a non-empty subset of {INPUT_DTYPES}")
    return st.sampled_from(list(allowed))


def generate_data(rng: np.random.Generator, n: int, dtype: str, distribution: str,
                  row: int | None = None) -> np.ndarray:
    """``n`` values of ``dtype`` from one of :data:`DISTRIBUTIONS`, drawn with ``rng``;
    ``row`` the length of the sequences they are scanned in, where not ``n`` (rows of an
    N-D input), to which the overflowing magnitudes are scaled."""
    dt = as_dtype(dtype)
    if dt == np.bool_:  # every distribution: sparse, even or dense trues, so that a running
        # or stays false, and a running and true, for a while
        return rng.random(n) < rng.choice([0.02, 0.5, 0.98])
    if distribution == "steps":
        # s_k in {0..3} never repeats, x_k = s_k - s_(k-1): every sum of adjacent elements lies
        # in [-3, 3], so any scan that combines adjacent ranges is exact with 3 bits.
        s = np.cumsum(rng.integers(1, 4, n)) % 4
        return np.diff(s, prepend=0).astype(dt)
    if distribution == "odd":
        # An integer product of even factors is 0 modulo 2**bits after as many factors of 2,
        # and stays 0: every output past that agrees with a scan that writes zeros there.
        if is_float(dt):  # +-1 alone: a float product of threes would overflow
            return rng.choice(np.array([1.0, -1.0]), n).astype(dt)
        x = rng.choice(np.array([1, -1, 3, -3, 5, -5]), n, p=[0.35, 0.35, 0.12, 0.12, 0.03, 0.03])
        x = x.astype(dt)  # unsigned: -1 wraps to the type's max, odd too
        iinfo = np.iinfo(dt)
        lim = rng.random(n) < 0.01  # the odd limits, now and then
        x[lim] = rng.choice(np.array([iinfo.max, iinfo.min + 1 if iinfo.min else 1], dt),
                            int(lim.sum()))
        return x
    if not is_float(dt):
        iinfo = np.iinfo(dt)
        if distribution == "integers":
            return rng.integers(0, min(1000, int(iinfo.max) + 1), n).astype(dt)
        x = rng.integers(iinfo.min, iinfo.max, n, dtype=dt, endpoint=True)
        # The limits and the values around zero, which a uniform draw all but never makes
        # (the least int32 once in 2**32 elements): a scan that mishandles one must meet it.
        edges = np.array(sorted({int(iinfo.min), int(iinfo.min) + 1, int(iinfo.max) - 1,
                                 int(iinfo.max), 0, 1} | ({-1} if iinfo.min else set())), dt)
        edge = rng.random(n) < 0.02
        x[edge] = rng.choice(edges, int(edge.sum()))
        return x
    if distribution == "dyadic":
        return _dyadic(rng, n, dt)
    info = finfo(dt)
    if distribution == "integers":  # exact in the type: below 256 for bfloat16
        return rng.integers(0, min(1000, 2 ** SIGNIFICAND_BITS[dt.name]), n).astype(dt)
    if distribution == "uniform":
        return rng.uniform(-1, 1, n).astype(dt)
    if distribution == "wide":
        lo = int(info.minexp) + 2
        hi = max(int(info.maxexp) - 2 - max(n, 2).bit_length(), lo + 1)
        return (rng.uniform(1, 2, n) * np.exp2(rng.integers(lo, hi, n).astype(float))
                * rng.choice([-1.0, 1.0], n)).astype(dt)
    if distribution == "cancellation":
        top = min(20, int(info.maxexp) - 3)  # float16's largest is 65504
        big = rng.uniform(1, 2, n) * 2.0 ** rng.integers(10, top, n) * rng.choice([-1, 1], n)
        small = rng.uniform(-1, 1, n)
        return np.where(rng.random(n) < 0.5, big, small).astype(dt)
    if distribution == "subnormal":
        tiny, least = float(info.smallest_normal), float(info.smallest_subnormal)
        u = rng.uniform(-4, 4, n)
        kind = rng.integers(3)
        # Normal values of one sign, or none, and none in the first quarter (three at least):
        # a max or min scan stays among the subnormals and zeros there, where reading them
        # as zero shows, or for the whole array.
        if kind == 1:
            u = np.where(np.abs(u) >= 1, np.abs(u) * rng.choice([-1.0, 1.0]), u)
        elif kind == 2:
            u /= 4
        head = max(3, n // 4)
        u[:head] /= 4
        x = (u * tiny).astype(dt)
        # The largest subnormal (one bit short of normal) and the smallest, of either sign,
        # past the first quarter: there the running max and min lie anywhere, not at its ends.
        edges = np.array([tiny - least, least]).astype(dt)
        edge = rng.random(n) < 0.3
        edge[:head] = False
        x[edge] = rng.choice(edges, int(edge.sum())) * rng.choice([-1, 1], int(edge.sum()))
        return x
    if distribution == "overflow":
        return _overflowing(rng, n, dt, n if row is None else row)
    if distribution == "zeros":
        # Max scans of non-positive data and min scans of non-negative data end on zeros, where
        # the sign of the answer is the spec's to declare.  The first quarter (two at least)
        # is zeros alone, whatever the sign drawn: there both a max and a min scan meet ties
        # of -0 and +0 on every input, not only on the half whose sign suits them.
        x = -rng.uniform(0, 1, n)
        zero = rng.random(n) < 0.6
        zero[:max(2, n // 4)] = True
        x[zero] = rng.choice([-0.0, 0.0], int(zero.sum()))
        return (x if rng.random() < 0.5 else -x).astype(dt)
    if distribution == "factors":
        return _factors(rng, n, dt)
    if distribution == "roundoff":
        return _roundoff(rng, n, dt)
    if distribution == "powers":
        return _powers(rng, n, dt)
    if distribution == "lone specials":
        return _lone_specials(rng, n, dt)
    if distribution in ("specials", "specials first"):
        x = rng.uniform(-1, 1, n).astype(dt)
        specials = np.array([np.nan, np.inf, -np.inf, -0.0], dtype=dt)
        mask = rng.random(n) < 0.05
        x[mask] = rng.choice(specials, int(mask.sum()))
        if distribution == "specials first" and n:
            # NaNs first, up to half the input, then the specials among finite values.
            x[:int(rng.integers(1, max(1, n // 2) + 1))] = np.nan
        nan = np.isnan(x)
        x[nan] = rng.choice(nans(dt), int(nan.sum()))
        return x
    raise ValueError(f"distribution={distribution!r} is unknown; allowed: {', '.join(DISTRIBUTIONS)}")


def nans(dt: np.dtype) -> np.ndarray:
    """Three NaNs of ``dt``: the quiet NaN, the same with its sign bit set (x86's default
    NaN, which inf - inf and 0 * inf make there) and one with a payload in its low bit."""
    uint = np.dtype(f"u{dt.itemsize}").type
    bits = np.array([np.nan], dt).view(uint)[0]
    sign = uint(1) << uint(8 * dt.itemsize - 1)
    return np.array([bits, bits | sign, bits | uint(1)], uint).view(dt)


def _lone_specials(rng: np.random.Generator, n: int, dt: np.dtype) -> np.ndarray:
    """Values uniform in [-1, 1) but one to three specials (one most often): a NaN, of each
    pattern, or an infinity.  The first is a NaN four times in five and lies, four times in
    five, in the last partial tile of a block of 2**j elements (j from 5 to 12; where n is
    a multiple of it, at the end), the tail a blocked scan handles apart; else at a
    distance from the first or, three times in four, the last element.  The others lie
    after it: a NaN before the tile would hide what the scan makes of one in it, as every
    prefix after a NaN is NaN.  The smaller blocks are drawn more often, since their last
    tile lies within that of every larger block, and distances are log-uniform (from the
    tile's end in a tile), so that the few elements a bug of a smaller tile owns are met
    as often as the many of a larger one.  The places are drawn before the values, so that
    one seed puts them alike at every n it is shrunk through."""
    k = int(rng.choice([1, 1, 2, 3]))
    tail, from_end = rng.random(2) < [0.8, 0.75]
    reach, into = rng.random(2)
    block = 1 << int(rng.choice(_BLOCKS, p=_BLOCK_WEIGHTS))
    later = rng.random(k - 1)
    first = rng.choice(5, p=[0.3, 0.3, 0.2, 0.1, 0.1])
    others = rng.choice(5, k - 1, p=[0.25, 0.25, 0.2, 0.15, 0.15])
    x = rng.uniform(-1, 1, n).astype(dt)
    if n:
        if tail:
            at = n - int(max(n % block, 1) ** into)
        else:
            far = min(int(float(n) ** reach) - 1, n - 1)
            at = n - 1 - far if from_end else far
        specials = np.r_[nans(dt), np.array([np.inf, -np.inf], dt)]
        x[at] = specials[first]
        after = at + 1 + np.floor(later * (n - 1 - at)).astype(np.int64)
        inside = after < n  # none after the last element
        x[after[inside]] = specials[others[inside]]
    return x


def _dyadic(rng: np.random.Generator, n: int, dt: np.dtype) -> np.ndarray:
    """Integers of m bits times 2**e, a quarter of them negative, with m chosen so that the
    sum of magnitudes crosses 2**(p+e) somewhere between n/8 and 8n elements: the prefixes
    before the crossing are exact in every summation order, those after it are not."""
    p = SIGNIFICAND_BITS[dt.name]
    m = int(np.clip(p + 1 - max(n, 1).bit_length() + rng.integers(-3, 4), 1, p))
    info = finfo(dt)
    # Every value on the type's grid (its subnormals included), and 2**(p+e) well below its
    # largest value: float16's range is 2**-24 to 65504.
    e = int(rng.integers(max(-30, int(info.minexp) - p + 1), min(10, int(info.maxexp) - p - 2) + 1))
    k = rng.integers(0, 2**m, n, dtype=np.int64)  # m <= p <= 53: exact in float64
    k = np.where(rng.random(n) < 0.25, -k, k)
    return np.ldexp(k.astype(np.float64), e).astype(dt)


def _roundoff(rng: np.random.Generator, n: int, dt: np.dtype) -> np.ndarray:
    """A head h in [1, 1.125) times 2**e, then a * ulp(h) with a = k/64 in [0.09, 0.3],
    the first of them (1 + a)/2 * ulp(h), one sign for all: every element is exact, and a
    running sum rounds at every addition, up by (1 - a)/2 ulp at the first and down by
    a ulp at each later one.  Any order of additions stays within the any-order bound (a
    running sum at about 2a of it); one that counts each rounding twice, as a compensated
    sum whose correction has its sign flipped, exceeds it from output 4 or 6 on (toward 1.6x
    at a = 0.2), where on random data it does now and then."""
    e = int(rng.integers(0, 4))
    head = np.ldexp(1 + np.floor(rng.uniform(0, 16)) / 128, e)  # 4 bits: exact in bfloat16
    k = int(rng.integers(6, 20))
    ulp = float(np.spacing(dt.type(head)))
    # After the first increment a correction of the wrong sign is (1 - a)/2 ulp, its fixed
    # point: each later addition with it rounds up by as much again.
    x = np.full(max(n, 2), k / 64 * ulp)
    x[:2] = (head, (64 + k) / 128 * ulp)
    return (x[:n] * rng.choice([-1.0, 1.0])).astype(dt)


def _factors(rng: np.random.Generator, n: int, dt: np.dtype) -> np.ndarray:
    """Magnitudes 2**U(-1/2, 1/2) of random sign, whose products wander slowly (a range of k
    of them stays within 2**(sqrt(k)) or so), with ones, and a zero in a quarter of them; in
    half the arrays a few factors near the square root of the largest or smallest float, so
    that some ranges overflow or underflow and others do not."""
    x = np.exp2(rng.uniform(-0.5, 0.5, n)) * rng.choice([-1.0, 1.0], n)
    x[rng.random(n) < 0.01] = 1.0
    if n and rng.random() < 0.25:  # one zero at most: every product after it is a zero
        x[rng.integers(0, n)] = 0.0
    if rng.random() < 0.5:
        info = finfo(dt)
        few = rng.random(n) < min(0.01, 4.0 / max(n, 1))
        half = np.where(rng.random(n) < 0.5, int(info.maxexp), int(info.minexp)) // 2
        x[few] = np.exp2(half[few] + rng.uniform(-1, 1, int(few.sum())))
    x *= np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return x.astype(dt)


def _powers(rng: np.random.Generator, n: int, dt: np.dtype) -> np.ndarray:
    """Signed powers of two, a few later ones times 3, whose running product falls steadily
    from 1 to a power of two among the subnormals (or the smallest normal), then climbs back
    by less than the largest float's exponent minus p: every range's product lies between
    the smallest subnormal and 2**-p times the largest float, and the 3s multiply to less
    than 2**(p-1), so every order of multiplication is exact.  Reading subnormals as zero is
    not: the products from the dip on come back zero."""
    info = finfo(dt)
    p = SIGNIFICAND_BITS[dt.name]
    lowest = int(info.minexp) - p + 1  # the smallest subnormal is 2**lowest
    depth = int(rng.integers(lowest + 1, int(info.minexp) + 1))
    back = int(rng.integers(0, int(info.maxexp) - p))
    down = (n + 1) // 2
    path = np.r_[np.round(np.linspace(0, depth, down + 1))[1:],
                 np.round(np.linspace(depth, depth + back, n - down + 1))[1:]]
    e = np.diff(np.r_[0.0, path])
    threes = np.zeros(n)  # on the way back up, so that the dip itself is a power of two
    threes[down + rng.choice(n - down, min(n // 4, int((p - 1) / np.log2(3))), replace=False)] = 1
    x = np.ldexp(3.0**threes, e.astype(np.int64)) * rng.choice([-1.0, 1.0], n)
    return x.astype(dt)


def _overflowing(rng: np.random.Generator, n: int, dt: np.dtype, row: int) -> np.ndarray:
    """Magnitudes near the largest float over a k drawn between row/8 and row (each
    sequence scanned is ``row`` long), clipped to it.

    Half the arrays have random signs and magnitudes near ``max / sqrt(k)``: the sum of
    magnitudes crosses the overflow threshold near sqrt(k) elements and the running sum, a
    random walk, near k, then wanders back below it, so some prefixes overflow in every
    order, some in a few, and some in none.  The other half are nine tenths positive, near
    ``max / k``: the running sum itself climbs through max/2 to the threshold.
    """
    big = float(finfo(dt).max)
    crossing = max(row, 1) * 2.0 ** rng.uniform(-3, 0)
    if rng.random() < 0.5:
        frac = rng.uniform(0.5, 1.5, n) / np.sqrt(crossing)
        sign = rng.choice([-1.0, 1.0], n)
    else:
        frac = rng.uniform(0.5, 1.5, n) / crossing
        sign = np.where(rng.random(n) < 0.1, -1.0, 1.0)
    return (sign * np.minimum(frac, 1.0) * big).astype(dt)


def generate_pairs(rng: np.random.Generator, n: int, dtype: str, contracting: bool | None = True,
                   distribution: str = "uniform") -> np.ndarray:
    """``(n, 2)`` recurrence pairs (a, b) of ``dtype``; |a| < 1 if contracting, > 1 if not,
    either if None (small integers for integer dtypes, half the time with odd a's alone,
    whose running product never wraps to 0), and one a in 50 a zero of either sign
    (a gate that resets: y_k = b_k).  b is uniform in [-1, 1), or with ``distribution``
    "subnormal" in [-4, 4) times the smallest normal number, some of them the largest or
    smallest subnormal: then many y_k are subnormal."""
    dt = as_dtype(dtype)
    if not is_float(dt):
        pairs = rng.integers(-3, 4, (n, 2))
        if rng.random() < 0.5:  # odd a's alone, half the time: their product never wraps to 0
            pairs[:, 0] = rng.choice(np.array([-3, -1, 1, 3]), n)
        return pairs.astype(dt)
    mag = rng.uniform(0.5, 0.999, n) if contracting is not False else rng.uniform(1.001, 1.05, n)
    if contracting is None:
        mag = np.where(rng.random(n) < 0.5, mag, 1 / mag)
    a = mag * rng.choice([-1.0, 1.0], n)
    # Scans that divide by a running product of the a's (chunked linear attention's
    # trick) fail only where one is zero.
    gate = rng.random(n) < 0.02
    a[gate] = rng.choice([-0.0, 0.0], int(gate.sum()))
    b = rng.uniform(-1, 1, n)
    if distribution == "subnormal":
        b = generate_data(rng, n, dtype, "subnormal").astype(np.float64)
    return np.stack([a, b], axis=-1).astype(dt)


def generate_flagged(rng: np.random.Generator, n: int, dtype: str,
                     distribution: str = "integers") -> np.ndarray:
    """``(n, 2)`` (flag, value) pairs of a segmented scan: values from ``distribution``,
    head flags (0 or 1) at a density drawn from none to every element, so that empty-free
    runs of every length meet tile boundaries."""
    density = rng.choice([0.0, 1 / 1024, 1 / 64, 1 / 8, 1 / 2, 1.0])
    flags = rng.random(n) < density
    values = generate_data(rng, n, dtype, distribution)
    return np.stack([flags.astype(values.dtype), values], axis=-1)


@st.composite
def scan_data(
    draw: st.DrawFn,
    n: int,
    dtype: str = "float32",
    distribution: str | st.SearchStrategy[str] = "integers",
) -> np.ndarray:
    """A 1-D array of ``n`` elements of ``dtype`` from one of :data:`DISTRIBUTIONS`.

    Up to 16 elements are drawn value by value (they shrink to simple values);
    longer arrays come from a drawn seed, so that their size still shrinks freely.
    """
    _check_positive("n", n)
    dist = draw(distribution) if isinstance(distribution, st.SearchStrategy) else distribution
    if dist not in DISTRIBUTIONS:
        raise ValueError(f"distribution={dist!r} is unknown; allowed: {', '.join(DISTRIBUTIONS)}")
    dt = as_dtype(dtype)
    if n <= 16 and dist == "integers":
        # As generate_data's: below 1000, and exact in the type (int8's 127, bfloat16's 255).
        top = (2 ** SIGNIFICAND_BITS[dt.name] - 1 if is_float(dt) else
               1 if dt == np.bool_ else int(np.iinfo(dt).max))
        values = st.integers(0, min(999, top))
        return np.array(draw(st.lists(values, min_size=n, max_size=n)), dtype=dt)
    seed = draw(st.integers(0, 2**32 - 1))
    return generate_data(np.random.default_rng(seed), n, dt.name, dist)


def finite_floats(dtype: str, min_size: int = 1, max_size: int = 64) -> st.SearchStrategy:
    """Arrays of arbitrary finite floats of ``dtype``: subnormals and the whole exponent range."""
    dt = as_dtype(dtype)
    if not is_float(dt):
        raise ValueError(f"dtype={dtype!r} must be a float dtype")
    size = st.integers(min_size, max_size)
    if dt.itemsize == 2:
        # Every finite bit pattern: bfloat16 has no Hypothesis floats, and float16 ones cost
        # so many bytes a draw that thousands of them overran Hypothesis' buffer (a failed
        # health check on the H200).
        top = 0x7F7F if dt.name == "bfloat16" else 0x7BFF
        finite = st.integers(0, top) | st.integers(0x8000, 0x8000 + top)
        return hnp.arrays(np.uint16, size, elements=finite).map(lambda a: a.view(dt))
    return hnp.arrays(dt, size, elements=st.floats(width=dt.itemsize * 8, allow_nan=False,
                                                   allow_infinity=False))


@st.composite
def recurrence_pairs(
    draw: st.DrawFn, n: int, dtype: str = "float32", contracting: bool | None = True
) -> np.ndarray:
    """``(n, 2)`` pairs (a, b) for y_n = a_n*y_{n-1} + b_n; |a| < 1 if contracting, > 1 if not."""
    _check_positive("n", n)
    seed = draw(st.integers(0, 2**32 - 1))
    return generate_pairs(np.random.default_rng(seed), n, dtype, contracting)


@st.composite
def elements_for(
    draw: st.DrawFn, op: str, n: int, dtype: str = "float32", distribution: str = "integers"
) -> np.ndarray:
    """Input elements of operator ``op``: scalars, recurrence pairs, (flag, value) pairs, or the
    interval proof's input."""
    oper = get_operator(op)
    oper.check_dtype(dtype)
    if oper.elements == "pairs":
        return draw(recurrence_pairs(n, dtype))
    if oper.elements == "intervals":
        from ..core.operators import interval_input

        return interval_input(n)
    if oper.elements == "flagged":
        seed = draw(st.integers(0, 2**32 - 1))
        return generate_flagged(np.random.default_rng(seed), n, dtype, distribution)
    values = draw(scan_data(n, dtype, distribution))
    if oper.elements == "value-index":  # the index in the value's type
        return np.stack([values, np.arange(n).astype(values.dtype)], axis=-1)
    return values


@st.composite
def launches(
    draw: st.DrawFn,
    variant: str,
    ops: tuple[str, ...] | None = None,
    dtypes_: tuple[str, ...] | None = None,
    max_size: int = 5000,
    max_block: int = 1024,
    smem_limit: int = 48 * 1024,
) -> tuple[int, int, str, str]:
    """A valid ``(n, block, dtype, op)`` launch of a registered variant; shrinks to the smallest."""
    from ..kernels.registry import get_variant

    var = get_variant(variant)
    op = draw(st.sampled_from([o for o in var.operators if ops is None or o in ops]))
    oper = get_operator(op)
    allowed = [d for d in var.dtypes if d in oper.dtypes and (dtypes_ is None or d in dtypes_)]
    dtype = draw(st.sampled_from(allowed))
    itemsize = as_dtype(dtype).itemsize * oper.width
    params = var.resolve_params(None)
    blocks = [
        b for b in (2**k for k in range(11))
        if var.min_block <= b <= max_block and b % var.block_multiple == 0
        and var.smem(b, itemsize, params) <= smem_limit
    ]
    block = draw(st.sampled_from(blocks))
    cap = max_size if var.capacity is None else min(max_size, var.capacity(block, params))
    n = draw(scan_sizes(block, cap))
    return n, block, dtype, op
