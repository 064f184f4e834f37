"""What people run: ``cli`` (the ``scancheck`` command line and its commands), ``plugin``
(the pytest plugin and the conformance suite it collects), ``reports`` (the Markdown
report, the library matrix, the hunt's table), ``jobs`` (verify, bench, the precision
study, the seed's practical, the feedback timings, the GPU suite), ``spec_flags`` (one flag
per TargetSpec field, for the command line and the plugin's --scan-spec) and ``progress``
(live progress on long work).  Stands on every other floor; nothing below imports it.
"""
