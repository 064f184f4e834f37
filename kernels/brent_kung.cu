// Brent-Kung, inclusive (seed 002, 11.3): 2*blockDim elements, a reduction tree up
// and a reverse tree down.
#include "scan_ops.cuh"

template <typename T, typename Op>
__global__ void brent_kung(const T* in, T* out, long long n) {
  Op op;
  T* xy = shared_as<T>();
  const int t = threadIdx.x, nt = blockDim.x, size = 2 * blockDim.x;
  xy[t] = t < n ? in[t] : Op::identity();
  xy[t + nt] = t + nt < n ? in[t + nt] : Op::identity();
  for (int stride = 1; stride <= nt; stride *= 2) {
    __syncthreads();
    const int index = (t + 1) * 2 * stride - 1;
    if (index < size) xy[index] = op(xy[index - stride], xy[index]);
  }
  for (int stride = size / 4; stride > 0; stride /= 2) {
    __syncthreads();
    const int index = (t + 1) * 2 * stride - 1;
    if (index + stride < size) xy[index + stride] = op(xy[index], xy[index + stride]);
  }
  __syncthreads();
  if (t < n) out[t] = xy[t];
  if (t + nt < n) out[t + nt] = xy[t + nt];
}
