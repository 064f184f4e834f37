"""cupy.cumsum along the rows of a float32 batch of more than 2**32 elements, in plain CuPy.

A batch of R rows of 3 (shape (R, 3), C order) of random integers in [-4, 4]: every sum
is exact, so each output must equal the running sum of its row, checked a column at a
time (no scan involved).  Prints, for totals below and past 2**31 and 2**32, how many
rows come back wrong and the first of them.  Needs about 40 GiB of device memory.
"""

import cupy as cp

print("cupy", cp.__version__, cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
for rows in (715_827_882, 715_827_883, 1_431_655_765, 1_431_655_766, 1_431_655_771):
    rs = cp.random.RandomState(0)
    x = rs.randint(-4, 5, size=(rows, 3), dtype=cp.int8).astype(cp.float32)
    out = cp.cumsum(x, axis=1)
    bad = cp.zeros(rows, dtype=bool)
    running = cp.zeros(rows, dtype=cp.float32)
    for k in range(3):
        running += x[:, k]
        bad |= out[:, k] != running
    wrong = int(bad.sum())
    first = int(cp.argmax(bad)) if wrong else None
    line = f"{rows * 3:>13,} elements: {wrong:,} of {rows:,} rows wrong"
    if wrong:
        line += (f"; first: row {first:,}, x = {x[first].tolist()}, "
                 f"cumsum = {out[first].tolist()}")
    print(line, flush=True)
    del x, out, bad, running
    cp.get_default_memory_pool().free_all_blocks()
