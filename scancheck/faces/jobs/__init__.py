"""Long jobs the command line starts: ``verify`` (every reference variant), ``bench``
(bandwidth and oracle throughput), ``precision`` and ``practical`` (seed 004's float
"bug", reproduced and explained), ``feedback`` (how fast a check and the suites answer),
``gpusuite`` (the GPU suite and the benchmarks in one call, ``python -m scancheck.gpusuite``)."""
