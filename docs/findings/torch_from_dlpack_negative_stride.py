"""torch.from_dlpack of a CuPy array with a negative stride, in plain CuPy and torch.

Run in a child process: the call ends the process (SIGABRT) rather than raising.  Prints
CuPy's strides, the child's exit status and the error torch printed.
"""

import subprocess
import sys

CHILD = """
import cupy as cp, torch
print("cupy", cp.__version__, "torch", torch.__version__, flush=True)
a = cp.arange(12, dtype=cp.float32).reshape(3, 4)[:, ::-1]
print("cupy shape", a.shape, "strides (bytes)", a.strides, flush=True)
t = torch.from_dlpack(a)
print("torch strides", t.stride(), flush=True)
"""

r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True)
print(r.stdout, end="")
print("exit status", r.returncode)
print("\n".join(ln for ln in r.stderr.splitlines() if "what()" in ln or "Error" in ln[:40]))
version = r.stdout.split()[3] if r.stdout.startswith("cupy") else "?"
print("still reproduces" if r.returncode < 0 else f"fixed in {version}")
