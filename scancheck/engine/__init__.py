"""The checking engine: targets, the cases drawn for them, the properties and the verdicts.

``spec`` and ``targets`` (what a target declares, how it is called), ``resolve`` (names to
targets: the built-in ones through the tables registered in ``builtin_tables``, scancheck's
kernels through ``kernel_targets``; the libraries' own are in :mod:`scancheck.adapters`),
``strategies``, ``cases`` and ``layouts`` (inputs, sizes, N-D views), ``properties`` (each
conformance property and how a failure is attributed to a cause, ``diagnosis``),
``conformance`` (a report per target), ``isolation`` and ``sanitizer`` (child processes,
compute-sanitizer), ``large`` (past 2**31 and 2**32 elements).  Stands on the oracle, the
kernels and the core; knows no library by name.
"""
