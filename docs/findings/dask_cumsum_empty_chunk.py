"""dask.array.cumsum and cumprod (method="sequential", the default) along an axis that holds a
zero-size chunk before others: a ValueError, or -- where the next chunk holds one element -- a
result shorter than the array's own shape, silently (plain dask).  The carry into each chunk
is the last element of the previous chunk's scan, taken as a slice ``[-1:]``: an empty chunk
gives an empty carry, which does not broadcast against the next chunk or broadcasts it away.
Zero-size chunks are what boolean indexing leaves (``x[x > 0].compute_chunk_sizes()``).
method="blelloch" and NumPy give the scan.  Prints each and then "still reproduces" or
"fixed in <dask version>"."""

import dask
import dask.array as da
import numpy as np

print("dask", dask.__version__, "numpy", np.__version__)
wrong = False


def attempt(label, make, want):
    """Compute ``make()`` and compare it with ``want``; True where it is not the scan."""
    try:
        got = make().compute(scheduler="synchronous")
    except ValueError as exc:
        print(f"{label}: raised ValueError: {exc}")
        return True
    right = got.shape == want.shape and np.array_equal(got, want)
    print(f"{label}: shape {got.shape} {got.tolist()}" + ("" if right else
          f" | numpy shape {want.shape} {want.tolist()}"))
    return not right


x = np.arange(1.0, 6.0)
for chunks in ((3, 0, 1, 1), (3, 0, 2), (0, 5), (5, 0)):
    for name in ("cumsum", "cumprod"):
        for method in ("sequential", "blelloch"):
            wrong |= attempt(f"da.{name}(chunks={chunks}, method={method!r})",
                             lambda: getattr(da, name)(da.from_array(x, chunks=(chunks,)), axis=0,
                                                       method=method), getattr(np, name)(x))

# Where zero-size chunks come from: a boolean selection whose middle block selects nothing.
y = da.from_array(np.array([1.0, 2.0, -1.0, -2.0, 3.0, 4.0]), chunks=2)
z = y[y > 0].compute_chunk_sizes()
print("y[y > 0].compute_chunk_sizes().chunks:", z.chunks)
wrong |= attempt("da.cumsum(y[y > 0], axis=0)", lambda: da.cumsum(z, axis=0),
                 np.array([1.0, 3.0, 6.0, 10.0]))
print("still reproduces" if wrong else f"fixed in {dask.__version__}")
