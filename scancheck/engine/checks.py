"""Every check a target can get, by name: the conformance properties
(:data:`PROPERTIES`, :mod:`scancheck.engine.properties`) and the checks past 2**31 and 2**32
elements (:data:`LARGE`: 1-D, batched, then segmented), and which of them apply to a spec.
"""

from __future__ import annotations

from ..targets.spec import TargetSpec
from .large import LARGE_SIZES
from .large_batches import BATCH_CHECKS
from .large_segments import SEGMENT_CHECKS
from .properties import PROPERTIES, TABLE, applies

__all__ = ["LARGE", "PROPERTIES", "not_applicable"]


#: The checks past 2**31 and 2**32 elements, by name: 1-D, batched, then segmented.
LARGE: tuple[str, ...] = (*LARGE_SIZES, *BATCH_CHECKS, *SEGMENT_CHECKS)



def not_applicable(spec: TargetSpec, prop: str) -> str | None:
    """Why ``prop`` checks nothing of a target with ``spec`` (its operator, dtypes, axis or
    indices rule it out), before any case is drawn; None where it applies."""
    return applies(TABLE[prop], spec) if prop in TABLE else None
