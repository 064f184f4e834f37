"""The checking engine: targets, the cases drawn for them, the properties and the verdicts.

``spec`` and ``targets`` (what a target declares, how it is called), ``library`` and
``resolve`` (built-in targets, names to targets), ``strategies``, ``cases`` and
``layouts`` (inputs, sizes, N-D views), ``properties`` (each conformance property and how
a failure is attributed to a cause, ``diagnosis``), ``conformance`` (a report per target),
``isolation`` and ``sanitizer`` (child processes, compute-sanitizer), ``large`` (past
2**31 and 2**32 elements).  Stands on the oracle, the kernels and the core.
"""
