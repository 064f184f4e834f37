"""The ``scancheck`` command line: ``main`` (the parser and the entry point), ``commands``
(what each command does with its parsed arguments), ``spec_flags`` (one flag per
:class:`~scancheck.targets.spec.TargetSpec` field)."""
