"""Targets checked in child processes, so that a fault or a hang is a verdict and the
session goes on: ``parent`` (:func:`~scancheck.isolation.parent.check_isolated`: the
children planned, started, watched and their reports gathered), ``child`` (what each child
runs), ``zygote`` (children forked from a process that has loaded the engine already),
``sanitizer`` (compute-sanitizer runs).  Stands on the engine.
"""
