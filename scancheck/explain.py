"""Is it rounding or a bug?  :func:`explain` judges one computed scan against its input, with
evidence (:mod:`scancheck.oracle.explain`): exact, rounding, suspicious, or not rounding
(proven)."""

from .oracle.explain import (
    EXACT,
    PROVEN,
    ROUNDING,
    SUSPICIOUS,
    SUSPICIOUS_FACTOR,
    Explanation,
    explain,
)

__all__ = ["EXACT", "PROVEN", "ROUNDING", "SUSPICIOUS", "SUSPICIOUS_FACTOR", "Explanation",
           "explain"]
