"""The oracles Numba compiles -- the exact sums, the recurrence's bounds, the judges of
products and log-sum-exp -- called once ahead, so that their cache on disk holds them.

Every process that checks a scan compiles each on its first call where the cache is empty (a
fresh checkout: 4-5 CPU-s for the exact sums alone), and the test suite's workers, their
zygotes and the GPU suite's warm step would each do so side by side.
"""

from __future__ import annotations

import numpy as np

#: Shares of the work for processes side by side: the exact sums (the longest), the rest.
SHARES = 2
#: Set where every share is compiled into the cache already: a pytest controller that sees it
#: starts no process to compile them (a warm cache still costs each a second's imports).
COMPILED_ENV = "SCANCHECK_ORACLES_COMPILED"


def share_code(share: int) -> str:
    """Python source that compiles ``share`` in a process of its own (``python -c``)."""
    return f"from scancheck.oracle.compiled import compile_oracles; compile_oracles({share})"


def compile_oracles(share: int | None = None) -> None:
    """Call each Numba oracle of ``share`` (all where None) once at every float dtype it
    compiles for that this machine has (bfloat16 needs ml_dtypes)."""
    from ..core.arrays import as_dtype
    from ..core.dtypes import FLOAT_DTYPES

    samples = []  # 70 values at each float dtype
    for name in FLOAT_DTYPES:
        try:
            samples.append(np.linspace(-3, 3, 70).astype(as_dtype(name)))
        except ImportError:
            continue
    if share in (None, 0):
        from .exact import exact_scan, exact_scan_axis

        for x in samples:
            exact_scan(x)
            exact_scan_axis(x.reshape(7, 10))
    if share in (None, 1):
        from .exact import recurrence_enclosure, recurrence_magnitudes
        from .logsumexp import judge_logsumexp
        from .products import judge_products

        pairs = np.random.default_rng(0).uniform(-0.9, 0.9, (70, 2))
        recurrence_enclosure(pairs)
        recurrence_magnitudes(pairs)
        with np.errstate(all="ignore"):
            for x in samples:
                judge_products(x, np.cumprod(x))
                judge_logsumexp(x, np.logaddexp.accumulate(x))
