// Blelloch scan with bank-conflict-free addressing (GPU Gems 3, ch. 39.2.3): the same
// combines as blelloch.cu, with one padding word every 32 elements so that the strided
// tree accesses fall in different banks.  Shares the Blelloch model.
#include "scan_ops.cuh"

__device__ __forceinline__ int padded(int i) { return i + (i >> 5); }

template <typename T, typename Op>
__global__ void blelloch_bcf(const T* in, T* out, long long n) {
  Op op;
  T* temp = shared_as<T>();
  const int t = threadIdx.x, size = 2 * blockDim.x;
  temp[padded(2 * t)] = 2 * t < n ? in[2 * t] : Op::identity();
  temp[padded(2 * t + 1)] = 2 * t + 1 < n ? in[2 * t + 1] : Op::identity();
  int offset = 1;
  for (int d = size >> 1; d > 0; d >>= 1) {
    __syncthreads();
    if (t < d) {
      const int ai = padded(offset * (2 * t + 1) - 1), bi = padded(offset * (2 * t + 2) - 1);
      temp[bi] = op(temp[ai], temp[bi]);
    }
    offset *= 2;
  }
  if (t == 0) temp[padded(size - 1)] = Op::identity();
  for (int d = 1; d < size; d *= 2) {
    offset >>= 1;
    __syncthreads();
    if (t < d) {
      const int ai = padded(offset * (2 * t + 1) - 1), bi = padded(offset * (2 * t + 2) - 1);
      const T left = temp[ai];
      temp[ai] = temp[bi];
      temp[bi] = op(temp[bi], left);
    }
  }
  __syncthreads();
  if (2 * t < n) out[2 * t] = temp[padded(2 * t)];
  if (2 * t + 1 < n) out[2 * t + 1] = temp[padded(2 * t + 1)];
}
