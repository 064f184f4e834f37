"""The reference scans: each variant's schedule, its CPU model and its CUDA kernel.

``network`` (a schedule as a network of combines), ``models`` (the network each variant
performs), ``registry`` (one row per variant: source, entries, launch shapes, model),
``launch`` (validate, compile once, run); ``generic_scans`` (the same networks in NumPy over
tuples of arrays under any combine).  Stands on :mod:`scancheck.core`.
"""

from ..core.cuda import LaunchError
from .launch import compiled_kernels, plan, scan
from .registry import KERNEL_OPERATORS, VARIANTS, Variant, get_variant, instantiations

__all__ = ["KERNEL_OPERATORS", "VARIANTS", "LaunchError", "Variant", "compiled_kernels",
           "get_variant", "instantiations", "plan", "scan"]
