// The first index at which two arrays differ bit for bit, on the device: the check every case
// makes that a target left its input unwritten.  One kernel per element width, compiled once
// (CuPy's own reductions compile a kernel for each size class an array falls in, half a
// second each, and a search meets dozens).  Each thread walks its elements grid-stride in
// 64-bit indices and stops at its first difference; the smallest of those is the answer.
template <typename U>
__global__ void first_difference(const U* a, const U* b, long long n,
                                 unsigned long long* first) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    if (a[i] != b[i]) {
      atomicMin(first, static_cast<unsigned long long>(i));
      return;
    }
  }
}
