"""What people run: ``cli`` (the ``scancheck`` command line and its commands), ``plugin``
(the pytest plugin and the conformance suite it collects), ``reports`` (the Markdown
report, the library matrix, the hunt's table), ``jobs`` (verify, bench, the precision
study, the seed's practical, the feedback timings, the GPU suite), and ``progress`` (live
progress on long work).  Stands on every other floor; nothing below imports it.
"""
