"""Built-in scans of the dataframe libraries on the CPU -- pandas, polars, pyarrow and dask
-- each with the contract its library documents (or, where it documents none,
the behaviour measured and stated), so that a check judges what the library promises:

- pandas ``Series.cum*()`` (skipna=True, the default): NaN at each NaN input, the others
  the scan of the rest (``nans='skip'``); int32 sums and products come back int64.
  ``DataFrame.cumsum(axis=)`` takes 2-D arrays only (``ndim=(2,)``).
- polars ``Series.cum_*()``: sums wrap in the input's integer type, float32 sums
  accumulate in float64; ``cum_max``/``cum_min`` leave NaN out (``nans='ignore'``, NaN
  for an all-NaN prefix); int32 products come back int64.
- pyarrow ``compute.cumulative_*``: sums wrap, ``cumulative_sum_checked`` raises
  ``ArrowInvalid`` exactly where a prefix overflows (``overflow='raise'``);
  ``cumulative_max``/``min`` leave NaN out and give the identity (-inf, +inf) for an all-NaN
  prefix (``nan_prefix='identity'``).
- pandas ``Series.groupby(labels).cum*(skipna=False)``: one scan per group (``segments=
  'groups'``).
- dask ``array.cumsum`` over several chunkings (zero-size chunks among those of one), each
  carry across chunks ``sequential`` or ``blelloch``: one scan split across chunks, the
  carries stitched.

Measured with pandas 3.1.1, polars 2.1.0 and pyarrow 26.0.1 (2026-11-26).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine.diagnosis import Cause
from ..targets.spec import TargetSpec
from .known import KnownBug, Symptom
from .rows import Row

_FLOATS_INTS = ("float32", "float64", "int32", "int64")
#: int32 sums and products come back as int64.
_WIDENED = (("int32", "int64"),)


def _pandas(method: str) -> Callable[[np.ndarray], np.ndarray]:
    def run(x: np.ndarray) -> np.ndarray:
        import pandas as pd

        return getattr(pd.Series(x), method)().to_numpy()

    return run


def _pandas_frame(x: np.ndarray, axis: int) -> np.ndarray:
    import pandas as pd

    # pandas names a frame's axes 0 and 1 alone, by design (pandas-dev/pandas#48802): a
    # negative one is turned into its number here, as numpy's caller means it.
    out = pd.DataFrame(x).cumsum(axis=axis % x.ndim).to_numpy()
    # An empty frame's cumsum along its empty axis comes back float64 whatever the input
    # (pandas 3.1.1: shape (0, 3) along axis 1, (3, 0) along either): no value took that
    # type, so the empty result is handed back in the input's, not judged as a promotion.
    return out if out.size else np.empty(x.shape, x.dtype)


def _polars(method: str) -> Callable[[np.ndarray], np.ndarray]:
    def run(x: np.ndarray) -> np.ndarray:
        import polars as pl

        return getattr(pl.Series(x), method)().to_numpy()

    return run


def _pyarrow(function: str) -> Callable[[np.ndarray], np.ndarray]:
    def run(x: np.ndarray) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        return getattr(pc, function)(pa.array(x)).to_numpy(zero_copy_only=False)

    return run


def pandas_groupby(method: str) -> Callable[[np.ndarray, Any], np.ndarray]:
    """pandas ``Series.groupby(labels).<method>(skipna=False)`` (cumsum, cumprod, cummax,
    cummin): NaNs propagate, as a scan's do."""
    def run(x: np.ndarray, labels: Any) -> np.ndarray:
        import pandas as pd

        return getattr(pd.Series(x).groupby(np.asarray(labels)), method)(skipna=False).to_numpy()

    return run


def dask_cumsum(chunks: Any, method: str) -> Callable[[np.ndarray, int], np.ndarray]:
    """``dask.array.cumsum`` of the array cut into ``chunks`` along every axis, with the
    carry across chunks ``method`` ("sequential" or "blelloch"), computed in this thread."""
    def run(x: np.ndarray, axis: int) -> np.ndarray:
        import dask.array as da

        cut = tuple(irregular(d, CYCLES[chunks]) for d in x.shape) if chunks in CYCLES else chunks
        return da.cumsum(da.from_array(x, chunks=cut), axis=axis, dtype=x.dtype,
                         method=method).compute(scheduler="synchronous")

    return run


#: Chunk sizes cycled through along each axis for chunks="irregular".
IRREGULAR = (1, 7, 64, 100, 3, 33)
#: The same with zero-size chunks among them, as boolean indexing leaves
#: (``x[x > 0].compute_chunk_sizes()``), one first so that a single element meets one.
WITH_EMPTY = (0, 1, 7, 0, 64, 3)
#: The cycled chunkings, by the name their rows give them.
CYCLES = {"irregular": IRREGULAR, "with empty": WITH_EMPTY}


def irregular(size: int, sizes: tuple[int, ...] = IRREGULAR) -> tuple[int, ...]:
    """Chunks of ``sizes`` in turn, the last cut to end at ``size``."""
    out: list[int] = []
    while sum(out) < size:
        out.append(min(sizes[len(out) % len(sizes)], size - sum(out)))
    return tuple(out) or (0,)


def _cycle_call(sizes: tuple[int, ...]) -> str:
    return ("import dask.array as da\n\n\n"
            f"def irregular(size, sizes={sizes!r}):\n"
            "    out = []\n    while sum(out) < size:\n"
            "        out.append(min(sizes[len(out) % len(sizes)], size - sum(out)))\n"
            "    return tuple(out) or (0,)\n\n\n")
_PANDAS, _POLARS = "import pandas as pd\n", "import polars as pl\n"
_PYARROW = "import pyarrow as pa\nimport pyarrow.compute as pc\n"


def _pandas_rows() -> list[Row]:
    out = []
    for method, op in (("cumsum", "add"), ("cumprod", "mul"), ("cummax", "max"),
                       ("cummin", "min")):
        widened = _WIDENED if op in ("add", "mul") else ()
        out.append(Row(f"pandas Series.{method}()", _pandas(method),
                       TargetSpec(op=op, dtypes=_FLOATS_INTS, nans="skip", promote=widened),
                       needs=("pandas",), call=(_PANDAS, f"pd.Series(x).{method}().to_numpy()"),
                       api=f"pandas Series.{method}"))
    out.append(Row("pandas DataFrame.cumsum(axis=)", _pandas_frame,
                   TargetSpec(dtypes=("float64", "int64"), nans="skip", axis="arg", ndim=(2,)),
                   needs=("pandas",), call=(_PANDAS, "pd.DataFrame(x).cumsum(axis=AXIS).to_numpy()"),
                   api="pandas DataFrame.cumsum"))
    # pandas 3.1 returns int64 for int32 sums and products that overflow int32, and int32
    # where they do not (measured 2026-11-25): a dtype that depends on the values, so int32
    # is declared for max and min alone.
    for method, op in (("cumsum", "add"), ("cumprod", "mul"), ("cummax", "max"),
                       ("cummin", "min")):
        dtypes = _FLOATS_INTS if op in ("max", "min") else ("float32", "float64", "int64")
        # The plain call takes the group labels as ``seg`` (the reproducer's name for them).
        out.append(Row(f"pandas groupby().{method}()", pandas_groupby(method),
                       TargetSpec(op=op, segments="groups", dtypes=dtypes), needs=("pandas",),
                       api=f"pandas SeriesGroupBy.{method}",
                       call=(_PANDAS, f"pd.Series(x).groupby(np.asarray(seg)).{method}("
                                      f"skipna=False).to_numpy()")))
    return out


def _polars_rows() -> list[Row]:
    out = []
    for method, op in (("cum_sum", "add"), ("cum_prod", "mul"), ("cum_max", "max"),
                       ("cum_min", "min")):
        if op == "add":
            spec = TargetSpec(dtypes=_FLOATS_INTS, accumulates=(("float32", "float64"),))
        elif op == "mul":
            spec = TargetSpec(op=op, dtypes=_FLOATS_INTS, promote=_WIDENED)
        else:
            spec = TargetSpec(op=op, dtypes=_FLOATS_INTS, nans="ignore")
        out.append(Row(f"polars Series.{method}()", _polars(method), spec, needs=("polars",),
                       call=(_POLARS, f"pl.Series(x).{method}().to_numpy()"),
                       api=f"polars Series.{method}"))
    return out


def _pyarrow_rows() -> list[Row]:
    return [Row(f"pyarrow.compute.{function}", _pyarrow(function), spec, needs=("pyarrow",),
                call=(_PYARROW, f"pc.{function}(pa.array(x)).to_numpy(zero_copy_only=False)"),
                api=f"pyarrow.compute.{function}") for function, spec in (
        ("cumulative_sum", TargetSpec(dtypes=_FLOATS_INTS)),
        ("cumulative_sum_checked", TargetSpec(dtypes=("int32", "int64"), overflow="raise")),
        ("cumulative_prod", TargetSpec(op="mul", dtypes=_FLOATS_INTS)),
        ("cumulative_max", TargetSpec(op="max", dtypes=_FLOATS_INTS, nans="ignore",
                                      nan_prefix="identity")),
        ("cumulative_min", TargetSpec(op="min", dtypes=_FLOATS_INTS, nans="ignore",
                                      nan_prefix="identity")))]


def _dask_rows() -> list[Row]:
    # Chunks of 64 reach the seams of a GPU tile; 1000 and irregular chunks those of no
    # power of two.  Many chunks are many tasks: the small ones are checked to fewer elements.
    out = []
    for chunks, cap in ((64, 2**14), (1000, 2**18), ("irregular", 2**13), ("with empty", 2**13)):
        for method in ("sequential", "blelloch"):
            cut = "tuple(irregular(d) for d in x.shape)" if chunks in CYCLES else chunks
            out.append(Row(
                f"dask.array.cumsum (chunks={chunks}, method={method})", dask_cumsum(chunks, method),
                TargetSpec(dtypes=_FLOATS_INTS, axis="arg", max_n=cap), needs=("dask",),
                call=(_cycle_call(CYCLES[chunks]) if chunks in CYCLES else "import dask.array as da\n",
                      f"da.cumsum(da.from_array(x, chunks={cut}), axis=AXIS, dtype=x.dtype, "
                      f"method={method!r}).compute(scheduler='synchronous')"),
                api="dask.array.cumsum", mode=(("chunks", str(chunks)), ("method", method))))
    return out


ROWS: tuple[Row, ...] = (*_pandas_rows(), *_polars_rows(), *_pyarrow_rows(), *_dask_rows())
#: The row whose carries cross zero-size chunks one after another (dask-cumsum-empty-chunk).
_DASK_EMPTY_SEQUENTIAL = "dask.array.cumsum (chunks=with empty, method=sequential)"

#: The dataframe libraries' bugs that their targets' checks meet or met (docs/findings.md).
KNOWN: tuple[KnownBug, ...] = (
    KnownBug("apache/arrow#51194", "https://github.com/apache/arrow/issues/51194",
             "cumulative_max and cumulative_min of floats start from the wrong value (the "
             "smallest positive normal, the largest finite)", "pyarrow", ("pyarrow",), "0",
             "26.0.0", ("pyarrow.compute.cumulative_max", "pyarrow.compute.cumulative_min"),
             (Symptom("floats within bound", Cause.LOGIC), Symptom("nan and inf", Cause.SPECIALS)),
             "closed: fixed by apache/arrow#51203",
             "docs/findings/pyarrow_cumulative_max_min_float_start.py"),
    KnownBug("pandas-groupby-cumsum-inf", None,
             "groupby().cumsum() turns an infinite running sum into NaN at the next value "
             "(groupby().sum() and Series.cumsum keep it)", "pandas", ("pandas",), "3.1.1", None,
             ("pandas groupby().cumsum()",), (Symptom("segments", Cause.SPECIALS),),
             "not reported as such: the group reductions' reports (pandas-dev/pandas#43292, "
             "#50367, #53606, #54161) were fixed for sum and mean; pandas-dev/pandas#44526, "
             "which changed group_cumsum too, was closed unmerged",
             "docs/findings/pandas_groupby_cumsum_inf.py"),
    KnownBug("pandas-groupby-cumsum-dtype", None,
             "groupby().cumsum() of int32 returns int32 or int64 depending on the values "
             "(declared around: the groupby targets take no int32 sums)", "pandas", ("pandas",),
             "3.1.1", None, (), (),
             "not reported as such: pandas-dev/pandas#57195 (closed) reports the same "
             "value-dependent dtype for groupby().sum() of masked Int8; pandas casts a grouped "
             "result back to the input's dtype where it fits, on purpose (pandas-dev/pandas#48059)",
             "docs/findings/pandas_groupby_cumsum_dtype.py"),
    KnownBug("dask-cumsum-empty-chunk", None,
             "dask.array.cumsum and cumprod (method='sequential', the default) across a "
             "zero-size chunk: a ValueError, or a result shorter than its own shape", "dask",
             ("dask",), "2024.12.1", None, (_DASK_EMPTY_SEQUENTIAL,),
             tuple(Symptom(prop, cause) for prop in ("integers exact", "certified exact",
                                                     "floats within bound", "nan and inf",
                                                     "deterministic", "rows")
                   for cause in (Cause.LOGIC, Cause.FAULT)),
             "not reported upstream", "docs/findings/dask_cumsum_empty_chunk.py"),
    KnownBug("dask-nancumsum-masked", None,
             "dask.array.nancumsum and nancumprod of a masked array: a chunk ending in a masked "
             "element masks every later output (the result depends on the chunking)", "dask",
             ("dask",), "2024.12.1", None, (), (), "not reported upstream",
             "docs/findings/dask_nancumsum_masked_chunks.py"),
)
