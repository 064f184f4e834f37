"""scancheck's subnormal rules against what a GPU computes: a max scan compiled by
cupy.RawModule (CuPy's NVRTC defaults, -ftz=true) with a compare-and-select functor and with
fmax, declared each way, and the built-in GPU targets whose checks met new subnormal data.

Run from a checkout on a GPU:  python docs/ftz_check_gpu.py
(what it found on an H100: docs/explanation/special-values.md)
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cupy as cp  # noqa: E402
import numpy as np  # noqa: E402

from scancheck.engine.cases import Budget  # noqa: E402
from scancheck.engine.conformance import check_property  # noqa: E402
from scancheck.targets.resolve import resolve
from scancheck.targets.spec import TargetSpec
from scancheck.targets.target import Target  # noqa: E402

# Each thread scans its chunk in order, thread 0 scans the chunks' totals, and each chunk's
# outputs take the carry on the left: another order than the sequential one.
SRC = r"""
template <typename T> __device__ T lowest();
template <> __device__ float lowest<float>() { return __int_as_float(0xff800000); }
template <> __device__ double lowest<double>() { return __longlong_as_double(0xfff0000000000000LL); }
template <typename T, int OP> __device__ T comb(T a, T b) {
  if (OP == 0) return (a != a) ? a : ((b != b || b > a) ? b : a);  // compare and select
  return (a != a || b != b) ? a + b : fmax(a, b);
}
template <typename T, int OP> __device__ void scan(const T* x, T* out, long long n) {
  __shared__ T carry[1024];
  const int t = threadIdx.x;
  const long long chunk = (n + blockDim.x - 1) / blockDim.x;
  const long long lo = t * chunk, hi = min(n, lo + chunk);
  T acc = lowest<T>();
  for (long long i = lo; i < hi; ++i) { acc = comb<T, OP>(acc, x[i]); out[i] = acc; }
  carry[t] = acc;
  __syncthreads();
  if (t == 0) {
    T run = lowest<T>();
    for (int k = 0; k < blockDim.x; ++k) { T v = carry[k]; carry[k] = run; run = comb<T, OP>(run, v); }
  }
  __syncthreads();
  for (long long i = lo; i < hi; ++i) out[i] = comb<T, OP>(carry[t], out[i]);
}
extern "C" {
__global__ void select_f32(const float* x, float* o, long long n) { scan<float, 0>(x, o, n); }
__global__ void select_f64(const double* x, double* o, long long n) { scan<double, 0>(x, o, n); }
__global__ void fmax_f32(const float* x, float* o, long long n) { scan<float, 1>(x, o, n); }
__global__ void fmax_f64(const double* x, double* o, long long n) { scan<double, 1>(x, o, n); }
}
"""


def rawmodule_max(kind):
    module = cp.RawModule(code=SRC)  # CuPy's defaults: -ftz=true

    def run(x):
        out = cp.empty_like(x)
        fn = module.get_function(f"{kind}_{'f32' if x.dtype == cp.float32 else 'f64'}")
        fn((1,), (1024,), (x, out, np.int64(x.shape[0])))
        return out

    return run


def report(target, prop, budget):
    t0 = time.time()
    r = check_property(target, prop, budget)
    case = r.smallest_case or {}
    where = {k: case[k] for k in ("n", "dtype", "data", "index", "got", "expected") if k in case}
    print(f"{target.name} [{target.spec.subnormals}] / {prop}: {r.status} {r.cause} "
          f"({time.time() - t0:.1f} s)\n    {r.diagnosis[:400]}\n    {where}", flush=True)


def main():
    print("device:", cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "| cupy",
          cp.__version__, flush=True)
    budget = Budget(0.5, max_n=2**16)
    for kind in ("select", "fmax"):
        for rule in ("keep", "flush:float32", "flush"):
            spec = TargetSpec(op="max", device="gpu", dtypes=("float32", "float64"),
                              allows_empty=False, subnormals=rule)
            report(Target(f"RawModule max ({kind})", rawmodule_max(kind), spec),
                   "floats within bound", budget)
    for name, props in (("cupy.cumprod", ("products within bound", "rows")),
                        ("cupy.cumsum (no CUB)", ("floats within bound", "rows")),
                        ("cupy.cumsum (CUB)", ("floats within bound",)),
                        ("torch.cummax (CUDA)", ("indices", "rows")),
                        ("torch.cumprod (CUDA)", ("products within bound",)),
                        ("kernel:decoupled_lookback:256:mul", ("products within bound",)),
                        ("torch.logcumsumexp (CUDA)", ("logsumexp within bound",))):
        target = resolve(name)
        if target.unavailable:
            print(f"{name}: unavailable: {target.unavailable}", flush=True)
            continue
        for prop in props:
            report(target, prop, budget)


if __name__ == "__main__":
    main()
