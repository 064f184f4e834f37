"""What flush-to-zero compilation does to each scan operator's combine on an NVIDIA GPU,
and what two flushing CPU libraries return for the same scans.

Plain CuPy (and JAX, torch where installed), no scancheck.  Run on a GPU:
    python docs/findings/ftz_probe.py
Each combine is compiled by NVRTC four ways -- IEEE (-ftz=false, nvcc's default),
-ftz=true, --use_fast_math, and cupy.RawModule's defaults -- and run on chosen operands.
Values print as multiples of s, the smallest subnormal (2**-149, 2**-1074); S is the
largest subnormal, N the smallest normal number.
"""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # JAX's CPU backend: XLA sets DAZ and FTZ there

import cupy as cp  # noqa: E402
import numpy as np  # noqa: E402
from cupy.cuda import compiler, function  # noqa: E402

SRC = r"""
template <typename T> __device__ T inf();
template <> __device__ float inf<float>() { return __int_as_float(0x7f800000); }
template <> __device__ double inf<double>() { return __longlong_as_double(0x7ff0000000000000LL); }
template <typename T> __device__ T combine(int op, T a, T b, T c) {
  switch (op) {
    case 0: return a + b;
    case 1: return a * b;
    case 2: return fmax(a, b);
    case 3: return fmin(a, b);
    case 4: return (b > a) ? b : a;   // compare and select, the earlier operand wins ties
    case 5: return (b < a) ? b : a;
    case 6: return (b >= a) ? b : a;  // the later operand wins ties (cummax's index rule)
    case 7: return (a > b) ? T(1) : T(0);
    case 8: return (a == b) ? T(1) : T(0);
    case 9: return a * b + c;          // the recurrence's a2*b1 + b2 (an FMA by default)
    case 10: {                         // logaddexp as max + log1p(exp(min - max))
      const T hi = (b > a) ? b : a, lo = (b > a) ? a : b;
      return hi + static_cast<T>(log1p(exp(lo - hi)));
    }
    default: return a;                 // a move
  }
}
template <typename T> __device__ void probe(const int* op, const T* a, const T* b, const T* c,
                                            T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = combine<T>(op[i], a[i], b[i], c[i]);
}
// Sequential inclusive scans from the identity, one thread: every output is a combine.
template <typename T> __device__ void scans(const T* x, const T* y, const T* z, T* out, int n) {
  if (threadIdx.x || blockIdx.x) return;
  T fm = -inf<T>(), sel = fm, later = fm, idx = -1, pr = 1, sum = 0, lae = fm;
  for (int i = 0; i < n; ++i) {
    fm = fmax(fm, x[i]);
    sel = (x[i] > sel) ? x[i] : sel;
    if (x[i] >= later) { later = x[i]; idx = T(i); }
    pr = pr * y[i];
    sum = sum + z[i];
    if (x[i] > lae) lae = x[i] + static_cast<T>(log1p(exp(lae - x[i])));
    else lae = lae + static_cast<T>(log1p(exp(x[i] - lae)));
    T* o = out + i;
    o[0] = fm; o[n] = sel; o[2 * n] = later; o[3 * n] = idx; o[4 * n] = pr; o[5 * n] = sum;
    o[6 * n] = lae;
  }
}
extern "C" {
__global__ void probe_f32(const int* op, const float* a, const float* b, const float* c,
                          float* out, int n) { probe<float>(op, a, b, c, out, n); }
__global__ void probe_f64(const int* op, const double* a, const double* b, const double* c,
                          double* out, int n) { probe<double>(op, a, b, c, out, n); }
__global__ void scans_f32(const float* x, const float* y, const float* z, float* out, int n) {
  scans<float>(x, y, z, out, n); }
__global__ void scans_f64(const double* x, const double* y, const double* z, double* out,
                          int n) { scans<double>(x, y, z, out, n); }
}
"""
OPS = ["a+b", "a*b", "fmax", "fmin", "b>a?b:a", "b<a?b:a", "b>=a?b:a", "a>b", "a==b",
       "a*b+c", "logaddexp", "move"]
SCANS = ["max by fmax", "max by b>a?b:a", "max by b>=a?b:a", "its index", "cumprod",
         "cumsum", "logcumsumexp"]


def builds():
    """(label, function getter) for each way of compiling SRC."""
    out = []
    for label, opts in (("IEEE", ("-ftz=false",)), ("-ftz=true", ("-ftz=true",)),
                        ("fast_math", ("--use_fast_math",))):
        binary, _ = compiler.compile_using_nvrtc(SRC, ("--std=c++17",) + opts)
        mod = function.Module()
        mod.load(binary)
        out.append((label, mod.get_function))
    raw = cp.RawModule(code=SRC)
    out.append(("RawModule", raw.get_function))
    return out


def fmt(v, s, big_s, n):
    v = float(v)
    if np.isnan(v):
        return "nan"
    if v == 0:
        return "-0" if np.signbit(v) else "+0"
    sign = "-" if v < 0 else ""
    a = abs(v)
    if a == big_s:
        return sign + "S"
    if a == n:
        return sign + "N"
    if a < n:
        return f"{sign}{a / s:g}s"
    return f"{v:.9g}"


def main():
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"device: {dev} | cupy {cp.__version__} | CUDA runtime "
          f"{cp.cuda.runtime.runtimeGetVersion()} | driver {cp.cuda.runtime.driverGetVersion()}")
    made = builds()
    for dt, suffix in ((np.float32, "f32"), (np.float64, "f64")):
        fi = np.finfo(dt)
        s, n = float(fi.smallest_subnormal), float(fi.smallest_normal)
        big_s = n - s
        lae_far = -100.0 if dt == np.float32 else -720.0  # exp of it is subnormal
        z = 0.0
        rows = {  # op -> [(a, b, c)]
            "a+b": [(s, z, z), (n, -big_s, z), (n, s, z), (s, s, z), (-s, s, z), (1.0, s, z)],
            "a*b": [(s, 1.0, z), (-s, 1.0, z), (n, 0.5, z), (-n, 0.5, z),
                    (s, 2.0 ** (fi.nmant + 1), z), (big_s, 2.0, z)],
            "fmax": [(s, z, z), (z, s, z), (-s, z, z), (z, -s, z), (-s, -z, z), (-z, -s, z),
                     (s, -z, z), (-z, s, z), (z, -z, z), (-z, z, z), (s, 2 * s, z),
                     (2 * s, s, z), (-s, -1.0, z), (s, -1.0, z), (big_s, n, z)],
            "fmin": [(s, z, z), (z, s, z), (-s, z, z), (z, -s, z), (-s, -z, z), (s, -z, z),
                     (z, -z, z), (-z, z, z), (s, 2 * s, z), (2 * s, s, z), (s, 1.0, z),
                     (-s, 1.0, z), (big_s, n, z)],
            "a*b+c": [(1.0, s, z), (n, 0.5, z), (n, -1.0, big_s), (1.0, 1.0, s), (s, 1.0, n),
                      (s, 2.0 ** (fi.nmant + 1), z)],
            "logaddexp": [(s, lae_far, z), (z, lae_far, z), (-s, lae_far, z), (s, s, z),
                          (s, -np.inf, z)],
            "move": [(s, z, z), (-s, z, z), (big_s, z, z)],
        }
        for sel in ("b>a?b:a", "b<a?b:a", "b>=a?b:a", "a>b", "a==b"):
            rows[sel] = [(s, z, z), (z, s, z), (-s, z, z), (z, -s, z), (s, -z, z),
                         (s, 2 * s, z), (2 * s, s, z), (-s, -1.0, z), (s, -1.0, z)]
        flat = [(OPS.index(op), *r) for op in OPS for r in rows[op]]
        op = cp.asarray(np.array([f[0] for f in flat], np.int32))
        a, b, c = (cp.asarray(np.array([f[k] for f in flat], dt)) for k in (1, 2, 3))
        results = []
        for _, get in made:
            out = cp.empty(len(flat), dt)
            get(f"probe_{suffix}")((1,), (len(flat),), (op, a, b, c, out, np.int32(len(flat))))
            results.append(out.get())
        print(f"\n== {np.dtype(dt).name} combines: s = {s!r}, S = {big_s!r}, N = {n!r}")
        head = f"{'combine':<11}{'operands':<22}" + "".join(f"{lbl:>11}" for lbl, _ in made)
        print(head)
        for i, f in enumerate(flat):
            operands = ", ".join(fmt(v, s, big_s, n) for v in f[1:4 if OPS[f[0]] == "a*b+c" else 3])
            cells = "".join(f"{fmt(r[i], s, big_s, n):>11}" for r in results)
            flag = "" if len({fmt(r[i], s, big_s, n) for r in results}) == 1 else "   <- differs"
            print(f"{OPS[f[0]]:<11}{operands:<22}{cells}{flag}")
        # Sequences for the scans: max data among which subnormals tie with zeros once flushed,
        # products that pass through the subnormal range and back, sums that end subnormal.
        x = np.array([-1.0, 2 * s, -s, 3 * s, -0.0, s, 0.0, -2 * s], dt)
        e = (-60, -60, -10, 30, 40, 0) if dt == np.float32 else (-500, -500, -30, 200, 300, 0)
        y = np.array([2.0 ** k for k in e] + [s, 2.0], dt)
        y[5] = -1.0
        zz = np.array([n, -big_s, s, s, -s, -s, -s, 1.0], dt)
        print(f"\n-- {np.dtype(dt).name} sequential scans from the identity")
        print(f"   x (max)  = {[fmt(v, s, big_s, n) for v in x]}")
        ys = [f"2**{int(np.log2(abs(v)))}" if abs(v) >= n else fmt(v, s, big_s, n) for v in y]
        print(f"   y (prod) = {ys}")
        print(f"   z (sum)  = {[fmt(v, s, big_s, n) for v in zz]}")
        for label, get in made:
            out = cp.empty(len(SCANS) * x.size, dt)
            get(f"scans_{suffix}")((1,), (1,), (cp.asarray(x), cp.asarray(y), cp.asarray(zz), out,
                                                np.int32(x.size)))
            got = out.get().reshape(len(SCANS), x.size)
            print(f"  [{label}]")
            for name, row in zip(SCANS, got):
                if name == "its index":
                    cells = [str(int(v)) for v in row]
                elif name == "cumprod":
                    cells = [f"{'-' if v < 0 else ''}2**{int(np.log2(abs(v)))}" if abs(v) >= n
                             else fmt(v, s, big_s, n) for v in row]
                else:
                    cells = [fmt(v, s, big_s, n) for v in row]
                print(f"    {name:<16} {cells}")
    libraries()


def libraries():
    """jax on the CPU (XLA: DAZ and FTZ by design) and torch on the CPU with
    set_flush_denormal(True) (x86 DAZ and FTZ), on the float32 sequences above."""
    fi = np.finfo(np.float32)
    s, n = float(fi.smallest_subnormal), float(fi.smallest_normal)
    x = np.array([-1.0, 2 * s, -s, 3 * s, -0.0, s, 0.0, -2 * s], np.float32)
    y = np.array([2.0**-60, 2.0**-60, 2.0**-10, 2.0**30, 2.0**40, -1.0, s, 2.0], np.float32)
    f = lambda v: fmt(v, s, n - s, n) if abs(float(v)) < 1e-30 or not np.isfinite(v) else f"{float(v):.4g}"  # noqa: E731
    print("\n== CPU libraries, float32")
    print(f"   x = {[f(v) for v in x]}")
    try:
        import jax
        import jax.numpy as jnp

        print(f"  jax {jax.__version__} ({jax.devices()[0].platform})")
        print(f"    lax.cummax       {[f(v) for v in np.asarray(jax.lax.cummax(jnp.asarray(x)))]}")
        print(f"    lax.cummin(-x)   {[f(v) for v in np.asarray(jax.lax.cummin(jnp.asarray(-x)))]}")
        print(f"    cumprod(y)       {[f(v) for v in np.asarray(jnp.cumprod(jnp.asarray(y)))]}")
        print(f"    cumsum(x)        {[f(v) for v in np.asarray(jnp.cumsum(jnp.asarray(x)))]}")
        print(f"    cumlogsumexp(x)  {[f(v) for v in np.asarray(jax.lax.cumlogsumexp(jnp.asarray(x)))]}")
    except Exception as exc:  # noqa: BLE001
        print(f"  jax: {type(exc).__name__}: {exc}")
    try:
        import torch

        torch.set_flush_denormal(True)
        t = torch.from_numpy(x)
        v, i = torch.cummax(t, 0)
        print(f"  torch {torch.__version__} CPU, set_flush_denormal(True)")
        print(f"    cummax values    {[f(e) for e in v.numpy()]}  indices {i.tolist()}")
        v, i = torch.cummin(-t, 0)
        print(f"    cummin(-x)       {[f(e) for e in v.numpy()]}  indices {i.tolist()}")
        print(f"    cumprod(y)       {[f(e) for e in torch.cumprod(torch.from_numpy(y), 0).numpy()]}")
        print(f"    cumsum(x)        {[f(e) for e in torch.cumsum(t, 0).numpy()]}")
        print(f"    logcumsumexp(x)  {[f(e) for e in torch.logcumsumexp(t, 0).numpy()]}")
        torch.set_flush_denormal(False)
    except Exception as exc:  # noqa: BLE001
        print(f"  torch: {type(exc).__name__}: {exc}")


if __name__ == "__main__":
    main()
