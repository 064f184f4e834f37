"""torch.cummax and torch.cummin along dim 1 of an int32 CUDA tensor of 1,431,655,771 rows of 3
(4,294,967,313 elements, past 2**32; values in [-4, 4]), in plain torch
(pytorch/pytorch#167086: 32-bit offsets in the CUDA scans with indices).  Each call runs in a
child process (a fault ends it) and is compared, in chunks, with the running max or min of
each row; prints the exit status and what the child printed last, then "still reproduces"
or "fixed in <torch version>".  Needs about 70 GB of GPU memory."""

import subprocess
import sys

CHILD = """
import sys, torch
op = sys.argv[1]
rows = 1431655771
g = torch.Generator(device="cuda").manual_seed(0)
x = torch.randint(-4, 5, (rows, 3), dtype=torch.int32, device="cuda", generator=g)
values, indices = getattr(torch, op)(x, 1)
torch.cuda.synchronize()
best = torch.maximum if op == "cummax" else torch.minimum
wrong = 0
for s in range(0, rows, 1 << 27):
    rows_here = slice(s, s + (1 << 27))
    xs, vs, ix = x[rows_here], values[rows_here], indices[rows_here]
    want = torch.stack([xs[:, 0], best(xs[:, 0], xs[:, 1]),
                        best(best(xs[:, 0], xs[:, 1]), xs[:, 2])], 1)
    picked = torch.gather(xs, 1, ix.clamp(0, 2))
    bad = (vs != want).any(1) | ~((ix >= 0) & (ix <= torch.arange(3, device="cuda"))).all(1)
    bad |= ~(picked == vs).all(1)
    wrong += int(bad.sum())
print(f"{op}: {wrong:,} of {rows:,} rows wrong", flush=True)
"""

version = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                         capture_output=True, text=True).stdout.strip()
print("torch", version)
failed = False
for op in ("cummax", "cummin"):
    r = subprocess.run([sys.executable, "-c", CHILD, op], capture_output=True, text=True)
    err = [ln for ln in r.stderr.splitlines() if ln.strip() and "Warning" not in ln]
    print(f"{op}: exit status {r.returncode}; {r.stdout.strip()}")
    print("\n".join(f"    {ln[:200]}" for ln in err[-3:]))
    failed |= r.returncode != 0 or " 0 of " not in r.stdout
print("still reproduces" if failed else f"fixed in {version}")
