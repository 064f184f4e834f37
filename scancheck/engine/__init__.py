"""The checking engine: the cases drawn for a target, the properties and the verdicts.

``strategies``, ``cases`` and ``layouts`` (inputs, sizes, N-D views), ``properties`` (each
conformance property and how a failure is attributed to a cause, ``diagnosis``),
``conformance`` (a report per target), ``large`` (past 2**31 and 2**32 elements).  Stands
on the targets, the oracle, the kernels and the core; knows no library by name.
"""
