"""Launch every variant once at a few sizes and compare with its model (a quick device check)."""

from __future__ import annotations

import sys
import time

import numpy as np


def main() -> int:
    from .kernels import VARIANTS, scan
    from .testing import same_bits

    bad = 0
    for name, var in VARIANTS.items():
        t0 = time.time()
        op = "add" if "add" in var.operators else var.operators[0]
        dtype = "int32" if "int32" in var.dtypes else var.dtypes[0]
        block = max(64, var.min_block)
        cap = var.capacity(block, var.resolve_params(None)) if var.capacity else 100_000
        msgs = []
        for n in sorted({1, 23, block - 1, cap}):
            shape = (n,) if op != "recurrence" else (n, 2)
            x = np.random.default_rng(n).integers(-5, 5, shape).astype(dtype)
            try:
                got = scan(x, name, op, block).get()
            except Exception as exc:  # report and carry on: this is a smoke run
                msgs.append(f"n={n}: {type(exc).__name__}: {str(exc)[:300]}")
                continue
            ok = same_bits(got, var.build_model(n, block).run(x, op)).all()
            if not ok and not var.racy:
                msgs.append(f"n={n}: differs from model")
        bad += bool(msgs)
        print(f"{name:24s} {'ok' if not msgs else 'FAIL'} {time.time() - t0:.1f}s {msgs}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
