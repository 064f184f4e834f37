"""A user's operator, checked by scancheck: the linear recurrence of state-space models,
h[t] = a[t] * h[t-1] + b[t], scanned in parallel as pairs (a, b).

``scancheck check examples.linear_recurrence:chunked_scan`` checks it: the operator's laws
first, then the scan, each float output within the spread of association orders around
the exact answer (the combine is built from * and +, so scancheck computes that answer in
rational arithmetic and rounds it once).  ``examples.linear_recurrence:generic_scan`` takes
the combine as jax.lax.associative_scan does, and is checked under scancheck's probe
monoids (``scancheck check examples.linear_recurrence:generic_scan``).
"""

from __future__ import annotations

import numpy as np

from scancheck import Monoid, TargetSpec


def combine(earlier, later):
    """(a1, b1) then (a2, b2): h -> a2 * (a1 * h + b1) + b2."""
    a1, b1 = earlier
    a2, b2 = later
    return (a2 * a1, a2 * b1 + b2)


def _gates(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    # Decay gates in (0, 1), as a state-space model's discretised A: the domain it scans.
    return (rng.uniform(0.5, 1.0, shape).astype(np.float32),
            rng.normal(0, 1, shape).astype(np.float32))


LINEAR = Monoid(combine, (np.float32(1), np.float32(0)), name="linear recurrence",
                elements=_gates)


def chunked_scan(elems, chunk: int = 16):
    """Each chunk scanned on its own, the chunks' totals scanned, each carried into the next
    chunk: the shape of a GPU kernel's tiles."""
    a, b = (np.asarray(v) for v in elems)
    n = a.shape[0]
    out_a, out_b = a.copy(), b.copy()
    for lo in range(0, n, chunk):
        for k in range(lo + 1, min(lo + chunk, n)):
            out_a[k], out_b[k] = combine((out_a[k - 1], out_b[k - 1]), (a[k], b[k]))
    for lo in range(chunk, n, chunk):
        carry = (out_a[lo - 1], out_b[lo - 1])
        hi = min(lo + chunk, n)
        out_a[lo:hi], out_b[lo:hi] = combine(carry, (out_a[lo:hi], out_b[lo:hi]))
    return out_a, out_b


chunked_scan.scan_spec = TargetSpec(op="examples.linear_recurrence:LINEAR")


def generic_scan(elems, combine, chunk: int = 16):
    """The same chunked scan for any combine (a, b earlier and later tuples of arrays)."""
    x = tuple(np.array(v) for v in elems)
    n = x[0].shape[0]
    for lo in range(0, n, chunk):
        for k in range(lo + 1, min(lo + chunk, n)):
            step = combine(tuple(v[k - 1:k] for v in x), tuple(v[k:k + 1] for v in x))
            for v, s in zip(x, step):
                v[k] = s[0]
    for lo in range(chunk, n, chunk):
        hi = min(lo + chunk, n)
        carry = tuple(np.repeat(v[lo - 1:lo], hi - lo, axis=0) for v in x)
        step = combine(carry, tuple(v[lo:hi] for v in x))
        for v, s in zip(x, step):
            v[lo:hi] = s
    return x


generic_scan.scan_spec = TargetSpec(combine=True)
