import runpy, time
runpy.run_path("docs/findings/cupy_cumsum_1d_axis0_past_2_31.py")
from scancheck.controls import CONTROLS
t0 = time.time()
c = next(c for c in CONTROLS if c.name.startswith("row offsets"))
rep, ok = c.check()
print("control", c.name, "caught" if ok else "NOT caught", rep.verdict.line, f"{time.time()-t0:.0f}s")
for r in rep.results: print("  ", r.name, r.status, r.diagnosis[:160])
