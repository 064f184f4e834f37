"""The pytest plugin (``pytest --scan-target=TARGET``): ``hooks`` (its options and hooks; the
engine is loaded only once a target is named), ``conformance_suite`` (the tests it
collects, one per property), ``known_xfail`` (a known upstream bug as a strict xfail)."""
