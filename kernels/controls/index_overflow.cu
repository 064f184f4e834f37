// Negative control: a correct single-pass chained scan (tiles from an atomic counter)
// except that its element index is a 32-bit int.  Past 2**31 elements the index wraps
// negative and the kernel reads and writes out of bounds.
// Conformance-target signature (see scancheck/targets.py); scancheck prepends "typedef ... T;".
#include "chained_tile.cuh"

extern "C" __global__ void scan(const T* in, T* out, long long n, void* scratch) {
  __shared__ unsigned tile_s;
  if (threadIdx.x == 0) tile_s = atomicAdd(static_cast<unsigned*>(scratch), 1u);
  __syncthreads();
  chained_tile<int>(in, out, n, tile_s, scratch);  // the bug: Index = int
}
