"""scancheck: a conformance oracle and property-testing suite for parallel prefix scans.

The public API, importable without a GPU (kernels load CuPy only when launched):

* :func:`exact_scan` — the exact answer, rounded once;
* :func:`classify` — per-output verdict: exact, within the rounding bound, or beyond it;
* :func:`check_laws` — monoid laws of any operator, with the smallest counterexamples;
* :data:`VARIANTS` and :func:`scan` — the reference kernels and their launcher;
* :func:`check` — conformance of any scan implementation (a :class:`Target`).
"""

from .conformance import ConformanceReport, check, check_isolated
from .errors import ErrorReport, Verdict, classify
from .exact import exact_scan
from .kernels import VARIANTS, LaunchError, Variant, scan
from .laws import check_laws
from .operators import OPERATORS, Operator, get_operator
from .targets import Target, TargetSpec

__version__ = "0.1.0"
__all__ = [
    "OPERATORS", "VARIANTS", "ConformanceReport", "ErrorReport", "LaunchError", "Operator",
    "Target", "TargetSpec", "Variant", "Verdict", "check", "check_isolated", "check_laws",
    "classify", "exact_scan", "get_operator", "scan",
]
