"""What a scan target is: what it declares it computes (``spec``, the contracts it may
declare in ``contracts``), how it is called (``target``: on copies of its input, any write
into it found), and how a name becomes one (``resolve``: the built-in names through the
tables registered in ``builtin_tables``, scancheck's kernels through ``kernel_targets``;
the libraries' own targets are in :mod:`scancheck.adapters`).  Stands on the kernels, the
oracle and the core; knows no library by name.
"""
