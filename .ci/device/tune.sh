#!/usr/bin/env bash
# One device kind's tuning run: its launch table, the bench tables at that table, and the
# look-back's and the exact oracle's GPU tests.  From the repo root on the device:
#     OUT=<dir> bash .ci/device/tune.sh
# Writes to $OUT (7 files):
#   device.txt     nvidia-smi -L and the commit
#   sweep.json     the sweep: each launch shape checked against its model, then every
#                  candidate launch screened and the fastest 16 timed, with memcpy, torch
#                  and CUB, per dtype and 2^16..2^30
#   sweep.txt      the sweep as a table, and what it wrote
#   <kind>.json    this device's launch table (e.g. NVIDIA_H200-sm_90.json): commit it to
#                  scancheck/kernels/tuned/
#   bench.txt      scancheck bench at that table: the scans at 2^16..2^30, and the exact
#                  oracle per distribution over torch.cumsum at 2^20, 2^24, 2^28 (its bits
#                  compared with the CPU oracle's up to 2^24)
#   bench.json     every figure of bench.txt
#   pytest.txt     the look-back's and the device oracle's GPU tests (Hypothesis profile ci)
# Budget 290 s: every step runs under a timeout, the sweep first.
set -u
OUT=${OUT:-./tune-out}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
# The table the sweep writes is the one bench reads (no tuning on first use in between).
export SCANCHECK_TUNED_DIR="$OUT"
T0=$(date +%s)
# Seconds left until second $1 of the run, at least 1 (timeout 0 would mean no limit).
left() { local r=$(( $1 - ($(date +%s) - T0) )); [ "$r" -lt 1 ] && r=1; echo "$r"; }
PY=${PY:-python3}

{ nvidia-smi -L; git log --oneline -1; } > "$OUT/device.txt" 2>&1

timeout $(left 140) $PY -m scancheck bench --tune "$OUT/sweep.json" \
    --log2-sizes 16 18 20 22 24 26 28 30 --reps 15 > "$OUT/sweep.txt" 2>&1
echo "sweep rc $? at $(( $(date +%s) - T0 )) s" | tee -a "$OUT/sweep.txt"

timeout $(left 235) $PY -m scancheck bench --log2-sizes 16 20 24 28 30 --reps 20 \
    --oracle-sizes 20 24 28 --json "$OUT/bench.json" > "$OUT/bench.txt" 2>&1
echo "bench rc $? at $(( $(date +%s) - T0 )) s" | tee -a "$OUT/bench.txt"

SCANCHECK_HYPOTHESIS_PROFILE=ci timeout $(left 290) $PY -m pytest -q -p no:cacheprovider \
    -m "gpu and not huge and not slow" tests/kernels/test_tune.py \
    tests/oracle/test_exact_device.py > "$OUT/pytest.txt" 2>&1
echo "pytest rc $? at $(( $(date +%s) - T0 )) s" | tee -a "$OUT/pytest.txt"

tail -n 45 "$OUT/sweep.txt"; cat "$OUT/bench.txt"; tail -n 15 "$OUT/pytest.txt"
ls "$OUT"
