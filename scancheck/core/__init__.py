"""The ground floor: the operator vocabulary and what every layer above shares.

``operators`` (each monoid: identity, exactness, NumPy, exact and CUDA forms), ``arrays``
(arrays of any library and their host copies), ``cuda`` (sources and NVRTC compilation),
``devices`` (which GPUs), ``database`` (where Hypothesis keeps examples), ``private``
(this user's private directories: the caches processes share), ``loading``
(objects by ``module:ATTR`` or ``file.py:ATTR``, and such names for objects).  Nothing here
imports from the floors above.
"""
