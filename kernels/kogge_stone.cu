// Kogge-Stone, inclusive (seed 002, 11.2): a temporary and two barriers per stride.
#include "scan_ops.cuh"

template <typename T, typename Op>
__global__ void kogge_stone(const T* in, T* out, long long n) {
  Op op;
  T* xy = shared_as<T>();
  const int t = threadIdx.x;
  xy[t] = t < n ? in[t] : Op::identity();
  for (int stride = 1; stride < blockDim.x; stride *= 2) {
    __syncthreads();
    T temp;
    if (t >= stride) temp = op(xy[t - stride], xy[t]);
    __syncthreads();
    if (t >= stride) xy[t] = temp;
  }
  if (t < n) out[t] = xy[t];
}
