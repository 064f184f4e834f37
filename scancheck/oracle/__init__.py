"""The oracle: what the answer is, and how far from it rounding may take a scan.

``exact`` (exact prefix scans rounded once; ``exact_cpu`` and ``exact_device`` its fast
paths), ``bounds`` (rigorous rounding bounds and the verdict per output), ``laws`` (monoid
laws of any operator), ``products`` and ``logsumexp`` (the judges of cumprod and
logcumsumexp), ``explain`` (one computed scan judged: rounding or a bug, with evidence).
Stands on :mod:`scancheck.core` alone.
"""
