#!/usr/bin/env bash
# Issue 34 tuning run: the look-back's launch table.  From the repo root on the device:
#     OUT=<dir> bash .ci/device/tune.sh
# Writes to $OUT:
#   device.txt      nvidia-smi -L
#   warm.txt        parallel compile of every variant and every look-back candidate
#   tune.json       the sweep: every candidate launch, memcpy, torch, CUB per (dtype, 2^k)
#   tune.txt        the sweep as a table (each launch's fraction of memcpy)
#   tuned.json      the table python -m scancheck.kernels.tune --from tune.json makes
#   verify.txt      scancheck verify: every kernel (the look-back at each candidate) vs its model
#   pytest.txt      the look-back's and the device oracle's GPU tests (Hypothesis profile ci)
#   bench.txt/json  scancheck bench at the new table (if time is left)
#   bench-oracle.*  the same with the exact oracle's time per distribution (2^24, 2^28; if time is left)
# Budget 240 s: the steps run under timeouts, so the sweep and verify always come back.
set -u
OUT=${OUT:-./sol-tune-out}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
T0=$(date +%s)
# Seconds left until second $1 of the run, at least 1 (timeout 0 would mean no limit).
left() { local r=$(( $1 - ($(date +%s) - T0) )); [ "$r" -lt 1 ] && r=1; echo "$r"; }
PY=${PY:-python3}

nvidia-smi -L > "$OUT/device.txt" 2>&1
git log --oneline -1 >> "$OUT/device.txt" 2>&1

# 1. compile side by side into CuPy's kernel cache (each variant's module, and the look-back
#    at each candidate items value), so the sweep and verify only load.
timeout 100 $PY - > "$OUT/warm.txt" 2>&1 <<'EOF'
import subprocess, sys, time
from scancheck.kernels.launch import warm_jobs
t0 = time.time()
code = "from scancheck.kernels.launch import warm; warm({!r}, {!r})"
procs = [(job, subprocess.Popen([sys.executable, "-c", code.format(*job)], stderr=subprocess.PIPE,
                                text=True)) for job in warm_jobs()]
for job, proc in procs:
    err = proc.communicate()[1]
    print(job, "rc", proc.returncode, err[-600:] if proc.returncode else "")
print(f"compiled {len(procs)} modules in {time.time() - t0:.0f} s")
EOF
echo "warm done at $(( $(date +%s) - T0 )) s" | tee -a "$OUT/warm.txt"

# 2. the sweep: every candidate at every dtype x 2^16..2^30 with memcpy, torch, CUB beside it.
timeout $(left 150) $PY -m scancheck.cli bench --tune "$OUT/tune.json" \
    --log2-sizes 16 18 20 22 24 26 28 30 --reps 15 > "$OUT/tune.txt" 2>&1
echo "sweep rc $? at $(( $(date +%s) - T0 )) s" | tee -a "$OUT/tune.txt"

# 3. the table it makes (written to $OUT, then used by this checkout for step 5 only).
$PY -m scancheck.kernels.tune --from "$OUT/tune.json" --to "$OUT/tuned.json" \
    >> "$OUT/tune.txt" 2>&1 && cp "$OUT/tuned.json" scancheck/kernels/tuned.json

# 4. verify: each kernel equal to its model, the look-back at every candidate launch.
timeout $(left 185) $PY -m scancheck.cli verify > "$OUT/verify.txt" 2>&1
echo "verify rc $? at $(( $(date +%s) - T0 )) s" | tee -a "$OUT/verify.txt"

# 5. the bench table at the new tuned table, without the oracle (quick).
if [ "$(left 205)" -gt 10 ]; then
  timeout $(left 205) $PY -m scancheck.cli bench --log2-sizes 16 20 24 28 30 --reps 10 \
      --oracle-dists --json "$OUT/bench.json" > "$OUT/bench.txt" 2>&1
  echo "bench rc $? at $(( $(date +%s) - T0 )) s" | tee -a "$OUT/bench.txt"
fi

# 6. the look-back's and the exact oracle's GPU tests (the oracle scans with the same
#    look-back code), at the quick Hypothesis profile.
SCANCHECK_HYPOTHESIS_PROFILE=ci timeout $(left 236) $PY -m pytest -q -p no:cacheprovider \
    -m "gpu and not huge and not slow" -k "decoupled or run_again or exact" \
    tests/kernels/test_tune.py tests/kernels/test_kernels.py tests/oracle/test_exact_device.py \
    > "$OUT/pytest.txt" 2>&1
echo "pytest rc $? at $(( $(date +%s) - T0 )) s" | tee -a "$OUT/pytest.txt"

# 7. the bench with the oracle's time per distribution (its kernels compile in this
#    process), if time is left.
if [ "$(left 238)" -gt 25 ]; then
  timeout $(left 238) $PY -m scancheck.cli bench --log2-sizes 24 28 --dtypes float32 float64 \
      --reps 10 --json "$OUT/bench-oracle.json" > "$OUT/bench-oracle.txt" 2>&1
  echo "bench with the oracle rc $? at $(( $(date +%s) - T0 )) s" | tee -a "$OUT/bench-oracle.txt"
fi
tail -n 40 "$OUT/tune.txt"; tail -n 25 "$OUT/verify.txt"; tail -n 5 "$OUT/pytest.txt"; tail -n 30 "$OUT/bench.txt" 2>/dev/null
tail -n 10 "$OUT/bench-oracle.txt" 2>/dev/null
