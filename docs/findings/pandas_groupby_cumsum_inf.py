"""pandas groupby().cumsum() turns an infinite running sum into NaN at the next finite value
(plain pandas).  Series.cumsum, NumPy and groupby().sum() keep the infinity; the group's
running sum, compensated as Kahan's summation compensates, computes inf - inf for the
compensation, and that NaN reaches every later output of the group.  Prints each and then
"still reproduces" or "fixed in <pandas version>"."""

import numpy as np
import pandas as pd

print("pandas", pd.__version__, "numpy", np.__version__)
wrong = False
for values in ([-np.inf, 0.1], [np.inf, 1.0, 2.0], [1.0, np.inf, 3.0], [np.inf, np.inf]):
    x = pd.Series(values)
    groups = np.zeros(len(values), dtype=np.int64)
    got = x.groupby(groups).cumsum(skipna=False).tolist()
    want = np.cumsum(values).tolist()
    print(f"{values}: groupby().cumsum() {got} | Series.cumsum {x.cumsum().tolist()} | "
          f"numpy {want} | groupby().sum() {x.groupby(groups).sum().tolist()}")
    wrong |= not np.array_equal(np.asarray(got), np.asarray(want), equal_nan=True)
print("still reproduces" if wrong else f"fixed in {pd.__version__}")
