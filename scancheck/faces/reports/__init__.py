"""Pages written from checks: ``markdown`` (``scancheck check --report``: verdicts, a
reproducing snippet per failure, the environment), ``matrix`` (the library matrix),
``hunt`` (every built-in library target checked, one table, a reproducer per new finding)."""
