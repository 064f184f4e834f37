"""How each built-in library target is called without scancheck: the imports, and the plain
library expression that scans ``x`` (a NumPy array; ``AXIS`` stands for the axis of an N-D
case, ``x[0]`` for the initial value of a scan that takes one, the rest its input), as the
report's reproducer prints it (:mod:`scancheck.report`).  Each expression computes, bit for
bit, what the target's adapter in :mod:`scancheck.engine.library` hands back
(``tests/test_report.py`` runs them where the library is installed).
"""

from __future__ import annotations

_TORCH_DTYPE = "dtype=torch.from_numpy(x[:0].copy()).dtype"
_JAX = "import jax\nimport jax.numpy as jnp\n"
_X64 = "jax.config.update('jax_enable_x64', True)\n"
_IRREGULAR = ("import dask.array as da\n\n\ndef irregular(size, sizes=(1, 7, 64, 100, 3, 33)):\n"
              "    out = []\n    while sum(out) < size:\n"
              "        out.append(min(sizes[len(out) % len(sizes)], size - sum(out)))\n"
              "    return tuple(out) or (0,)\n\n\n")


def _torch(name: str, cuda: bool, keep: bool = True) -> tuple[str, str]:
    t = "torch.from_numpy(x.copy())" + (".cuda()" if cuda else "")
    back = ".cpu().numpy()" if cuda else ".numpy()"
    if name in ("cummax", "cummin"):
        return "import torch\n", f"tuple(v{back} for v in torch.{name}({t}, AXIS))"
    dtype = f", {_TORCH_DTYPE}" if keep and name != "logcumsumexp" else ""
    return "import torch\n", f"torch.{name}({t}, AXIS{dtype}){back}"


def _calls() -> dict[str, tuple[str, str]]:
    calls: dict[str, tuple[str, str]] = {
        "numpy.cumsum": ("", "np.cumsum(x, axis=AXIS, dtype=x.dtype)"),
        "numpy.cumprod": ("", "np.cumprod(x, axis=AXIS, dtype=x.dtype)"),
        "numpy.cumsum (default dtype)": ("", "np.cumsum(x, axis=AXIS)"),
        "numpy.cumprod (default dtype)": ("", "np.cumprod(x, axis=AXIS)"),
        "numpy.maximum.accumulate": ("", "np.maximum.accumulate(x, AXIS)"),
        "numpy.minimum.accumulate": ("", "np.minimum.accumulate(x, AXIS)"),
        "numpy.logaddexp.accumulate": ("", "np.logaddexp.accumulate(x, AXIS)"),
        "cupy.cumsum (CUB)": ("import cupy as cp\n",
                              "cp.cumsum(cp.asarray(x), dtype=x.dtype).get()  # CuPy's CUB path"),
        "cupy.cumsum (no CUB)": ("import cupy as cp\nfrom cupy._core import _accelerator\n"
                                 "_accelerator.set_routine_accelerators([])\n",
                                 "cp.cumsum(cp.asarray(x), axis=None if x.ndim == 1 else AXIS, "
                                 "dtype=x.dtype).get()"),
        "cupy.cumsum (default dtype)": ("import cupy as cp\nfrom cupy._core import _accelerator\n"
                                        "_accelerator.set_routine_accelerators([])\n",
                                        "cp.cumsum(cp.asarray(x), axis=None if x.ndim == 1 "
                                        "else AXIS).get()"),
        "cupy.cumprod": ("import cupy as cp\n", "cp.cumprod(cp.asarray(x), axis=None if "
                         "x.ndim == 1 else AXIS, dtype=x.dtype).get()"),
        "jax.numpy.cumsum": (_JAX, "np.asarray(jnp.cumsum(jnp.asarray(x), axis=AXIS, "
                             "dtype=x.dtype))"),
        "jax.numpy.cumprod": (_JAX, "np.asarray(jnp.cumprod(jnp.asarray(x), axis=AXIS, "
                              "dtype=x.dtype))"),
        "jax.numpy.cumsum (default dtype)": (_JAX, "np.asarray(jnp.cumsum(jnp.asarray(x), "
                                             "axis=AXIS))"),
        "jax.lax.associative_scan": (_JAX, "np.asarray(jax.lax.associative_scan(jnp.add, "
                                     "jnp.asarray(x)))"),
        "jax.lax.scan (add, initial)": (_JAX, "np.asarray(jax.lax.scan(lambda c, v: (c + v, c), "
                                        "jnp.asarray(x[0]), jnp.asarray(x[1:]))[1])"),
        "jax.lax.scan (mul, initial)": (_JAX, "np.asarray(jax.lax.scan(lambda c, v: (c * v, c), "
                                        "jnp.asarray(x[0]), jnp.asarray(x[1:]))[1])"),
        "itertools.accumulate(initial=)": (
            "import itertools\nimport operator\n",
            "np.fromiter(itertools.accumulate(x[1:], operator.add, initial=x[0]), x.dtype, "
            "x.shape[0])[:-1]"),
        "itertools.accumulate(operator.mul, initial=)": (
            "import itertools\nimport operator\n",
            "np.fromiter(itertools.accumulate(x[1:], operator.mul, initial=x[0]), x.dtype, "
            "x.shape[0])[:-1]"),
        "pandas DataFrame.cumsum(axis=)": ("import pandas as pd\n",
                                           "pd.DataFrame(x).cumsum(axis=AXIS).to_numpy()"),
    }
    for name in ("jax.numpy.cumsum", "jax.numpy.cumprod", "jax.lax.associative_scan"):
        imports, call = calls[name]
        calls[f"{name} (x64)"] = (imports + _X64, call)
    for device, cuda in (("CPU", False), ("CUDA", True)):
        for name in ("cumsum", "cumprod", "logcumsumexp", "cummax", "cummin"):
            calls[f"torch.{name} ({device})"] = _torch(name, cuda)
        calls[f"torch.cumsum ({device}, default dtype)"] = _torch("cumsum", cuda, keep=False)
    calls["torch.cumprod (CPU, default dtype)"] = _torch("cumprod", False, keep=False)
    for chunks in (64, 1000, "irregular"):
        for method in ("sequential", "blelloch"):
            cut = "tuple(irregular(d) for d in x.shape)" if chunks == "irregular" else chunks
            calls[f"dask.array.cumsum (chunks={chunks}, method={method})"] = (
                _IRREGULAR if chunks == "irregular" else "import dask.array as da\n",
                f"da.cumsum(da.from_array(x, chunks={cut}), axis=AXIS, dtype=x.dtype, "
                f"method={method!r}).compute(scheduler='synchronous')")
    for method in ("cumsum", "cumprod", "cummax", "cummin"):
        calls[f"pandas Series.{method}()"] = ("import pandas as pd\n",
                                              f"pd.Series(x).{method}().to_numpy()")
    for method in ("cum_sum", "cum_prod", "cum_max", "cum_min"):
        calls[f"polars Series.{method}()"] = ("import polars as pl\n",
                                              f"pl.Series(x).{method}().to_numpy()")
    for function in ("cumulative_sum", "cumulative_sum_checked", "cumulative_prod",
                     "cumulative_max", "cumulative_min"):
        calls[f"pyarrow.compute.{function}"] = (
            "import pyarrow as pa\nimport pyarrow.compute as pc\n",
            f"pc.{function}(pa.array(x)).to_numpy(zero_copy_only=False)")
    for name in ("cumsum", "cumprod"):
        calls[f"numba njit(np.{name})"] = ("import numba\n",
                                           f"numba.njit(lambda v: np.{name}(v))(x)")
    return calls


#: Built-in library target name -> (imports, expression on ``x``).
LIBRARY_CALLS: dict[str, tuple[str, str]] = _calls()
