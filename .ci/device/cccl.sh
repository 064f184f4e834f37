#!/bin/bash
# .ci/device/cccl.sh: cuda.compute (cuda-cccl 1.1.1) scans with a Python operator, checked
# by scancheck under its probe monoids (inclusive and exclusive).  Run from the repo root on
# the device, $OUT set, the wheels in .whl (carry .whl).  At most about 120 s: every step is
# bounded by `timeout`.
#
# Carried: cuda-cccl 1.1.1 (the last release that compiles Python ops with numba-cuda; 1.2
# needs numba-cuda-mlir, a 71 MB wheel) and numba-cuda 0.30.4 (numba 0.66+ support; cccl
# excludes 0.27-0.30.0).  The image's cuda-bindings, cuda-core, cuda-pathfinder, numba and
# CuPy are used.  Tried in turn until a smoke scan passes: A) cccl + numba-cuda 0.30.4,
# B) cccl alone (the image's numba-cuda), C) A + cuda-pathfinder 1.9.1.
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=.whl
CCCL=$W/cuda_cccl-1.1.1-cp312-cp312-manylinux_2_26_x86_64.whl
NCUDA=$W/numba_cuda-0.30.4-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl
PF=$W/cuda_pathfinder-1.9.1-py3-none-any.whl
ls -la $CCCL $NCUDA $PF || { echo "BLOCKED: wheels missing from .whl (carry .whl)"; exit 1; }
START=$(date +%s)

echo "== the image's packages"
python3 --version
python3 -m pip show numba numba-cuda cuda-bindings cuda-core cuda-pathfinder cupy-cuda13x \
    cuda-toolkit nvidia-nvvm 2>/dev/null | grep -E "^(Name|Version):" | paste - - | tr '\t' ' '
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# numba-cuda finds libnvvm through cuda-pathfinder: the system toolkit where no wheel has it.
if [ -z "${CUDA_HOME:-}" ] && [ -d /usr/local/cuda ]; then export CUDA_HOME=/usr/local/cuda; fi
echo "CUDA_HOME=${CUDA_HOME:-unset}"; ls ${CUDA_HOME:-/usr/local/cuda}/nvvm/lib64 2>&1 | head -3

SMOKE='
import time, traceback
import numpy as np
t = time.time()
import cuda.compute, numba, numba.cuda
print("import cuda.compute OK:", cuda.compute.__file__, "numba", numba.__version__,
      "numba.cuda", numba.cuda.__file__, f"{time.time() - t:.1f} s")
from scancheck.core.monoids import PROBES
from scancheck.engine.cccl_scans import cccl_scan
from scancheck.kernels.generic_scans import blelloch, sequential
ok = True
# One scalar scan and one struct scan, each algorithm once (each is a build of its own).
for name, inclusive in (("add (int32)", True), ("affine mod 2**32", False)):
    m = PROBES[name]
    x = m.draw(np.random.default_rng(0), (1000,))
    t = time.time()
    try:
        got = cccl_scan(inclusive)(x, m.bound)
        want = sequential(x, m.bound) if inclusive else blelloch(x, m.bound)
        same = all(np.array_equal(g, w) for g, w in zip(got, want))
        verdict = "equal" if same else "DIFFERENT"
        print(f"smoke {name}, inclusive={inclusive}: {verdict} ({time.time() - t:.1f} s)")
    except Exception:
        ok = False
        print(f"smoke {name}, inclusive={inclusive}: ERROR"); traceback.print_exc(limit=6)
raise SystemExit(0 if ok else 3)
'

stage() {  # stage NAME WHEEL...: install into a fresh folder, put it first, run the smoke scan
    local name=$1; shift
    if [ $(( $(date +%s) - START )) -gt 40 ]; then echo "stage $name skipped: past 40 s"; return 1; fi
    T=/tmp/cccl_$name; rm -rf "$T"
    echo "== stage $name: $*"
    python3 -m pip install -q --no-deps --no-index --no-compile --target "$T" "$@" || return 1
    export PYTHONPATH="$T:$PWD"
    # numba.cuda is numba_cuda's, through the .pth redirector of the image's numba-cuda
    # (.pth files in a --target folder are not read): where the image has none, a
    # sitecustomize in the folder imports the carried one.
    if [ -f "$T/_numba_cuda_redirector.py" ] && ! python3 -c "import sys, numba.cuda as c
sys.exit(0 if 'numba_cuda' in c.__file__ else 1)" 2>/dev/null; then
        echo "import _numba_cuda_redirector" > "$T/sitecustomize.py"
        echo "(numba.cuda not found through the image: the carried redirector is imported)"
    fi
    timeout 45 python3 -c "$SMOKE" 2>&1 | tail -40
    return "${PIPESTATUS[0]}"
}

USED=""
if stage A "$CCCL" "$NCUDA"; then USED=A
elif stage B "$CCCL"; then USED=B
elif stage C "$CCCL" "$NCUDA" "$PF"; then USED=C
fi
if [ -z "$USED" ]; then
    echo "BLOCKED: no stage imported cuda.compute and scanned (see the tracebacks above)"
    exit 2
fi
echo "== using stage $USED (PYTHONPATH=$PYTHONPATH), $(( $(date +%s) - START )) s so far"

LEFT=$(( 115 - ($(date +%s) - START) )); [ $LEFT -lt 30 ] && LEFT=30
timeout $LEFT python3 -m scancheck check 'cuda.compute inclusive_scan (op)' \
    'cuda.compute exclusive_scan (op)' --budget 10 --quick --workers 1 --json "$OUT/cccl.json" \
    2>&1 | tail -25
echo "check rc=${PIPESTATUS[0]}"
python3 - "$OUT/cccl.json" <<'EOF'
import json, sys
try:
    report = json.load(open(sys.argv[1]))
except (OSError, ValueError) as exc:
    raise SystemExit(f"no JSON report: {exc}")
for t in report:
    probe = next((r for r in t["results"] if r["name"] == "probe monoids"), {})
    print(f"SUMMARY {t['target']}: probe monoids {probe.get('status')} "
          f"({probe.get('seconds', 0):.1f} s) {probe.get('diagnosis', '')[:300]}")
EOF
echo "total $(( $(date +%s) - START )) s"
