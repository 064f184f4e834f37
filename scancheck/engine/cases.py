"""What a conformance property runs on: cases, their sizes, and the time budget of a search.

A :class:`Case` is ``(n, dtype, distribution, seed)``: short enough to print, enough to
rebuild the input bit for bit.  Sizes cover every scale from 1 to the largest n, with the
tile edges ``2**k - 1``, ``2**k`` and ``2**k + 1`` of every scale (the edges of any
power-of-two tile, block or level), the multiples m * 2**j of smaller tiles, and the
neighbours of each within 2, and sizes m * 2**j + r of every block 2**j from 32 to 4096
with their residues r spread over [0, 2**j) (:class:`Sweep`).  A search always walks
a ladder of one edge per scale, smallest first, up to the largest n (:func:`ladder`); the
search that walks it and then draws within the :class:`Budget`, and the shrinking of what
it finds, are in :mod:`scancheck.engine.search`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from hypothesis import strategies as st

from ..core.arrays import KeptArrays
from ..core.counts import is_count
from ..core.operators import get_operator
from .strategies import BLOCKS_LOG2, generate_data, generate_flagged, generate_pairs

#: The largest n a search reaches by default: many tiles of any realistic kernel (a GPU
#: tile is at most a few thousand elements), within what the exact oracle checks in a
#: second or two.
DEFAULT_MAX_N = {"cpu": 2**20, "gpu": 2**24}


@dataclass(frozen=True)
class Budget:
    """What one property's search may spend: wall-clock seconds, examples, and the largest
    n (None: ``DEFAULT_MAX_N`` of the target's device); ``bounded``: whether the seconds
    bound the ladder of sizes too (the command line's budget), or only the draws after it."""

    seconds: float = 30.0
    #: Far past what any budget of seconds draws: the search ends on time, not on a count
    #: (at 1000 it ended after 5 s of 30 and missed a bug at n in [1000, 1010]).
    max_examples: int = 10**6
    max_n: int | None = None
    #: True: the ladder stops where its next rung would end past the seconds, and the
    #: search says how far it got; False: the ladder is walked whole, whatever it costs
    #: (the tests, whose controls need every scale).
    bounded: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.seconds, bool) or not isinstance(self.seconds, int | float) or not (
                math.isfinite(self.seconds) and self.seconds > 0):
            raise ValueError(f"budget={self.seconds!r} seconds must be a positive number")
        for name in ("max_examples", "max_n"):
            value = getattr(self, name)
            if value is None and name == "max_n":
                continue
            if not is_count(value):
                raise ValueError(f"{name}={value!r} must be a positive integer")

    def top(self, device: str, *caps: int | None) -> int:
        """The largest n to search for a target on ``device``, within every given cap."""
        return min([self.max_n or DEFAULT_MAX_N[device], *(c for c in caps if c is not None)])


@dataclass(frozen=True)
class Case:
    """One input of a property: ``n`` elements of ``dtype`` drawn from ``distribution``, or
    (``drawn`` > n) the ``n`` elements from ``skip`` on of ``drawn`` elements so drawn."""

    n: int
    dtype: str
    distribution: str
    seed: int
    drawn: int = 0
    skip: int = 0

    def data(self, op: str) -> np.ndarray:
        """The input, bit for bit the same on every call (pairs for a pair operator); a new
        array each call, which the caller may write into."""
        try:
            key = (self, op)
            x = _DRAWN.get(key)
        except TypeError:  # an operator object that is no dictionary key: drawn each time
            return self._draw(op)
        if x is None:
            x = self._draw(op)
            _DRAWN.put(key, x)
        return x

    @property
    def _extent(self) -> int:
        """How many elements its input is taken from."""
        return max(self.drawn, self.skip + self.n)

    def _draw(self, op: str) -> np.ndarray:
        rng = np.random.default_rng(self.seed)
        oper = get_operator(op)
        m = self._extent
        if oper.elements == "flagged":
            x = generate_flagged(rng, m, self.dtype, self.distribution)
        elif oper.width == 2:
            x = generate_pairs(rng, m, self.dtype, distribution=self.distribution)
        else:
            x = generate_data(rng, m, self.dtype, self.distribution)
        return x if m == self.n else x[self.skip:self.skip + self.n].copy()

    def with_n(self, n: int) -> Case:
        """The case at ``n`` elements: drawn at n, or a cut or dropped case's n elements of
        its draw from its ``skip`` on."""
        return replace(self, n=n)

    def anew(self, n: int, distribution: str | None = None) -> Case:
        """The case drawn at ``n`` elements from another seed (one its own and ``n`` decide):
        other data of its distribution (or of ``distribution``), where :meth:`with_n` keeps
        its draw's first values."""
        return replace(self, n=n, seed=(self.seed * 1_000_003 + n) % 2**32, drawn=0, skip=0,
                       distribution=distribution or self.distribution)

    def cut(self, n: int) -> Case:
        """The first ``n`` elements of this case's input (for a forward 1-D scan, outputs
        0 .. n-1 are a function of them alone)."""
        return replace(self, n=n, drawn=self._extent)

    def dropped(self, m: int) -> Case:
        """This case's input without its first ``m`` elements: its tail, which a bug of the
        last partial tile reads, kept as it is (a case drawn at n - m places it anew)."""
        return replace(self, n=self.n - m, skip=self.skip + m, drawn=self._extent)

    def describe(self) -> dict[str, Any]:
        told = {"n": self.n, "dtype": self.dtype, "data": self.distribution, "seed": self.seed}
        if self.drawn > self.skip + self.n or self.skip:
            told["drawn"] = self.drawn
        return {**told, "skip": self.skip} if self.skip else told


#: The inputs of the cases drawn last in this process, kept to be copied, not drawn again:
#: each property of a check walks a ladder of the same rungs, shrinking a failure draws the
#: same edges again, a failure is drawn again to be told, and a session of checks (the
#: negative controls, the tests) meets the same cases over and over.  A copy costs a
#: fraction of the draw (``wide`` data are an exp2 and two draws per element).
_DRAWN = KeptArrays(64 * 2**20)


#: Tile multiples m * 2**j drawn within a scale 2**k have at most 2**(TILES_LOG2 + 1) - 1
#: tiles: j >= k - TILES_LOG2.
TILES_LOG2 = 6


@st.composite
def scaled_sizes(draw: st.DrawFn, max_n: int, scales: tuple[int, ...] | None = None) -> int:
    """n in [1, max_n]: a scale k with 2**k <= max_n first (from ``scales``, where a scale
    may repeat to be drawn more often; else every scale alike), then, within [2**k,
    2**(k+1)): a tile edge 2**k + d, a multiple m * 2**j of a smaller power-of-two tile
    (at most 127 tiles) + d, with d in [-2, 2], a size m * 2**j + r of a block 2**j of
    :data:`BLOCKS_LOG2` and any residue r, or any n.  Shrinks toward small scales and toward
    the edge, and a size of a block and residue toward fewer blocks of the same residue."""
    k = draw(st.sampled_from(scales) if scales else st.integers(0, max_n.bit_length() - 1))
    where = draw(st.integers(0, 3))
    lo = 1 << k
    if where == 0:  # the edge of a tile, block or level of 2**k, and its neighbours
        n = lo + draw(st.integers(-2, 2))
    elif where == 1 and k > 0:  # m tiles of 2**j, and their neighbours
        i = draw(st.integers(1, min(k, TILES_LOG2)))
        n = (draw(st.integers(1 << i, (2 << i) - 1)) << (k - i)) + draw(st.integers(-2, 2))
    elif where == 2 and k >= BLOCKS_LOG2[0]:  # m blocks of 2**j and a residue
        j = draw(st.integers(BLOCKS_LOG2[0], min(k, BLOCKS_LOG2[1])))
        n = (draw(st.integers(lo >> j, (2 * lo >> j) - 1)) << j) + draw(
            st.integers(0, (1 << j) - 1))
    else:
        n = lo + draw(st.integers(0, lo - 1))
    return min(max(n, 1), max_n)


def cases(dtypes: tuple[str, ...], distributions: tuple[str, ...], max_n: int,
          scales: tuple[int, ...] | None = None) -> st.SearchStrategy[Case]:
    """Cases of any declared dtype and distribution at :func:`scaled_sizes`."""
    return st.builds(Case, scaled_sizes(max_n, scales), st.sampled_from(dtypes),
                     st.sampled_from(distributions), st.integers(0, 2**32 - 1))


#: The most times a cheap scale is drawn for each draw of the costliest one.
SCALE_WEIGHT_CAP = 64
#: Seconds Hypothesis spends on each example it draws, beside the check (0.5 to 1 ms on this
#: project's CPU machine, whatever the case's size).
DRAW_SECONDS = 1e-3
#: Seconds of companion cases run for each example drawn at a scale where cases cost less:
#: three times Hypothesis's own, so that it takes a quarter of the time of cheap scales, not
#: half or more.
COMPANION_SECONDS = 3e-3
#: The most companion cases run for one example drawn.
MAX_COMPANIONS = 31


@dataclass(frozen=True)
class TimeShare:
    """How a search shares its time among the scales: the scales to draw from (a scale
    repeated to be drawn more often), and at each scale how many companion cases to run
    for every example Hypothesis draws there."""

    scales: tuple[int, ...]
    companions: tuple[int, ...]


def share_time(timings: list[tuple[int, float]], max_n: int) -> TimeShare:
    """A cost a + b*n per case fit to ``timings`` ((n, seconds) of cases run), and from it:
    at each scale, as many companions as fit in :data:`COMPANION_SECONDS` (at most
    :data:`MAX_COMPANIONS`), and the scale repeated about as many times as an example there
    (its cases and Hypothesis's time) is cheaper than one at ``max_n`` (at most
    :data:`SCALE_WEIGHT_CAP`).  Each scale then gets about the same share of the search's
    time, so that a cheap one is searched by thousands of cases where an even draw of
    examples would give it tens."""
    top = max_n.bit_length() - 1
    runs = [(n, t) for n, t in timings if n > 0]
    if not runs:
        return TimeShare(tuple(range(top + 1)), (0,) * (top + 1))
    small = sorted(t for n, t in runs if n <= 64) or [min(t for _, t in runs)]
    a = max(small[len(small) // 2], 1e-6)  # the cost of a call, whatever its size
    # ... and of each element, where elements dominate; medians, as a first call that
    # compiles (numba, CUDA) costs many times the calls after it.
    per = sorted(max(t - a, 0.0) / n for n, t in runs if n >= 4096)
    b = per[len(per) // 2] if per else 0.0
    cost = [a + b * 1.5 * (1 << k) for k in range(top + 1)]  # the middle of each scale
    extra = [min(MAX_COMPANIONS, int(COMPANION_SECONDS / c)) for c in cost]
    example = [DRAW_SECONDS + (1 + e) * c for c, e in zip(cost, extra)]
    scales = tuple(k for k in range(top + 1)
                   for _ in range(max(1, min(SCALE_WEIGHT_CAP, round(example[top] / example[k])))))
    return TimeShare(scales, tuple(extra))


class Sweep:
    """Cases that spread over the residues of every scale [2**k, 2**(k+1)) from 2**5 up to
    the largest n: the i-th size of scale k is 2**k + (start + i * step) mod 2**k, ``step``
    odd and near 0.618 * 2**k (a Weyl sequence), ``start`` drawn once per scale.  An odd
    step visits every residue modulo 2**j in any 2**j running sizes of a scale, for every
    j <= k, and spreads them over the scale: within 64 sizes of a scale each residue modulo
    32 and 64 comes once, whatever the seed, where sizes drawn at random leave a residue
    unmet in 64 draws more than a third of the time.  The scales are swept in rounds: each
    to 64 sizes, the cheapest first, then each to 128, and so on; a bug of one residue
    modulo 64 past some size is met once the round reaches the first scale past it."""

    def __init__(self, seed: int, max_n: int, dtypes: tuple[str, ...],
                 distributions: tuple[str, ...]) -> None:
        self._rng = np.random.default_rng([seed, 0x5EE9])
        self._max_n = max_n
        self._kinds = [(dt, dist) for dist in distributions for dt in dtypes]
        top = max_n.bit_length() - 1
        #: Per scale swept: (start, sizes given, seconds of its last case).
        self._scales = {k: (int(self._rng.integers(0, 1 << k)), 0, 0.0)
                        for k in range(min(BLOCKS_LOG2[0], top), top + 1)}

    def case(self) -> Case:
        """The next case of the cheapest scale (by its last case's seconds, the ladder's
        rung before any of its own) among those with the fewest rounds of sizes given; a
        scale that has given each of its sizes twice gives no more."""
        open_ = [k for k, v in self._scales.items() if v[1] < 2 << k] or list(self._scales)
        k = min(open_, key=lambda s: ((self._scales[s][1] // ROUND).bit_length(),
                                      self._scales[s][2], s))
        start, i, last = self._scales[k]
        self._scales[k] = (start, i + 1, last)
        lo = 1 << k
        n = lo + (start + i * (int(0.6180339887 * lo) | 1)) % lo
        dt, dist = self._kinds[int(self._rng.integers(len(self._kinds)))]
        return Case(min(n, self._max_n), dt, dist, int(self._rng.integers(0, 2**32)))

    def took(self, n: int, seconds: float) -> None:
        """A case of ``n`` elements took ``seconds``: what its scale's next case costs."""
        k = max(n, 1).bit_length() - 1
        if k in self._scales:
            start, i, _ = self._scales[k]
            self._scales[k] = (start, i, seconds)


#: The sizes each scale gives in the first round of a sweep, twice that in the second...:
#: every residue modulo 64 (blocks of 64 or less), the band of 1/64 of the sizes.
ROUND = 64
#: The seconds the sweep's cases take, as a fraction of the seconds of the examples
#: Hypothesis draws and their companions: the draws cover data and the edges, the sweep
#: the residues of every scale.
SWEEP_SHARE = 3.0


def companions(case: Case, count: int, dtypes: tuple[str, ...], distributions: tuple[str, ...],
               max_n: int) -> list[Case]:
    """``count`` more cases at ``case``'s scale, each drawn as :func:`scaled_sizes` draws
    within a scale (an edge, a tile multiple, or any n) from ``case``'s seed: the same
    example always brings the same companions."""
    if count < 1:
        return []
    rng = np.random.default_rng([case.seed, case.n])
    k = max(case.n, 1).bit_length() - 1
    lo = 1 << k
    out = []
    for _ in range(count):
        where = int(rng.integers(0, 4))
        if where == 0:
            n = lo + int(rng.integers(-2, 3))
        elif where == 1 and k > 0:
            i = int(rng.integers(1, min(k, TILES_LOG2) + 1))
            n = (int(rng.integers(1 << i, 2 << i)) << (k - i)) + int(rng.integers(-2, 3))
        else:
            n = lo + int(rng.integers(0, lo))
        out.append(Case(min(max(n, 1), max_n), dtypes[int(rng.integers(len(dtypes)))],
                        distributions[int(rng.integers(len(distributions)))],
                        int(rng.integers(0, 2**32))))
    return out


def ladder(dtypes: tuple[str, ...], distributions: tuple[str, ...], max_n: int,
           empty: bool) -> list[Case]:
    """Every dtype-distribution pair once at a small size (n = 0 second where ``empty``), so
    that a bug only some data show is met at once; then one tile edge per scale up to
    ``max_n`` and ``max_n`` itself, cycling through the pairs as the scale grows."""
    pairs = [(dt, dist) for dist in distributions for dt in dtypes]
    out = [Case(min(max((1 << (i % 5)) + i % 3 - 1, 1), max_n), dt, dist, i)
           for i, (dt, dist) in enumerate(pairs)]
    if empty:
        # Not first: a target's first call in a process may be its only wrong one (a
        # warm-up that returns before it has computed), and an empty output shows nothing.
        out.insert(1, Case(0, dtypes[0], distributions[0], 0))
    nd = len(dtypes)
    for k in range(max_n.bit_length()):
        n = min(max((1 << k) + k % 3 - 1, 1), max_n)
        out.append(Case(n, dtypes[k % nd], distributions[(k // nd) % len(distributions)], k))
    if out[-1].n != max_n:
        out.append(Case(max_n, dtypes[0], distributions[0], max_n))
    return out


#: The blocks 2**j, j from 1 to this, along whose sizes of one residue a failure is taken
#: down (a bug of one residue past some size: n - t * 2**j fails as n does).
DESCENT_LOG2 = 12


