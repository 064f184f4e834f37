// Negative control: a correct chained scan except that the last tile loads its elements
// without a bounds check.  The values read past the end only reach outputs past the end,
// which are never stored, so every result is right; inside a pooling allocator's chunk the
// read even lands in mapped memory.  Only memcheck, on an allocation of exactly n elements
// (CuPy's pool off) at a size whose tail is not a whole tile, can see it.
// Conformance-target signature (see scancheck/targets.py); scancheck prepends "typedef ... T;".
#include "chained_tile.cuh"

extern "C" __global__ void scan(const T* in, T* out, long long n, void* scratch) {
  __shared__ unsigned tile_s;
  if (threadIdx.x == 0) tile_s = atomicAdd(static_cast<unsigned*>(scratch), 1u);
  __syncthreads();
  chained_tile<long long, /*kGuardLoads=*/false>(in, out, n, tile_s, scratch);  // the bug
}
