"""The ``scancheck`` command line: ``main`` (the parser and the entry point), ``check``
(``scancheck check`` and ``check --controls``), ``commands`` (what each other command does
with its parsed arguments), ``spec_flags`` (one flag per
:class:`~scancheck.targets.spec.TargetSpec` field)."""
