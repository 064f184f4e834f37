// Negative control: Kogge-Stone with its second barrier missing.  A thread may write
// xy[t] while another thread still reads it as xy[t - s]: a data race that racecheck
// reports and that may or may not change the result on a given run.
// Conformance-target signature (see scancheck/targets.py); scancheck prepends "typedef ... T;".
extern "C" __global__ void scan(const T* in, T* out, long long n, void* scratch) {
  extern __shared__ __align__(16) unsigned char raw[];
  T* xy = reinterpret_cast<T*>(raw);
  const int t = threadIdx.x;
  xy[t] = t < n ? in[t] : T(0);
  for (int s = 1; s < blockDim.x; s *= 2) {
    __syncthreads();
    const T v = t >= s ? xy[t - s] + xy[t] : xy[t];
    xy[t] = v;  // the bug: no __syncthreads() between the reads above and this write
  }
  if (t < n) out[t] = xy[t];
}
