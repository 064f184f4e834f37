// Negative control: a correct single-pass chained scan except that its element index is
// a 32-bit int.  Past 2**31 elements the index wraps negative and the kernel reads and
// writes out of bounds.
// Conformance-target signature (see scancheck/targets.py); scancheck prepends "typedef ... T;".
extern "C" __global__ void scan(const T* in, T* out, long long n, void* scratch) {
  extern __shared__ __align__(16) unsigned char raw[];
  T* xy = reinterpret_cast<T*>(raw);
  __shared__ unsigned tile_s;
  __shared__ T prev_s;
  unsigned* counter = reinterpret_cast<unsigned*>(scratch);
  const long long blocks = (n + blockDim.x - 1) / blockDim.x;
  int* flags = reinterpret_cast<int*>(static_cast<char*>(scratch) + 16);
  T* sums = reinterpret_cast<T*>(static_cast<char*>(scratch) + 16 + 4 * ((blocks + 1) & ~1LL));
  const int t = threadIdx.x;
  if (t == 0) tile_s = atomicAdd(counter, 1u);
  __syncthreads();
  const unsigned tile = tile_s;
  const int i = tile * blockDim.x + t;  // the bug: 32 bits
  xy[t] = i < n ? in[i] : T(0);
  for (int s = 1; s < blockDim.x; s *= 2) {
    __syncthreads();
    const T v = t >= s ? xy[t - s] + xy[t] : xy[t];
    __syncthreads();
    xy[t] = v;
  }
  __syncthreads();
  if (t == blockDim.x - 1) {
    T prev = T(0);
    if (tile > 0) {
      while (*reinterpret_cast<volatile int*>(&flags[tile - 1]) == 0) {
      }
      __threadfence();
      prev = *reinterpret_cast<volatile T*>(&sums[tile - 1]);
    }
    *reinterpret_cast<volatile T*>(&sums[tile]) = prev + xy[t];
    __threadfence();
    atomicExch(&flags[tile], 1);
    prev_s = prev;
  }
  __syncthreads();
  if (i < n) out[i] = prev_s + xy[t];
}
