"""The element dtypes scancheck knows: which ones the kernels, the oracle and targets take,
their significands, their CUDA spellings, and what a subnormal of each is."""

from __future__ import annotations

from typing import Any

import numpy as np

from .arrays import as_dtype, dtype_name

#: The dtypes the reference kernels are instantiated for, and what a target declares unless
#: it says otherwise.
KERNEL_DTYPES: tuple[str, ...] = ("float32", "float64", "int32", "int64")
FLOAT_DTYPES: tuple[str, ...] = ("float32", "float64", "float16", "bfloat16")
INT_DTYPES: tuple[str, ...] = ("int32", "int64", "int8", "int16", "uint8", "uint16", "uint32",
                               "uint64")
#: Every numeric element dtype: what every operator of numbers takes, the oracle, the bounds
#: and the properties.
DTYPES: tuple[str, ...] = (*KERNEL_DTYPES, "float16", "bfloat16", *INT_DTYPES[2:])
#: Every dtype a target may take: the numeric ones and bool.  A max or min scan of booleans
#: (a running or, a running and) is one in bool; a sum or product of booleans is scanned in
#: the integer type the target promotes bool to (in bool, + would be a logical or).
INPUT_DTYPES: tuple[str, ...] = (*DTYPES, "bool")
#: Types whose pair elements (value, index) hold any value of a narrower type and any
#: index below 2**53 exactly: the argmax and argmin monoids are evaluated in them.
ARG_DTYPES: tuple[str, ...] = ("float64", "int64")
#: Significand bits p of each float dtype, the implicit bit included: its unit roundoff is
#: 2**-p, and sums of multiples of 2**e stay exact while they stay below 2**(p+e).
SIGNIFICAND_BITS: dict[str, int] = {"float32": 24, "float64": 53, "float16": 11, "bfloat16": 8}

#: C++ spelling of each element dtype; the same table drives the CUDA instantiations.
CUDA_SCALAR: dict[str, str] = {
    "float32": "float",
    "float64": "double",
    "int32": "int",
    "int64": "long long",
    "float16": "__half",
    "bfloat16": "__nv_bfloat16",
    "int8": "signed char",
    "int16": "short",
    "uint8": "unsigned char",
    "uint16": "unsigned short",
    "uint32": "unsigned int",
    "uint64": "unsigned long long",
    "bool": "bool",
}


def is_float(dtype: Any) -> bool:
    """Whether ``dtype`` is one of :data:`FLOAT_DTYPES` (bfloat16's NumPy kind is 'V')."""
    return dtype_name(dtype) in SIGNIFICAND_BITS


def finfo(dtype: Any) -> Any:
    """``numpy.finfo`` for every float dtype, bfloat16 included."""
    dt = as_dtype(dtype)
    if dtype_name(dt) == "bfloat16":
        import ml_dtypes

        return ml_dtypes.finfo(dt)
    return np.finfo(dt)


def subnormal(x: np.ndarray) -> np.ndarray:
    """Per element of ``x``: True where it is a nonzero float below the smallest normal number
    of its dtype in magnitude (never for integers, NaN or infinities)."""
    if not is_float(x.dtype):
        return np.zeros(np.shape(x), dtype=bool)
    a = np.abs(np.asarray(x, dtype=np.float64))
    with np.errstate(invalid="ignore"):
        return (a > 0) & (a < float(finfo(x.dtype).smallest_normal))


def read_as_zero(x: np.ndarray) -> np.ndarray:
    """``x`` with each subnormal replaced by a zero of its sign, as flush-to-zero hardware
    reads it (DAZ); other values unchanged, bit for bit."""
    tiny = subnormal(x)
    if not tiny.any():
        return x
    return np.where(tiny, np.copysign(x.dtype.type(0), x), x).astype(x.dtype)
