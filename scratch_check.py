import subprocess, sys, os, runpy
from scancheck.targets import builtin_targets
from scancheck.kernels import VARIANTS
part = sys.argv[1]
if part == "repro":
    runpy.run_path("docs/findings/cupy_cumsum_1d_axis0_past_2_31.py"); sys.exit()
ts = builtin_targets()
kernels = [n for n in ts if n.startswith("scancheck:")]
kernels += [f"kernel:{name}:256:recurrence" for name, var in VARIANTS.items()
            if var.capacity is None and "recurrence" in var.operators]
kernels += ["kernel:decoupled_lookback:256:mul", "kernel:decoupled_lookback:256:logaddexp"]
libs_gpu = [n for n, t in ts.items() if t.spec.device == "gpu" and not n.startswith("scancheck:")]
cpu = [n for n, t in ts.items() if t.spec.device == "cpu" and not n.startswith(("model:", "scancheck:"))]
targets = {"kernels": kernels, "gpu-libs": libs_gpu, "cpu-libs": cpu}[part]
out = os.environ["OUT"]
r = subprocess.run([sys.executable, "-m", "scancheck.cli", "check", *targets, "--jobs", "8",
                    "--json", f"{out}/conformance-{part}.json"], capture_output=True, text=True)
open(f"{out}/conformance-{part}.log", "w").write(r.stdout + r.stderr)
text = r.stdout
print(text[text.rfind("summary"):] if "summary" in text else text[-3000:])
print("exit", r.returncode)
