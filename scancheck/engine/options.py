"""A check's settings as one typed value, the plan of one run of its properties, and their
one JSON form.

:class:`CheckOptions` is what the command line, the pytest plugin and the Python API
(:func:`scancheck.check`, :func:`scancheck.check_isolated`) build and an isolated check hands
each of its child processes; :class:`Plan` is what one run of the property loop
(:func:`scancheck.engine.conformance.run_plan`) checks, made once by whoever plans the check
(the parent of an isolated one) and handed on.  Each goes to JSON and back by its
:class:`Schema` (:data:`OPTIONS`, :data:`PLAN`, :data:`BUDGET`), field by field: a field left
out takes its default, one not known or of the wrong kind is a ValueError naming it.

This module imports nothing heavy: a child process that only resolves its target reads its
options without loading the engine's search.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from ..core.counts import check_flag, is_count

if TYPE_CHECKING:
    from ..targets.spec import TargetSpec
    from .cases import Budget

#: The compute-sanitizer tools a check may run its target under.
SANITIZER_TOOLS = ("racecheck", "synccheck", "memcheck", "initcheck")
#: The least a property may search when a check's time is shared out (its ladder's first
#: rungs run whatever is left).
LEAST_SEARCH = 0.25


def _budget(**fields_: Any) -> Budget:
    from .cases import Budget

    return Budget(**fields_)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _frozen(v: Any) -> Any:
    from ..targets.spec import frozen

    return frozen(v)


def _names(v: Any, what: str) -> tuple[str, ...]:
    if isinstance(v, str) or not isinstance(v, list | tuple) or not all(
            isinstance(e, str) for e in v):
        raise ValueError(f"{what}={v!r} must be a tuple of names")
    return tuple(v)


@dataclass(frozen=True)
class CheckOptions:
    """Everything a check of one target is told: the same value whether the command line,
    the pytest plugin or a program builds it, in this process and in each child of an
    isolated check.  The fields are checked as it is made (a ValueError naming the field and
    what is allowed); the names of the properties where a check starts."""

    #: The conformance properties (and checks past 2**31, by name) to run; None: every one.
    properties: tuple[str, ...] | None = None
    #: The checks past 2**31 and 2**32 elements: True, False, or None for GPU targets.
    large: bool | None = None
    #: What each property's search may spend (None as given: ``Budget()``).
    budget: Budget = field(default_factory=_budget)
    #: Seconds the whole check may take from its start, shared among the properties still
    #: to run (at least :data:`LEAST_SEARCH` each); None: each its budget.
    seconds: float | None = None
    #: Seconds one case may run before it is a hang (isolated checks).
    timeout: float = 60.0
    #: compute-sanitizer tools to run the target under (isolated checks); None: every one
    #: of a GPU target's, where compute-sanitizer is installed.
    sanitize: tuple[str, ...] | None = None
    #: Child processes running at once (isolated checks); None: half the cores.
    workers: int | None = None
    #: The spec of a ``.cu`` file or an import path, replacing the one it declares.
    spec: TargetSpec | None = None
    #: TargetSpec fields replacing just those of the target's own spec, as (field, value)
    #: pairs (a mapping is taken too).
    overrides: tuple[tuple[str, Any], ...] = ()
    #: The one GPU (an id CUDA_VISIBLE_DEVICES takes) the check's children may see.
    gpu: str | None = None
    #: How the caller's user sets :attr:`timeout`, as a verdict that suggests another names
    #: it (the pytest plugin's ``--scan-timeout``).
    timeout_flag: str = "--timeout"

    def __post_init__(self) -> None:
        from .cases import Budget

        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        if self.properties is not None:
            put("properties", _names(self.properties, "properties"))
        if self.large is not None and not isinstance(self.large, bool):
            raise ValueError(f"large={self.large!r} must be True, False or None")
        if self.budget is None:
            put("budget", Budget())
        elif not isinstance(self.budget, Budget):
            raise ValueError(f"budget={self.budget!r} must be a Budget")
        if self.seconds is not None and not (_is_number(self.seconds) and math.isfinite(
                self.seconds) and self.seconds > 0):
            raise ValueError(f"seconds={self.seconds!r} must be positive")
        if not (_is_number(self.timeout) and self.timeout > 0):
            raise ValueError(f"timeout={self.timeout!r} seconds must be positive")
        if not (isinstance(self.timeout_flag, str) and self.timeout_flag):
            raise ValueError(f"timeout_flag={self.timeout_flag!r} must be a flag's name, "
                             f"such as '--timeout'")
        if self.sanitize is not None:
            put("sanitize", _names(self.sanitize, "sanitize"))
            for tool in self.sanitize:
                if tool not in SANITIZER_TOOLS:
                    raise ValueError(f"sanitize={tool!r} is unknown; allowed: "
                                     f"{', '.join(SANITIZER_TOOLS)}")
        if self.workers is not None and not is_count(self.workers):
            raise ValueError(f"workers={self.workers!r} must be a positive integer")
        if self.spec is not None:
            from ..targets.spec import TargetSpec

            if not isinstance(self.spec, TargetSpec):
                raise ValueError(f"spec={self.spec!r} must be a TargetSpec")
        pairs = self.overrides.items() if isinstance(self.overrides, Mapping) else (
            self.overrides or ())
        try:
            put("overrides", tuple((k, _frozen(v)) for k, v in pairs))
        except (TypeError, ValueError):
            raise ValueError(f"overrides={self.overrides!r} must map TargetSpec fields to "
                             f"values") from None
        if not all(isinstance(k, str) for k, _ in self.overrides):
            raise ValueError(f"overrides={self.overrides!r} must map TargetSpec fields to values")
        if self.gpu is not None and not isinstance(self.gpu, str):
            raise ValueError(f"gpu={self.gpu!r} must be a GPU id as CUDA_VISIBLE_DEVICES "
                             f"takes it, a string")

    def with_settings(self, **settings: Any) -> CheckOptions:
        """These options with the fields ``settings`` names replaced (a TypeError naming one
        that is no field)."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(settings) - known)
        if unknown:
            raise TypeError(f"{', '.join(unknown)} is no setting of a check; allowed: "
                            f"{', '.join(sorted(known))}")
        return replace(self, **settings) if settings else self

    def checked_properties(self) -> tuple[str, ...]:
        """The properties these options name (every one where None), a ValueError naming
        one that is unknown."""
        from .checks import LARGE, PROPERTIES

        if self.properties is None:
            return PROPERTIES
        for p in self.properties:
            if p not in PROPERTIES and p not in LARGE:
                raise ValueError(f"property {p!r} is unknown; allowed: "
                                 f"{', '.join(PROPERTIES + LARGE)}")
        return self.properties

    def to_json(self) -> dict[str, Any]:
        """These options as JSON holds them (:data:`OPTIONS`)."""
        return OPTIONS.dump(self)

    @staticmethod
    def from_json(data: Any) -> CheckOptions:
        """Options from their JSON form (:meth:`to_json`); a ValueError naming a field that
        is unknown or malformed."""
        return OPTIONS.load(data)


@dataclass(frozen=True)
class Plan:
    """The properties one run of the property loop checks, in order: each within
    ``budget`` (whose ``max_n`` is the largest n searched) and, where ``until`` (a
    ``time.time()``) is given, within an even share of the time left to it when it starts
    (at least :data:`LEAST_SEARCH`); ``empty``: whether n = 0 is tried."""

    properties: tuple[str, ...]
    budget: Budget = field(default_factory=_budget)
    until: float | None = None
    empty: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "properties", _names(self.properties, "properties"))
        if self.until is not None and not (_is_number(self.until) and math.isfinite(self.until)):
            raise ValueError(f"until={self.until!r} must be a time.time() or None")
        check_flag("empty", self.empty)

    def share(self, k: int, now: float) -> Budget:
        """The budget of the ``k``-th property, starting at ``now``."""
        if self.until is None:
            return self.budget
        left = (self.until - now) / (len(self.properties) - k)
        return replace(self.budget, seconds=max(LEAST_SEARCH, min(self.budget.seconds, left)))

    def to_json(self) -> dict[str, Any]:
        return PLAN.dump(self)

    @staticmethod
    def from_json(data: Any) -> Plan:
        return PLAN.load(data)


class Kind(NamedTuple):
    """How one field goes to JSON and back: ``load`` raises TypeError where the JSON value
    is not ``what``."""

    what: str
    load: Callable[[Any], Any]
    dump: Callable[[Any], Any] = lambda v: v


def _loader(test: Callable[[Any], bool]) -> Callable[[Any], Any]:
    def load(v: Any) -> Any:
        if not test(v):
            raise TypeError
        return v

    return load


def _list_of(test: Callable[[Any], bool], what: str) -> Kind:
    def load(v: Any) -> tuple:
        if not isinstance(v, list) or not all(test(e) for e in v):
            raise TypeError
        return tuple(v)

    return Kind(what, load, list)


def optional(kind: Kind) -> Kind:
    """``kind``, or null."""
    return Kind(f"{kind.what} or null", lambda v: None if v is None else kind.load(v),
                lambda v: None if v is None else kind.dump(v))


def _spec_json(spec: TargetSpec) -> dict[str, Any]:
    from ..targets.spec import spec_json

    return spec_json(spec)


def _spec_from_json(d: Any) -> TargetSpec:
    from ..targets.spec import spec_from_json

    return spec_from_json(d)


TEXT = Kind("a string", _loader(lambda v: isinstance(v, str)))
FLAG = Kind("true or false", _loader(lambda v: isinstance(v, bool)))
NUMBER = Kind("a number", _loader(_is_number))
INTEGER = Kind("an integer", _loader(lambda v: isinstance(v, int) and not isinstance(v, bool)))
NAMES = _list_of(lambda e: isinstance(e, str), "a list of strings")
SIZES = _list_of(lambda e: isinstance(e, int) and not isinstance(e, bool), "a list of integers")
SPEC = Kind("a TargetSpec's JSON object", _spec_from_json, _spec_json)
OVERRIDES = Kind("an object of TargetSpec fields", lambda v: tuple(
    (k, _frozen(e)) for k, e in _loader(lambda d: isinstance(d, dict))(v).items()), dict)


class Schema:
    """The JSON form of a dataclass: each field's :class:`Kind`, by name, and ``make``, which
    builds the value from the fields given (the others take their defaults)."""

    def __init__(self, name: str, make: Callable[..., Any], kinds: dict[str, Kind]) -> None:
        self.name, self.make, self.kinds = name, make, kinds

    def nested(self) -> Kind:
        """A field holding a value of this schema."""
        return Kind(f"a {self.name} object", self.load, self.dump)

    def dump(self, value: Any) -> dict[str, Any]:
        return {k: kind.dump(getattr(value, k)) for k, kind in self.kinds.items()}

    def load(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError(f"{self.name}: {data!r} is not a JSON object")
        unknown = sorted(set(data) - set(self.kinds))
        if unknown:
            raise ValueError(f"{self.name}: unknown field {', '.join(map(repr, unknown))}; "
                             f"allowed: {', '.join(self.kinds)}")
        given = {}
        for k, v in data.items():
            try:
                given[k] = self.kinds[k].load(v)
            except TypeError as exc:  # not the kind of value the field holds
                why = f" ({exc})" if str(exc) else ""
                raise ValueError(f"{self.name} field {k!r}: {v!r} is not "
                                 f"{self.kinds[k].what}{why}") from None
            except ValueError as exc:  # the right kind, a wrong value
                raise ValueError(f"{self.name} field {k!r}: {exc}") from None
        return self.make(**given)


BUDGET = Schema("Budget", _budget, {
    "seconds": NUMBER, "max_examples": INTEGER, "max_n": optional(INTEGER), "bounded": FLAG})
PLAN = Schema("Plan", Plan, {
    "properties": NAMES, "budget": BUDGET.nested(), "until": optional(NUMBER), "empty": FLAG})
OPTIONS = Schema("CheckOptions", CheckOptions, {
    "properties": optional(NAMES), "large": optional(FLAG), "budget": BUDGET.nested(),
    "seconds": optional(NUMBER), "timeout": NUMBER, "sanitize": optional(NAMES),
    "workers": optional(INTEGER), "spec": optional(SPEC), "overrides": OVERRIDES,
    "gpu": optional(TEXT), "timeout_flag": TEXT})
