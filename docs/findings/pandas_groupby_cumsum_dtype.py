"""pandas groupby().cumsum() of int32: the result's dtype depends on the values (plain pandas)."""

import numpy as np
import pandas as pd

print("pandas", pd.__version__)
small = pd.Series(np.array([1, 2, 3], dtype=np.int32))
big = pd.Series(np.array([2**31 - 1, 1], dtype=np.int32))
dtypes = set()
for name, x in (("no overflow", small), ("overflow", big)):
    r = x.groupby(np.zeros(len(x), dtype=np.int64)).cumsum()
    print(f"{name}: {r.dtype} {r.tolist()} | Series.cumsum: {x.cumsum().dtype} {x.cumsum().tolist()}")
    dtypes.add(r.dtype)
print("still reproduces" if len(dtypes) > 1 else f"fixed in {pd.__version__}")
