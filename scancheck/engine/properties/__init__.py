"""The conformance properties, one row each (:data:`TABLE`), and how a failing case is
attributed to a cause.  Each family of checks is a module of this package: ``values``,
``determinism``, ``recurrence``, ``own_rules`` (products, log-sum-exp, indices), ``rows``;
``running`` calls the target and compares, ``subnormals`` tells flushing apart, ``base``
holds the row and the failure, ``summaries`` what a passing target's floats look like.

* ``integers exact`` -- integer scans equal the exact answer (two's-complement wrap), or
  under overflow='raise' raise exactly where some prefix overflows (``overflow``);
* ``certified exact`` -- where every summation order is exact (:func:`~scancheck.oracle.bounds.certified`),
  float outputs equal the exact sum: no bound needed, so a carry kept in 16 bits shows
  although its error stays inside the any-order bound;
* ``floats within bound`` -- float errors within the rounding bound of any summation order
  (depth k-1 for the k-th prefix), infinities only where some order may overflow; max and
  min exact, with the zero order and NaN rule their spec declares;
* ``nan and inf`` -- NaN and infinities propagate as IEEE arithmetic says (for products and
  log-sum-exp by their own judges, on the data holding specials, which their value
  properties do not draw: a NaN bug and a value bug in one scan are two findings);
* ``deterministic`` -- the same bits on every run of one input, for every operator (a
  segmented target's right runs are compared in ``segments``);
* ``recurrence`` -- the (a, b) pair scan solves y_n = a_n*y_{n-1} + b_n;
* ``rows`` -- every row of an N-D input, any axis and layout, by the criteria of its
  operator's 1-D properties (bounds, exact answers, indices);
* ``products within bound`` -- cumprod within gamma(k-1) of the exact product where no range
  leaves the normal numbers, and IEEE's signs, zeros, infinities and NaN (:mod:`scancheck.oracle.products`);
* ``logsumexp within bound`` -- logcumsumexp within its combine-tree bound, specials exact
  (:mod:`scancheck.oracle.logsumexp`);
* ``indices`` -- cummax and cummin return the last position of each running extreme;
* ``segments`` -- a segmented scan (offsets, flags, keys or groups), every segment by the
  criteria of its operator's 1-D properties against its own exact scan, the seams drawn
  on purpose (:mod:`scancheck.engine.segments`); it alone checks a segmented target.
* ``operator laws``, ``monoid scan`` -- a user's monoid over tuples of arrays is one, and the
  target's scan of it is exact; ``probe monoids`` -- a target that takes the combine is
  exact under scancheck's non-commutative probe monoids (:mod:`.monoids`), forward or in
  its declared reverse convention.

Subnormals: a target's spec keeps them (IEEE) or declares the float dtypes whose subnormals
read as zero (``subnormals='flush'``), and each operator's ``flush`` column
(:data:`~scancheck.core.rules.FLUSH_RULES`) says what that allows: rounding operators may
flush, selecting ones (max, min, indices) must.  A failure that the other rule explains is
named as such ("subnormals read as zero", "subnormals kept"), with the subnormal that shows it.

A failing float case is a logic error if the target is also wrong on ``steps`` data of the
same size, where every sum of adjacent elements lies in [-3, 3] so that any scan that adds
adjacent ranges is exact in 3 bits; otherwise the precision was lost, and the error says
how many significand bits the target behaves like.  A NaN/inf failure is a logic error if
the same input with its NaNs and infinities replaced by 1 is wrong too; runs whose bits
differ are a logic error if one of them is wrong.
"""

from __future__ import annotations

from ...core.dtypes import DTYPES, FLOAT_DTYPES, INPUT_DTYPES, INT_DTYPES
from ...core.monoids import PROBES
from ...targets.spec import TargetSpec, monoid_of, over_tuples
from ...targets.target import Target
from ..cases import Case
from .base import Failure, Property, Untold
from .determinism import determinism_check
from .monoids import DECLARED, laws_check, monoid_cap, monoid_check, not_judged, probes_check
from .overflow import integers_checked
from .own_rules import indices_check, logsumexp_check, own_specials_check, products_check
from .recurrence import recurrence_check
from .rows import rows_check
from .segments import segments_check
from .summaries import (
    ACCUMULATION_KEY,
    ACCUMULATION_PROBE,
    Accumulation,
    AccumulationFound,
    accumulation_precision,
    bound_summary,
    float_summary,
    passing_probes,
)
from .values import bound_failure, certificate_failure, float_check, specials_check

__all__ = ["ACCUMULATION_KEY", "ACCUMULATION_PROBE", "MONOID_PROPERTIES", "ORDERED", "PROPERTIES",
           "TABLE", "Accumulation", "AccumulationFound", "Failure", "Property", "Untold",
           "accumulation_precision", "applies",
           "bound_summary", "float_summary", "passing_probes"]


ORDERED = ("add", "max", "min")


def _specials_by_op(target: Target, case: Case) -> Failure | None:
    """``nan and inf`` by the operator's judge: products and log-sum-exp have their own
    (a zero times an infinity, -inf as the identity), the others IEEE's sum, max and min."""
    if target.spec.op in ("mul", "logaddexp"):
        return own_specials_check(target, case)
    return specials_check(target, case)


TABLE: dict[str, Property] = {p.name: p for p in (
    # Integer products on odd factors too: even ones wrap to 0 and stay there, where a scan
    # that writes zeros agrees.
    Property("integers exact", integers_checked, (*INT_DTYPES, "bool"),
             ("integers", "uniform", "steps"), (*ORDERED, "mul"),
             by_op=(("mul", ("odd", "uniform", "steps")),)),
    Property("certified exact", float_check(certificate_failure), FLOAT_DTYPES,
             ("dyadic", "integers"), ("add",)),
    Property("floats within bound", float_check(bound_failure), FLOAT_DTYPES,
             ("integers", "uniform", "wide", "cancellation", "dyadic", "overflow", "zeros",
              "subnormal", "roundoff"), ORDERED),
    Property("nan and inf", _specials_by_op, FLOAT_DTYPES, ("specials",),
             (*ORDERED, "mul", "logaddexp")),
    # Any operator: a run compared with runs of the same input, bit for bit (products on
    # factors near 1, which neither vanish nor overflow over long inputs).
    Property("deterministic", determinism_check, FLOAT_DTYPES, ("uniform", "cancellation"),
             (*ORDERED, "mul", "logaddexp", "recurrence"),
             # Max and min vary only where equal zeros race: data holding both zeros.
             by_op=(("mul", ("factors",)), ("recurrence", ("uniform",)),
                    ("max", ("uniform", "zeros")), ("min", ("uniform", "zeros")))),
    Property("recurrence", recurrence_check, DTYPES, ("uniform", "subnormal"), ("recurrence",)),
    # A library's axis scan is often a kernel of its own: the 1-D data classes reach it too,
    # overflow and cancellation included (a saturating store in the N-D path alone passed).
    Property("rows", rows_check, INPUT_DTYPES, ("integers", "uniform", "dyadic", "specials",
                                           "factors", "steps", "subnormal", "overflow",
                                           "cancellation"),
             (*ORDERED, "mul", "logaddexp"), batched=True,
             by_op=(("mul", ("odd", "uniform", "dyadic", "specials", "factors", "steps",
                             "subnormal")),)),
    Property("products within bound", products_check, FLOAT_DTYPES, ("factors", "powers"),
             ("mul",)),
    Property("logsumexp within bound", logsumexp_check, FLOAT_DTYPES,
             ("uniform", "integers", "wide", "cancellation", "subnormal"), ("logaddexp",)),
    Property("indices", indices_check, INPUT_DTYPES,
             ("steps", "zeros", "specials", "integers", "subnormal"), ("max", "min")),
    Property("segments", segments_check, INPUT_DTYPES, ("integers", "uniform", "dyadic",
                                                        "specials", "factors", "steps",
                                                        "zeros", "subnormal", "cancellation"),
             (*ORDERED, "mul", "logaddexp")),
    # Over tuples of arrays: the distributions are the monoids that drive the target (the
    # dtype is the case's label only: each monoid's leaves have their own).
    # The laws are checked on n drawn triples, not on a scan: 4096 of them each case.  The
    # scans follow the budget's sizes, except a float monoid's (exact rationals).
    Property("operator laws", laws_check, ("int64",), ("drawn",), (), max_n=2**12),
    Property("monoid scan", monoid_check, ("int64",), ("drawn",), (), cap=monoid_cap),
    Property("probe monoids", probes_check, ("int64",), (*PROBES, DECLARED), (), cap=monoid_cap),
)}

#: The properties of targets over tuples of arrays, and which spec each applies to.
MONOID_PROPERTIES: dict[str, str] = {"operator laws": "declared", "monoid scan": "monoid",
                                     "probe monoids": "combine"}
#: The data of their cases: monoids, whose leaves have dtypes of their own (the case's dtype
#: is a label).
MONOID_DATA = frozenset(d for p in MONOID_PROPERTIES for d in TABLE[p].distributions)


PROPERTIES: tuple[str, ...] = tuple(TABLE)


def applies(prop: Property, spec: TargetSpec) -> str | None:
    """Why ``prop`` does not apply to a target with this spec (None if it does)."""
    if over_tuples(spec) or prop.name in MONOID_PROPERTIES:
        return _applies_over_tuples(prop, spec)
    if (prop.name == "segments") != (spec.segments is not None):
        return ("the target scans segments: 'segments' checks it" if spec.segments else
                "the target scans one sequence (its spec has no segments)")
    if spec.op not in prop.ops:
        return f"not applicable to operator {spec.op!r}"
    if not any(d in spec.dtypes for d in prop.dtypes):
        return f"no dtype of {prop.dtypes} is declared"
    if prop.batched and spec.axis is None:
        return "the target scans 1-D arrays (its spec has no axis)"
    if spec.indices and prop.name not in ("indices", "rows"):
        return "the target returns (values, indices): 'indices' and 'rows' check both"
    if prop.name == "indices" and not spec.indices:
        return "the target returns no indices (its spec has indices=False)"
    return None


def _applies_over_tuples(prop: Property, spec: TargetSpec) -> str | None:
    """Routed by the spec's form, never by an operator's name: a target over tuples of
    arrays gets only the properties of tuples, and no other target gets those."""
    if not over_tuples(spec):
        return "the target scans arrays of numbers (no monoid over tuples, no combine=True)"
    kind = MONOID_PROPERTIES.get(prop.name)
    if kind is None:
        return ("the target's elements are tuples of arrays: 'operator laws', 'monoid scan' "
                "and 'probe monoids' check it")
    if kind == "combine" and not spec.combine:
        return "the target does not take the combine (its spec has combine=False)"
    if kind == "monoid" and spec.combine:
        return "the target takes the combine: 'probe monoids' drives it (the declared monoid too)"
    monoid = monoid_of(spec)
    if kind == "declared" and monoid is None:
        return "no monoid is declared (op names a built-in operator): the probes' laws hold"
    if kind == "monoid":
        return not_judged(monoid)
    return None
