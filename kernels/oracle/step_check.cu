// scancheck's check of a scan of step data past 2**31 and 2**32 elements, on the device.
// The input was zeros with ones at a few sorted marks, so the correct scan at i is the
// number of marks at or before i (inclusive) or before i (exclusive): every value small and
// exact in any dtype.  Each thread compares outputs with that count, grid-stride, in 64-bit
// indices; the first wrong index and the count of wrong ones come back.  Nothing of the size
// of the output is allocated.
template <typename E>
__global__ void step_check(const E* out, long long n, const long long* marks, int nmarks,
                           int inclusive, unsigned long long* first_bad,
                           unsigned long long* bad_count) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int count = 0;
    for (int m = 0; m < nmarks; ++m) count += inclusive ? (marks[m] <= i) : (marks[m] < i);
    const E v = out[i];
    if (!(v == static_cast<E>(count))) {  // NaN is wrong too
      atomicMin(first_bad, static_cast<unsigned long long>(i));
      atomicAdd(bad_count, 1ULL);
    }
  }
}
