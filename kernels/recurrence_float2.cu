// Seed 004, task 4, as it was described: the warp-shuffle scan on float2 coefficient
// pairs (a, b) with recurrence_op, solving y_n = a_n*y_{n-1} + b_n.  Kept beside the
// generic warp_shuffle<Pair<float>, Recurrence<float>>, which must agree bit for bit
// (hence the IEEE arithmetic of scan_ops.cuh rather than plain * and +).
#include "scan_ops.cuh"

__device__ __forceinline__ float2 recurrence_op(float2 p1, float2 p2) {
  using scancheck::add_rn;
  using scancheck::mul_rn;
  return make_float2(mul_rn(p2.x, p1.x), add_rn(mul_rn(p2.x, p1.y), p2.y));
}

__device__ __forceinline__ float2 shfl_up_float2(float2 v, unsigned d) {
  return make_float2(__shfl_up_sync(0xffffffffu, v.x, d), __shfl_up_sync(0xffffffffu, v.y, d));
}

extern "C" __global__ void scan_recurrence_float2(const float2* in, float2* out, long long n) {
  float2* sums = reinterpret_cast<float2*>(scancheck_smem);
  const int t = threadIdx.x, lane = t % 32, warp = t / 32, nwarps = blockDim.x / 32;
  float2 v = t < n ? in[t] : make_float2(1.0f, 0.0f);
  for (int d = 1; d < 32; d *= 2) {
    const float2 y = shfl_up_float2(v, d);
    if (lane >= d) v = recurrence_op(y, v);
  }
  if (lane == 31) sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float2 s = lane < nwarps ? sums[lane] : make_float2(1.0f, 0.0f);
    for (int d = 1; d < 32; d *= 2) {
      const float2 y = shfl_up_float2(s, d);
      if (lane >= d) s = recurrence_op(y, s);
    }
    if (lane < nwarps) sums[lane] = s;
  }
  __syncthreads();
  if (warp > 0) v = recurrence_op(sums[warp - 1], v);
  if (t < n) out[t] = v;
}
