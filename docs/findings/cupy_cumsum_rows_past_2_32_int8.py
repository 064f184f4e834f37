"""cupy.cumsum along the rows of an int8 batch of 2**32 + 17 elements, called without dtype=
(CuPy then returns int64, NumPy's promotion), in plain CuPy.

Shape (1431655771, 3), C order, random integers in [-4, 4]: every running sum is exact,
so each output must equal the running sum of its row, checked a column at a time (no scan
involved).  The same with 2**31 - 2 elements for comparison.  Needs about 60 GiB of
device memory.
"""

import cupy as cp

print("cupy", cp.__version__, cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
for rows in (715_827_882, 1_431_655_771):
    x = cp.random.RandomState(0).randint(-4, 5, size=(rows, 3), dtype=cp.int8)
    out = cp.cumsum(x, axis=1)
    bad = cp.zeros(rows, dtype=bool)
    running = cp.zeros(rows, dtype=cp.int64)
    for k in range(3):
        running += x[:, k]
        bad |= out[:, k] != running
    wrong = int(bad.sum())
    line = f"cumsum {x.dtype} -> {out.dtype}, {rows * 3:,} elements: {wrong:,} of {rows:,} rows wrong"
    if wrong:
        first = int(cp.argmax(bad))
        line += f"; first: row {first:,}, x = {x[first].tolist()}, cumsum = {out[first].tolist()}"
    print(line, flush=True)
    del x, out, bad, running
    cp.get_default_memory_pool().free_all_blocks()
