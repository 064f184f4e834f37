// Negative control: a single-pass chained scan, 16 elements a thread, whose element index
// is unsigned 32-bit arithmetic.  Right up to 2**32 elements; past it the index wraps: the
// tiles beyond overwrite the first outputs and the last ones are never written.  No access
// leaves the arrays, so nothing faults -- a common real failure that only n > 2**32 shows.
// Conformance-target signature (see scancheck/targets.py); scancheck prepends "typedef ... T;".
#include "chained_tile.cuh"

extern "C" __global__ void scan(const T* in, T* out, long long n, void* scratch) {
  chained_tile16<unsigned>(in, out, n, scratch);  // the bug: Index = unsigned
}
