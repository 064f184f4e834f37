"""dask.array.nancumsum and nancumprod of a masked array: a chunk that ends in a masked element
masks every later output, so the result depends on the chunking (plain dask and NumPy).
numpy.nancumsum (and numpy.ma.cumsum) mask the masked positions alone; dask's own cumsum and
cumprod carry the data under the mask across chunks, nancumsum and nancumprod carry the
masked element itself.  Prints each and then "still reproduces" or "fixed in <dask
version>"."""

import dask
import dask.array as da
import numpy as np

print("dask", dask.__version__, "numpy", np.__version__)
x = np.ma.masked_array([1.0, 2.0, 3.0, 4.0, 5.0], mask=[False, True, False, False, False])
wrong = False
for name in ("nancumsum", "nancumprod", "cumsum", "cumprod"):
    want = getattr(np, name)(x)
    for chunks in (5, 2, 1):
        for method in ("sequential", "blelloch"):
            got = getattr(da, name)(da.from_array(x, chunks=chunks, asarray=False), axis=0,
                                    method=method).compute(scheduler="synchronous")
            same = (np.array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))
                    and np.array_equal(got.compressed(), want.compressed()))
            print(f"da.{name}(chunks={chunks}, method={method!r}): {got.tolist()}"
                  + ("" if same else f" | numpy.{name}: {want.tolist()}"))
            wrong |= not same
print("still reproduces" if wrong else f"fixed in {dask.__version__}")
