#!/usr/bin/env bash
# Issue 34, round 2: the look-back's new schedules (1: persistent blocks with the next tile's
# loads in flight through the look-back; 2: the same with direct per-thread 16-byte loads,
# no staging; 3: persistent blocks, the next tile bulk-prefetched into L2) against the old
# table's choices, at the sizes that matter.  From the repo root on the
# device:
#     OUT=<dir> bash tools/tune_device2.sh
# Writes to $OUT:
#   device.txt      nvidia-smi -L, the commit
#   warm.txt        parallel compile of every module a candidate (or verify) needs
#   tune2.json      the sweep: float32 / int64 at 2^24..2^30, float64 at 2^20, 2^24..2^30;
#                   the old table's choices and every new-schedule candidate, with memcpy,
#                   torch and CUB measured beside them in the same process
#   tune2.txt       the sweep as a table (each launch's fraction of memcpy)
#   tuned.json      the checked-in table with the sweep's choices merged in (only the dtypes
#                   and sizes swept change): python -m scancheck.kernels.tune --from tune2.json
#   verify.txt      scancheck verify: every kernel vs its model, the look-back bit for bit at
#                   every candidate launch (old and new schedules)
#   pytest.txt      the look-back's GPU tests: each schedule run again on new data, exact
#   bench.txt/json  scancheck bench at the merged table (if time is left)
# Budget 150 s: every step runs under a timeout, so the sweep and verify always come back.
set -u
OUT=${OUT:-./sol2-tune-out}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
T0=$(date +%s)
# Seconds left until second $1 of the run, at least 1 (timeout 0 would mean no limit).
left() { local r=$(( $1 - ($(date +%s) - T0) )); [ "$r" -lt 1 ] && r=1; echo "$r"; }
PY=${PY:-python3}

nvidia-smi -L > "$OUT/device.txt" 2>&1
git log --oneline -1 >> "$OUT/device.txt" 2>&1

# 1. compile side by side into CuPy's kernel cache: the sweep's modules first (the look-back
#    at each candidate parameter set), then every other module verify needs.  In the
#    background: the sweep starts when it is done or at 75 s, the compiles going on.
$PY - > "$OUT/warm.txt" 2>&1 <<'EOF' &
import os, subprocess, sys, time
from scancheck.kernels.launch import warm_jobs
t0 = time.time()
code = "from scancheck.kernels.launch import warm; warm({!r}, {!r})"
jobs = sorted(warm_jobs(), key=lambda j: j[0] != "decoupled_lookback")
width = os.cpu_count() or 8
running, done = [], []
for job in jobs:
    while len(running) >= width:
        for r in running:
            if r[1].poll() is not None:
                running.remove(r); done.append(r); break
        else:
            time.sleep(0.05)
    running.append((job, subprocess.Popen([sys.executable, "-c", code.format(*job)],
                                          stderr=subprocess.PIPE, text=True)))
for job, proc in done + running:
    err = proc.communicate()[1]
    print(job, "rc", proc.returncode, err[-600:] if proc.returncode else "")
print(f"compiled {len(jobs)} modules in {time.time() - t0:.0f} s", flush=True)
EOF
WARM=$!
while kill -0 "$WARM" 2>/dev/null && [ "$(left 75)" -gt 1 ]; do sleep 1; done
echo "sweep starts at $(( $(date +%s) - T0 )) s (warm still running: $(kill -0 "$WARM" 2>/dev/null && echo yes || echo no))" \
    | tee "$OUT/warm-mark.txt"

# 2. the sweep: the old table's choices at these sizes and every new-schedule candidate.
timeout $(left 115) $PY - "$OUT/tune2.json" > "$OUT/tune2.txt" 2>&1 <<'EOF'
import json, sys, time
import cupy as cp
from scancheck import bench
from scancheck.kernels.registry import VARIANTS
from scancheck.oracle.bounds import format_table

var = VARIANTS[bench.TUNED_VARIANT]
sizes = {"float32": (24, 26, 28, 30), "float64": (20, 24, 26, 28, 30), "int64": (24, 26, 28, 30)}
old = {(b, tuple(sorted(var.resolve_params(p).items())))
       for dt, ks in sizes.items() for k in ks for b, p in [var.tuned(dt, 2**k)]}
old |= {(b, tuple(sorted(var.resolve_params(p).items()))) for b, p in
        [(128, {"items": 32}), (512, {"items": 16}), (256, {"items": 16})]}
new = {(b, tuple(sorted(var.resolve_params(p).items()))) for b, p in var.candidates
       if var.resolve_params(p)["schedule"] > 0}
configs = [(b, dict(p)) for b, p in sorted(old) + sorted(new - old)]
print(f"{len(configs)} launches: {len(old)} old choices, {len(new - old)} new schedules",
      flush=True)
results, skipped = [], []
sweep = {"results": results}
t0 = time.time()
for dtype, ks in sizes.items():
    for k in ks:
        if not bench._fits(2**k, dtype):
            skipped.append(f"{dtype} n=2^{k}")
            continue
        results.append(bench.measure(2**k, dtype, configs, reps=10))
        print(f"{dtype} 2^{k} timed at {time.time() - t0:.0f} s", flush=True)
        sweep = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                 "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                 "results": results, "skipped (memory)": skipped}
        with open(sys.argv[1], "w") as fh:  # rewritten after each size: a timeout keeps the rest
            json.dump(sweep, fh, indent=1)
rows = bench.sweep_rows(sweep)
print(format_table(rows, title=f"tuning run on {sweep.get('device')}: each launch's x memcpy"))
for r in results:  # the best old choice and the best new schedule, side by side
    def frac(c):
        return r["memcpy_ms"] / c["ms"] if c.get("ms") else 0.0
    is_new = [(c["block"], tuple(sorted(c["params"].items()))) in new for c in r["configs"]]
    bo = max((c for c, n in zip(r["configs"], is_new) if not n), key=frac)
    bn = max((c for c, n in zip(r["configs"], is_new) if n), key=frac)
    torch = r["memcpy_ms"] / r["torch_ms"] if r.get("torch_ms") else None
    print(f"{r['dtype']:8} 2^{r['log2_n']}: old best {bench._config_label(bo)} {frac(bo):.3f}"
          f" | new best {bench._config_label(bn)} {frac(bn):.3f} | torch {torch}")
EOF
echo "sweep rc $? at $(( $(date +%s) - T0 )) s" | tee -a "$OUT/tune2.txt"

# 3. the checked-in table with the sweep's choices merged in (then used by this checkout
#    for steps 4-6 only).
$PY -m scancheck.kernels.tune --from "$OUT/tune2.json" --to "$OUT/tuned.json" \
    >> "$OUT/tune2.txt" 2>&1 && cp "$OUT/tuned.json" scancheck/kernels/tuned.json

# 4. verify: each kernel equal to its model, the look-back bit for bit at every candidate.
timeout $(left 138) $PY -m scancheck.cli verify > "$OUT/verify.txt" 2>&1
echo "verify rc $? at $(( $(date +%s) - T0 )) s" | tee -a "$OUT/verify.txt"

# 5. each new schedule run again on new data at 37 tiles (exact integers, the counter and
#    status reuse of the persistent loop).
SCANCHECK_HYPOTHESIS_PROFILE=ci timeout $(left 146) $PY -m pytest -q -p no:cacheprovider \
    -m "gpu and not huge and not slow" -k "run_again" tests/kernels/test_tune.py \
    > "$OUT/pytest.txt" 2>&1
echo "pytest rc $? at $(( $(date +%s) - T0 )) s" | tee -a "$OUT/pytest.txt"

# 6. the bench at the merged table, if time is left.
if [ "$(left 149)" -gt 4 ]; then
  timeout $(left 149) $PY -m scancheck.cli bench --log2-sizes 24 28 30 \
      --dtypes float32 float64 int64 --reps 10 --oracle-dists --json "$OUT/bench.json" > "$OUT/bench.txt" 2>&1
  echo "bench rc $? at $(( $(date +%s) - T0 )) s" | tee -a "$OUT/bench.txt"
fi
kill "$WARM" 2>/dev/null  # its own compiles only, if any are still going
tail -n 20 "$OUT/tune2.txt"; tail -n 20 "$OUT/verify.txt"; tail -n 5 "$OUT/pytest.txt"
tail -n 12 "$OUT/bench.txt" 2>/dev/null
