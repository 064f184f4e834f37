"""cupy.cumsum and cupy.cumprod along the rows of a float32 batch of about 2**32 elements,
in plain CuPy.

A batch of R rows of 3 (shape (R, 3), C order) of random integers in [-4, 4] (cumsum) or
of +-1 and +-2 (cumprod): every result is exact, so each output must equal the running
sum or product of its row, checked a column at a time (no scan involved).  Prints, for
totals below and past 2**31 and 2**32, how many rows come back wrong and the first of
them.  Needs about 40 GiB of device memory.
"""

import cupy as cp

print("cupy", cp.__version__, cp.cuda.runtime.getDeviceProperties(0)["name"].decode())

def wrong_rows(name, rows, values):
    rs = cp.random.RandomState(0)
    x = values[rs.randint(0, values.size, size=(rows, 3), dtype=cp.int8)]
    out = getattr(cp, name)(x, axis=1)
    combine = cp.add if name == "cumsum" else cp.multiply
    bad = cp.zeros(rows, dtype=bool)
    running = x[:, 0].copy()
    for k in range(3):
        if k:
            running = combine(running, x[:, k])
        bad |= out[:, k] != running
    wrong = int(bad.sum())
    line = f"{name} {rows * 3:>13,} elements: {wrong:,} of {rows:,} rows wrong"
    if wrong:
        first = int(cp.argmax(bad))
        line += f"; first: row {first:,}, x = {x[first].tolist()}, {name} = {out[first].tolist()}"
    print(line, flush=True)
    del x, out, bad, running
    cp.get_default_memory_pool().free_all_blocks()
    return wrong


sums = cp.arange(-4, 5, dtype=cp.float32)
wrong = 0
for rows in (715_827_882, 715_827_883, 1_431_655_765, 1_431_655_766, 1_431_655_771):
    wrong += wrong_rows("cumsum", rows, sums)
wrong += wrong_rows("cumprod", 1_431_655_766, cp.asarray([1, -1, 2, -2], dtype=cp.float32))
print("still reproduces" if wrong else f"fixed in {cp.__version__}")
