"""Plain NumPy and ml_dtypes: does float64 -> bfloat16 round twice, through float32?

Prints the installed versions, one cast, and "still reproduces" where the installed ml_dtypes
rounds twice, or "fixed in ml_dtypes <version>" where it rounds once.
"""
import ml_dtypes
import numpy as np

print("ml_dtypes", ml_dtypes.__version__, "numpy", np.__version__)
x = np.array([1.0, 2**-8, 2**-40], dtype=ml_dtypes.bfloat16)
s = np.add.accumulate(x, dtype=np.float64)  # exact in float64
print("float64 sums:", s.tolist())
cast = s.astype(ml_dtypes.bfloat16).astype(np.float64)
print("cast to bfloat16:", cast.tolist())
# 1 + 2**-8 + 2**-40 lies above the midpoint 1 + 2**-8 of the bfloat16 neighbours 1 and
# 1 + 2**-7: rounded once it is 1 + 2**-7.  float32 rounds it onto the midpoint first, and
# ties-to-even then gives 1.
once = 1 + 2**-7
print("once, to nearest:", once)
if cast[-1] == once:
    print(f"fixed in ml_dtypes {ml_dtypes.__version__}: one rounding")
else:
    print("still reproduces: rounded twice, through float32")
