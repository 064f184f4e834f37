"""cupy.cumsum of a 1-D float32 array of 2**31 + 17 elements (zeros, a one at the start and
at the end: the last prefix is 2, exact), whole (axis=None) and with axis=0, in plain
CuPy.  Each call runs in a child process (a fault may end it); prints the exit status,
the last output and the end of what the child printed on stderr."""

import subprocess
import sys

CHILD = """
import sys, cupy as cp
x = cp.zeros(2**31 + 17, dtype=cp.float32)
x[0] = x[-1] = 1
out = cp.cumsum(x, axis=None if sys.argv[1] == "None" else 0)
cp.cuda.Device().synchronize()
print("last output", out[-1].item(), "expected 2.0", flush=True)
"""

print("cupy", subprocess.run([sys.executable, "-c", "import cupy; print(cupy.__version__)"],
                             capture_output=True, text=True).stdout.strip())
failed = False
for axis in ("None", "0"):
    r = subprocess.run([sys.executable, "-c", CHILD, axis], capture_output=True, text=True)
    err = [ln for ln in r.stderr.splitlines() if ln.strip() and "Warning" not in ln]
    print(f"axis={axis}: exit status {r.returncode}; {r.stdout.strip()}")
    print("\n".join(f"    {ln[:200]}" for ln in err[-12:]))
    failed |= axis == "0" and (r.returncode != 0 or "last output 2.0" not in r.stdout)
version = subprocess.run([sys.executable, "-c", "import cupy; print(cupy.__version__)"],
                         capture_output=True, text=True).stdout.strip()
print("still reproduces" if failed else f"fixed in {version}")
