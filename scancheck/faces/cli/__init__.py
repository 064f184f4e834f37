"""The ``scancheck`` command line: ``main`` (the parser and the entry point), ``check``
(``scancheck check`` and ``check --controls``), ``commands`` (what each other command does
with its parsed arguments); its spec flags are :mod:`scancheck.faces.spec_flags`."""
