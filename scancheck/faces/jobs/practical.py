"""Seed 004's practical, bit for bit: its data, its CPU reference, its RMS, and its two figures.

The practical filled its input with ``floorf(1000 * (rand() / (float)RAND_MAX))`` (glibc
``rand``, never seeded: seed 1), scanned it *exclusively* on the GPU and on the CPU
(``scan_gold``, a sequential float loop), and printed ``sqrt(err / n)`` with ``err`` the
float sum of squared differences.  It reported an RMS of about 2.1e6 for 10^6 elements and
blamed float rounding, and about 755 for a warp-shuffle scan of 512.  This module rebuilds
all of it in NumPy so that :func:`judge` can put the figures beside correct scans' and
:func:`~scancheck.explain.explain`'s verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...controls.sums import multi_block_scan, scan_gold
from ...core.operators import exclusive_of

RAND_MAX = 2**31 - 1
#: The practical's two reported figures: (elements, RMS against scan_gold, which scan).
SEED_FIGURES = ((1_000_000, 2.1e6, "three-kernel multi-block scan"),
                (512, 755.0, "warp-shuffle scan"))
BLOCKS = (128, 256, 512, 1024)


#: seed -> the longest run of rand() outputs computed for it so far (read-only), for the few
#: seeds last asked for: the generator is a Python loop (0.2 s a million), and a report asks
#: for the same million inputs three times.
_OUTPUTS: dict[int, np.ndarray] = {}
_SEEDS_KEPT = 4


def glibc_rand(count: int, seed: int = 1) -> np.ndarray:
    """The first ``count`` values of glibc's ``rand()`` after ``srand(seed)`` (the TYPE_3
    additive feedback generator, r[i] = r[i-3] + r[i-31] mod 2**32, output r >> 1)."""
    if count < 0:
        raise ValueError(f"count={count} must be non-negative")
    have = _OUTPUTS.pop(seed, None)
    if have is None or have.size < count:
        have = _glibc_rand(count, seed)
        have.flags.writeable = False
    _OUTPUTS[seed] = have  # the latest last
    while len(_OUTPUTS) > _SEEDS_KEPT:
        del _OUTPUTS[next(iter(_OUTPUTS))]
    return have[:count].copy()


def _glibc_rand(count: int, seed: int) -> np.ndarray:
    """:func:`glibc_rand`, computed."""
    r = [seed % 2**32 or 1]
    for _ in range(30):
        # 16807 * r mod (2**31 - 1) on the signed value glibc keeps (Schrage's method there).
        r.append((16807 * (r[-1] if r[-1] < 2**31 else r[-1] - 2**32)) % RAND_MAX)
    r += r[:3]  # r[31..33] = r[0..2]
    total = 344 + count  # glibc discards the first 310 outputs
    r += [0] * (total - len(r))
    for i in range(34, total):
        r[i] = (r[i - 31] + r[i - 3]) & 0xFFFFFFFF
    return np.array(r[344:], dtype=np.uint32) >> 1


def practical_input(n: int, seed: int = 1) -> np.ndarray:
    """The practical's ``n`` inputs: ``floorf(1000 * (rand() / (float)RAND_MAX))`` in float32
    arithmetic, as the C source evaluates it (rand() and RAND_MAX each rounded to float)."""
    if n < 1:
        raise ValueError(f"n={n} must be at least 1")
    q = glibc_rand(n, seed).astype(np.float32) / np.float32(RAND_MAX)
    return np.floor(np.float32(1000) * q).astype(np.float32)


def practical_rms(got: np.ndarray, reference: np.ndarray) -> float:
    """``sqrt(err / n)`` as the practical computes it: squares of float differences summed
    in a float, one after another, divided by n in float, square root in double."""
    d = got.astype(np.float32) - reference.astype(np.float32)
    err = np.add.accumulate(d * d, dtype=np.float32)[-1] if d.size else np.float32(0)
    return float(np.sqrt(np.float64(err / np.float32(d.size))))


# -- the scans the figures are compared with ----------------------------------------------


def warp_shuffle_hypotheses(x: np.ndarray) -> dict[str, np.ndarray]:
    """Exclusive outputs of a one-block warp-shuffle scan (warps of 32) with one classic
    mistake each, for the 755 at n = 512 (``x`` a whole number of warps)."""
    w = x.reshape(-1, 32)
    with np.errstate(over="ignore"):
        incl = np.add.accumulate(w, axis=1, dtype=x.dtype)
        sums = incl[:, -1]
        offsets = scan_gold(sums)
        right_incl = (incl + offsets[:, None]).ravel()
        # __shfl_up_sync returns the lane's own value where lane < delta: without the
        # `if (lane >= delta)` guard those lanes add themselves.
        unguarded = w.copy()
        for delta in (1, 2, 4, 8, 16):
            up = np.concatenate([unguarded[:, :delta], unguarded[:, :-delta]], axis=1)
            unguarded = unguarded + up
        unguarded_incl = (unguarded + scan_gold(unguarded[:, -1])[:, None]).ravel()
        no_warp_offsets = incl.ravel()
        warp_totals_exclusive = (incl + scan_gold(sums - w[:, -1])[:, None]).ravel()
    shift = x.dtype.type(0)
    return {
        "inclusive result compared as exclusive": right_incl,
        "no `lane >= delta` guard on __shfl_up_sync": exclusive_of(unguarded_incl, shift),
        "warp totals never added (no inter-warp pass)": exclusive_of(no_warp_offsets, shift),
        "warp totals taken from the exclusive value": exclusive_of(warp_totals_exclusive, shift),
        "inclusive scan shifted by one element too many": exclusive_of(
            exclusive_of(right_incl, shift), shift),
    }


#: How close a bug's RMS must come to a reported figure to count as reproducing it (the
#: figures were reported as "~2.1e6" and "~755").
MATCH = 0.10


@dataclass
class Judged:
    """One scan of the practical's data: its RMS against scan_gold and explain's verdict."""

    name: str
    n: int
    rms_vs_gold: float
    verdict: str
    headline: str


def judge(n: int, scans: dict[str, np.ndarray]) -> list[Judged]:
    """Each scan's output on the practical's first ``n`` inputs: its RMS against scan_gold
    (the practical's formula) and :func:`~scancheck.explain.explain`'s verdict."""
    from ...oracle.explain import explain

    x = practical_input(n)
    gold = scan_gold(x)
    out = []
    for name, got in scans.items():
        e = explain(x, got, inclusive=False)
        out.append(Judged(name, n, practical_rms(got, gold), e.verdict, e.headline))
    return out


def judge_figure(n: int, rms_vs_gold: float) -> tuple[str, str]:
    """What a reported RMS against scan_gold proves by itself: (verdict, reason).

    The RMS is a norm, so the result's RMS error against the exact scan is at least the
    figure minus scan_gold's own; where every output is certified a correct scan's error
    is 0, and an RMS error above the RMS of the per-output any-order bounds puts some output
    beyond its bound.  Otherwise the figure is measured against real orders' rounding.
    """
    from ...oracle.bounds import certified, classify, sequential_depths
    from ...oracle.exact import exact_scan
    from ...oracle.explain import PROVEN, ROUNDING, SUSPICIOUS, SUSPICIOUS_FACTOR, explain

    x = practical_input(n)
    want = exact_scan(x, inclusive=False)
    gold = scan_gold(x)
    gold_rms = float(np.sqrt(np.mean((gold.astype(np.float64) - want) ** 2)))
    least = rms_vs_gold - gold_rms
    if least <= 0:
        return ROUNDING, (f"scan_gold's own RMS error is {gold_rms:.4g}: a figure this small "
                          f"is explained by the reference alone")
    where = certified(x, inclusive=False)
    if where.all():
        return PROVEN, (f"all {n:,} outputs are certified exact (the largest prefix, "
                        f"{want.max():,.0f}, is below 2**24 and every input an integer), so a "
                        f"correct scan's RMS against scan_gold is exactly 0, not {rms_vs_gold:g}")
    bound = classify(x, gold, sequential_depths(n, False), inclusive=False, exact=want).bound
    bound_rms = float(np.sqrt(np.mean(bound**2)))
    if least > bound_rms:
        return PROVEN, (f"an RMS error of at least {least:.4g} exceeds the RMS {bound_rms:.4g} "
                        f"of the any-order bounds, so some output is beyond its bound")
    roughest = max(o["rms"] for o in explain(x, gold, inclusive=False).orders.values())
    verdict = SUSPICIOUS if least > SUSPICIOUS_FACTOR * roughest else ROUNDING
    return verdict, (f"its RMS error against the exact scan is at least {least:.4g} "
                     f"(the figure less scan_gold's own {gold_rms:.4g}): {least / roughest:.0f}x "
                     f"the roughest real order tried (sequential, RMS {roughest:.4g}), though "
                     f"inside the worst-case any-order bound (RMS {bound_rms:.4g}); the first "
                     f"{int(np.argmin(where)):,} outputs are certified, where a logic error "
                     f"would show in the output itself")


def report() -> str:
    """Seed 004's two figures judged: correct scans, the seed's figures, explain's verdicts,
    and the bugs that do (or do not) reproduce them; the text ``precision --practical`` prints."""
    from ..tables import format_table

    lines = ["Seed 004's practical, rebuilt bit for bit: inputs floorf(1000 * (rand() / "
             "(float)RAND_MAX)) from glibc rand() with seed 1, exclusive scans, scan_gold (a "
             "float32 sequential loop), rms = sqrt(err / n) with err summed in float."]
    for (n, figure, what), builders in zip(SEED_FIGURES, (_million, _warp)):
        x = practical_input(n)
        scans, bugs = builders(x)
        rows = judge(n, {**scans, **bugs})
        lines.append("")
        lines.append(format_table(
            [{"scan": r.name, "RMS vs scan_gold": r.rms_vs_gold, "explain": r.verdict}
             for r in rows], title=f"n = {n:,}: the seed's {what} reported RMS ~{figure:g}"))
        verdict, why = judge_figure(n, figure)
        lines.append(f"the seed's figure, {figure:g}: {verdict} -- {why}")
        found = [r for r in rows if r.name in bugs]
        best = min(found, key=lambda r: abs(r.rms_vs_gold / figure - 1))
        off = best.rms_vs_gold / figure - 1
        gap = f"{abs(off):.0%} {'above' if off > 0 else 'below'} the figure"
        if abs(off) <= MATCH:
            lines.append(f"reproduced by: {best.name} (RMS {best.rms_vs_gold:.4g}, {gap}); "
                         f"explain on its output: {best.verdict} -- {best.headline}")
        else:
            lines.append(f"no bug tried reproduces it: the closest, {best.name}, gives RMS "
                         f"{best.rms_vs_gold:.4g} ({gap}); the verdict above needs none")
    return "\n".join(lines)


def _million(x: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    correct = {f"correct three-kernel scan, blocks of {b}": multi_block_scan(x, b) for b in BLOCKS}
    bugs = {f"block totals from the exclusive scan, blocks of {b}":
            multi_block_scan(x, b, totals_from_exclusive=True) for b in BLOCKS}
    return correct, bugs


def _warp(x: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    return {"correct warp-shuffle scan": multi_block_scan(x, 32)}, warp_shuffle_hypotheses(x)
