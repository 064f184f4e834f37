// Blelloch up-sweep / down-sweep, exclusive (seed 000; GPU Gems 3, ch. 39): 2*blockDim
// elements in place.
#include "scan_ops.cuh"

template <typename T, typename Op>
__global__ void blelloch(const T* in, T* out, long long n) {
  Op op;
  T* temp = shared_as<T>();
  const int t = threadIdx.x, size = 2 * blockDim.x;
  temp[2 * t] = 2 * t < n ? in[2 * t] : Op::identity();
  temp[2 * t + 1] = 2 * t + 1 < n ? in[2 * t + 1] : Op::identity();
  int offset = 1;
  for (int d = size >> 1; d > 0; d >>= 1) {
    __syncthreads();
    if (t < d) {
      const int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
      temp[bi] = op(temp[ai], temp[bi]);
    }
    offset *= 2;
  }
  if (t == 0) temp[size - 1] = Op::identity();
  for (int d = 1; d < size; d *= 2) {
    offset >>= 1;
    __syncthreads();
    if (t < d) {
      const int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
      const T left = temp[ai];
      temp[ai] = temp[bi];
      temp[bi] = op(temp[bi], left);  // the prefix before the pair, then the left half
    }
  }
  __syncthreads();
  if (2 * t < n) out[2 * t] = temp[2 * t];
  if (2 * t + 1 < n) out[2 * t + 1] = temp[2 * t + 1];
}
