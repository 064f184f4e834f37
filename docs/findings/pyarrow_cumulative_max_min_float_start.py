"""pyarrow.compute.cumulative_max and cumulative_min of floats start from the wrong value.

Before pyarrow 26 (apache/arrow#51194, fixed by apache/arrow#51203), cumulative_max's
default start was the smallest positive normal float and cumulative_min's the largest
finite one: a prefix of values at or below 0 reads the start as its maximum, and a prefix
of +inf reads DBL_MAX as its minimum.  Plain pyarrow; prints the version and what it saw.
"""

import math

import pyarrow as pa
import pyarrow.compute as pc

print("pyarrow", pa.__version__)
wrong = False
for values, typ in (([-0.47677573561668396], pa.float32()), ([-2.5, 2.5], pa.float64())):
    got = pc.cumulative_max(pa.array(values, type=typ)).to_pylist()
    print(f"cumulative_max({values}, {typ}) = {got}")
    wrong |= got[0] != values[0]
got = pc.cumulative_min(pa.array([math.inf, 1.0], type=pa.float64())).to_pylist()
print(f"cumulative_min([inf, 1.0], double) = {got}")
wrong |= got != [math.inf, 1.0]
print("still reproduces" if wrong else f"fixed in {pa.__version__}")
