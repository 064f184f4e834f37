"""cupy.cumsum of a 1-D float32 array of 2**31 + 17 ones, whole (axis=None) and with axis=0,
in plain CuPy.  Each call runs in a child process (a fault may end it); prints the exit
status, the last output and the child's last error line."""

import subprocess
import sys

CHILD = """
import sys, cupy as cp
x = cp.ones(2**31 + 17, dtype=cp.float32)
out = cp.cumsum(x, axis=None if sys.argv[1] == "None" else 0)
cp.cuda.Device().synchronize()
print("last output", out[-1].item(), "expected", float(2**31 + 17), flush=True)
"""

print("cupy", subprocess.run([sys.executable, "-c", "import cupy; print(cupy.__version__)"],
                             capture_output=True, text=True).stdout.strip())
for axis in ("None", "0"):
    r = subprocess.run([sys.executable, "-c", CHILD, axis], capture_output=True, text=True)
    err = [ln for ln in r.stderr.splitlines() if ln.strip()]
    print(f"axis={axis}: exit status {r.returncode}; {r.stdout.strip()}"
          f"{'; ' + err[-1][:300] if err else ''}")
