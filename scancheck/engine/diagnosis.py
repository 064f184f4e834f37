"""One root cause per verdict: the failing properties ranked, the rest explained or listed.

Every failure carries a :class:`Cause`, decided by the evidence of its own case (a float
error that data with tiny partial sums do not show is lost precision; a NaN missing from
an output is a logic error if the same input without its NaNs is wrong too).  The verdict
names the highest-ranked cause -- fault or hang > data race > contract differs (a documented
behaviour the spec does not declare) > logic error > precision lost
> NaN/inf semantics > non-determinism > index overflow > out of memory > writes into its
input -- with its smallest case.  Other failures of the same cause are its evidence; a
failure of another cause is listed beside it only where its own evidence shows that it does
not follow from the primary one.  A write into the input is its own evidence: every answer
is judged on the input as it was, so the write explains no other failure and none but a race
explains it.  Each distinct cause is one :class:`Finding`, primary first, with the
properties that show it and those it explains; a failure on the empty input is a finding of
its own, as is running out of memory: neither says anything about the sizes where the
target answers.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Cause(enum.IntEnum):
    """Why a scan is wrong, ranked: a lower value is the more fundamental cause."""

    #: A user's operator breaks a monoid law: no scan of it is judged.
    OPERATOR = -1  # ranks first, and is truthy as every cause is
    FAULT = 1  # the process died or hung, or touched memory it does not own
    RACE = 2
    # It computes a documented contract other than its spec's (a promotion, a NaN rule):
    # named before any logic error, with the flag that declares it.
    CONTRACT = 3
    LOGIC = 4
    PRECISION = 5
    SPECIALS = 6
    NONDETERMINISM = 7
    INDEX_OVERFLOW = 8
    RESOURCE = 9  # the target raised out of memory: no answer, and no evidence of a wrong one
    INPUT_WRITTEN = 10  # the target changed the array it was handed

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Cause.OPERATOR: "operator is no monoid",
    Cause.FAULT: "fault",
    Cause.RACE: "data race",
    Cause.CONTRACT: "contract differs",
    Cause.LOGIC: "logic error",
    Cause.PRECISION: "precision lost",
    Cause.SPECIALS: "NaN/inf semantics broken",
    Cause.NONDETERMINISM: "non-deterministic",
    Cause.INDEX_OVERFLOW: "index overflow",
    Cause.RESOURCE: "out of memory",
    Cause.INPUT_WRITTEN: "writes into its input",
}


class Reason(enum.Enum):
    """What a failure shows, as its check found it: the criterion an output broke, or why
    the target gave no answer.  Beside its :class:`Cause` (what the failure is attributed
    to), it is what every later decision reads -- an attribution, a search moved, a finding
    kept apart; the message is its rendering for a person, and no decision reads that."""

    WRONG_VALUE = "differs from the exact answer"
    NEVER_WRITTEN = "an output never written"
    CERTIFICATE = "wrong where every summation order is exact"
    BEYOND_BOUND = "beyond the rounding bound"
    #: An infinity where the judge's bound shows no combine can overflow.
    OVERFLOWED = "an infinity where nothing overflows"
    #: A NaN, infinity, zero or sign not where the operator's rules put it.
    SPECIALS = "NaN, infinity or sign misplaced"
    NAN_RULE = "the spec's NaN rule broken"
    SUBNORMALS = "subnormals read as zero, or kept"
    ACCUMULATOR = "beyond its declared accumulator's bound"
    INDICES = "an index other than the running extreme's"
    SHAPE = "an answer of the wrong shape or type"
    #: A documented behaviour other than the spec's (cause CONTRACT names the flag).
    UNDECLARED = "a documented behaviour undeclared"
    NONDETERMINISTIC = "bits differ between runs"
    WRAPPED = "an integer overflow not as declared"
    MONOID_LAW = "the operator breaks a monoid law"
    RAISED = "raised"
    EMPTY_REFUSED = "the empty input refused"
    OUT_OF_MEMORY = "out of memory"
    #: Out of memory on a GPU whose memory other processes held: no evidence either way.
    MEMORY_TAKEN = "the GPU's memory taken by others"
    #: scancheck's own code raised, no code of the target's on the way: nothing is claimed.
    OWN_ERROR = "scancheck's own code raised"
    REFUSED_AXIS = "a negative axis refused"
    EMPTY_BATCH = "wrong on an empty batch"
    INPUT_WRITTEN = "wrote into its input"
    NOT_AN_ARRAY = "returned no array"
    HANG = "hung"
    FAULT = "a fault: it raised where no property could go on, or its process died"
    #: A sanitizer's report (racecheck, synccheck, memcheck, initcheck).
    SANITIZER = "a sanitizer's report"

    @property
    def label(self) -> str:
        return self.value


#: What a wrong answer that another run of the same input gets right shows, in words: the
#: case's own evidence of a logic error that comes and goes.
INTERMITTENT = ("wrong in some runs only, which no rounding or NaN rule explains (a race, or a "
                "read of memory not yet written?)")

#: Statuses of a property whose bounded budget ran out before the top of its sizes, no
#: failure found: "slow" (the target's own calls took most of the time) or "partial"
#: (checking their answers did).  Neither is a pass past the n it reached, nor a failure.
UNFINISHED = ("slow", "partial")


@dataclass
class PropertyResult:
    """The verdict on one property: pass, fail, skip, fault, hang, slow or partial, why,
    and where."""

    name: str
    status: str
    diagnosis: str = ""
    smallest_case: dict[str, Any] | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    #: The :class:`Cause` name of a failure ("" where nothing failed).
    cause: str = ""
    #: The :class:`Reason` name of a failure, or of a search stopped short (memory taken);
    #: "" where nothing failed.
    reason: str = ""
    #: The failing case's own evidence shows it does not follow from a logic error.
    independent: bool = False
    #: Wall seconds the property took whole: its search, shrinking and report (a sanitizer
    #: tool's run; for a hang or fault, its child's time).
    seconds: float = 0.0
    #: Of those, the seconds a first call of each kind took beyond the second (a library's
    #: compile), which the property's budget was not charged.
    uncharged: float = 0.0
    #: The per-call timeout, in seconds, that a call of this property's ran past: a hang's,
    #: or where the calls before it predict that time (status "slow"); None otherwise.
    timeout: float | None = None
    #: Whether no n smaller than the smallest case's fails on its data: every smaller n was
    #: checked (False: the smallest failing n found, smaller ones not all checked).
    minimal: bool = True
    #: What a passing property found of the target beside its verdict, each a sentence a
    #: report shows whole (the type its float sums accumulate in, and the flag that
    #: declares it).
    notes: list[str] = field(default_factory=list)
    #: Failures of this property found before its result that did not end its search, only
    #: moved it to where the target answers (an empty input refused, an exception or memory
    #: exhausted at some n: the search went on from n = 1, or below that n); each is a
    #: result of its own, with its own cause and smallest case.
    more: list[PropertyResult] = field(default_factory=list)

    def __post_init__(self) -> None:
        # From JSON (a child's report), the earlier failures come back as dicts.
        self.more = [m if isinstance(m, PropertyResult) else PropertyResult(**m)
                     for m in self.more]
        if not self.reason and self.status in ("fault", "hang"):
            # A process that died or hung, or an exception that ended the property.
            self.reason = (Reason.HANG if self.status == "hang" else Reason.FAULT).name

    @property
    def why(self) -> Reason | None:
        """The :class:`Reason` of its failure, or of its search stopped short (None: none)."""
        return Reason[self.reason] if self.reason else None


#: Names of exception classes (in a class's MRO) that say memory ran out: Python's and
#: NumPy's MemoryError, CuPy's OutOfMemoryError (a MemoryError), torch.OutOfMemoryError
#: (a RuntimeError).  Matched by name, so that no library is imported to ask.
_MEMORY_ERRORS = {"MemoryError", "OutOfMemoryError"}
#: What libraries whose exceptions have no such class say: XLA (JAX), CUDA's runtime and
#: driver through CuPy, torch before 2.5, and torch where a CUDA call other than its
#: allocator's ran out (making a context, a library handle).
_MEMORY_WORDS = ("RESOURCE_EXHAUSTED", "cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY",
                 "CUDA out of memory", "CUDA error: out of memory")


def is_device_memory_error(exc: BaseException) -> bool:
    """Whether ``exc`` says a device's memory ran out: a resource error but the host's own
    (``MemoryError``, NumPy's "Unable to allocate"), by the same names and words."""
    if any(c.__name__ == "OutOfMemoryError" for c in type(exc).__mro__):
        return True
    text = str(exc)[:2000]
    return any(w in text for w in _MEMORY_WORDS)


def is_resource_error(exc: BaseException) -> bool:
    """Whether ``exc`` says memory ran out (host or device), by its classes' names or, for
    libraries with no such class, their own words for it; no library is imported."""
    if any(c.__name__ in _MEMORY_ERRORS for c in type(exc).__mro__):
        return True
    text = str(exc)[:2000]
    return any(w in text for w in _MEMORY_WORDS)


@dataclass
class Finding:
    """One distinct cause: its headline failure (the smallest case of the property that
    shows it best), every property failing with it, and the failures of other causes that
    follow from it."""

    cause: Cause
    source: str
    #: The source's own diagnosis, and its status (a fault or a hang is told as one).
    diagnosis: str
    status: str = "fail"
    smallest_case: dict[str, Any] | None = None
    #: Whether no smaller n fails on the smallest case's data (every one checked).
    minimal: bool = True
    #: The :class:`Reason` name of the source's failure ("" where it gave none).
    reason: str = ""
    #: Properties failing with this cause, the source first.
    properties: list[str] = field(default_factory=list)
    #: Properties failing with another cause that follows from this one.
    explained: list[str] = field(default_factory=list)
    #: The cause of each of ``explained``, by property.
    explained_causes: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def text(self) -> str:
        """What went wrong, a fault or hang named with its property."""
        return self.diagnosis if self.status == "fail" else (
            f"{self.status} in '{self.source}': {self.diagnosis}")

    @property
    def line(self) -> str:
        """The cause, what went wrong, and its smallest case."""
        return _headline(self.cause, self.status, self.text) + _where(self.smallest_case,
                                                                       self.minimal)

    def folded(self) -> str:
        """The line, and the properties it explains folded after it (one of another cause
        with that cause named)."""
        shown = [*self.properties,
                 *(f"{p} (as {self.explained_causes.get(p, 'another cause')})"
                   for p in self.explained)]
        return f"{self.line} -- explains: {', '.join(shown)}" if shown else self.line


@dataclass
class Diagnosis:
    """The primary cause with its property and smallest case, and how the rest relate to it."""

    cause: Cause | None
    source: str | None = None  # the property that shows it
    text: str = ""
    smallest_case: dict[str, Any] | None = None
    minimal: bool = True
    #: Other properties failing with the same cause: more evidence of it.
    same_cause: list[str] = field(default_factory=list)
    #: Failing properties whose failure follows from the primary cause.
    explained: list[str] = field(default_factory=list)
    #: Other causes with evidence of their own, one line each, in the order of ``findings``.
    also: list[str] = field(default_factory=list)
    #: Each distinct cause once, the primary first, with the properties it explains.
    findings: list[Finding] = field(default_factory=list)
    #: The primary property's status: a fault's text names it ("fault in 'segments': ...").
    status: str = "fail"

    @property
    def line(self) -> str:
        """One line for a person: the primary cause first, independent ones after it."""
        if self.cause is None:
            return ""
        head = _headline(self.cause, self.status, self.text) + _where(self.smallest_case,
                                                                       self.minimal)
        return "; ".join([head, *(f"also {a}" for a in self.also)])


def _headline(cause: Cause, status: str, text: str) -> str:
    """A finding's cause and what went wrong: a fault's text, which begins with the word,
    alone (not "fault: fault in ...")."""
    return text if status == "fault" else f"{cause.label}: {text}"


def _where(case: dict[str, Any] | None, minimal: bool = True) -> str:
    """Where a failure shows: its smallest case, or, where smaller sizes were not all
    checked, the smallest failing n found."""
    if not case or "n" not in case:
        return ""
    if "triple" in case:  # a monoid law's: its n counts triples drawn, no scan's elements
        return f" (first broken at drawn triple {case['triple']} of {case['n']})"
    index = f", index {case['index']}" if "index" in case else ""
    if "shape" in case and "row" in case:
        # An N-D case's n is the size its shape was drawn at, not its number of elements.
        shape = f"shape {case['shape']} (drawn at n={case['n']}){index}"
        return (f" (smallest failing case found: {shape}; not every smaller n checked)"
                if not minimal else f" (smallest case of {shape})")
    if not minimal:
        return f" (smallest failing n found: {case['n']}{index}; not every smaller n checked)"
    return f" (smallest case n={case['n']}{index})"


def cause_of(result: PropertyResult) -> Cause:
    """The cause a property result claims (a fault or hang is always FAULT)."""
    if result.status in ("fault", "hang"):
        return Cause.FAULT
    return Cause[result.cause] if result.cause else Cause.LOGIC


def _smallest_n(result: PropertyResult) -> float:
    case = result.smallest_case or {}
    return case.get("n", float("inf"))


def _apart(result: PropertyResult) -> str:
    """What sets ``result``'s failure apart from failures at sizes with elements, where it
    does: the empty input (n = 0), or an empty batch of an N-D input ("" otherwise)."""
    if (result.smallest_case or {}).get("n") == 0:
        return "the empty input"
    return "an empty batch" if result.why == Reason.EMPTY_BATCH else ""


def diagnose(results: list[PropertyResult]) -> Diagnosis:
    """The one diagnosis that explains these property results (``cause`` None if all pass):
    the primary cause, and each other distinct cause once, with what it explains.

    Failures of one cause are one finding, except that a failure on the empty input, or on
    an empty batch, is one of its own (it says nothing of the inputs that hold elements).
    The highest-ranked (smallest n among equals, one proven smallest before one that is not)
    leads the first finding; failures of other causes that follow from it are folded under
    it; the rest make the next findings, in the same way."""
    failing = [f for r in results for f in (*r.more, r)
               if f.status in ("fail", "fault", "hang")]
    if not failing:
        return Diagnosis(None)
    causes = {cause_of(r) for r in failing}
    # Among equal sizes, one proven the smallest first.
    left = sorted(failing, key=lambda r: (cause_of(r), _smallest_n(r), not r.minimal))
    findings: list[Finding] = []
    while left:
        head = left[0]
        c0 = cause_of(head)
        finding = Finding(c0, head.name, head.diagnosis, head.status, head.smallest_case,
                          head.minimal, head.reason)
        rest = []
        for r in left:
            c = cause_of(r)
            if c == c0 and _apart(r) == _apart(head):
                if r.name not in finding.properties:
                    finding.properties.append(r.name)
            # A failure on an empty input or batch, or of memory, explains nothing at other
            # sizes.
            elif (c != c0 and not _apart(head) and c0 != Cause.RESOURCE
                  and not _independent(r, c, c0, causes, head)):
                if r.name not in finding.explained:
                    finding.explained.append(r.name)
                    finding.explained_causes[r.name] = c.label
            else:
                rest.append(r)
        findings.append(finding)
        left = rest
    primary = findings[0]
    out = Diagnosis(primary.cause, primary.source, primary.text, primary.smallest_case,
                    primary.minimal, findings=findings, status=primary.status)
    out.same_cause = [p for p in primary.properties if p != primary.source]
    out.explained = list(primary.explained)
    out.also = [_also(f) for f in findings[1:]]
    return out


def _also(finding: Finding) -> str:
    """A finding beside the primary one, in one line: its cause, where, what, how small."""
    others = len(finding.properties) - 1
    more = f" and {others} other{'s' * (others > 1)}" if others > 0 else ""
    return f"{finding.cause.label} in '{finding.source}'{more}: {finding.diagnosis}" + _where(
        finding.smallest_case, finding.minimal)


#: Sanitizer findings that, like a race, can corrupt any result of the same target: a read
#: past an array's end or of memory never written returns whatever lies there.
_CORRUPTING = ("sanitizer: memcheck", "sanitizer: initcheck")


def _independent(r: PropertyResult, c: Cause, top: Cause, causes: set[Cause],
                 primary: PropertyResult | None = None) -> bool:
    """Whether failure ``r`` (cause ``c``) stands on its own beside the primary cause ``top``."""
    if c == Cause.RESOURCE:
        return True  # memory that ran out is no answer, wrong or right: nothing explains it
    if top == Cause.RACE:
        return False  # a race can corrupt any result
    if top == Cause.CONTRACT:
        # A documented behaviour undeclared shows as a contract difference wherever it is
        # met (each property names it so): a failure of another cause is one of its own.
        return True
    if primary is not None and primary.name in _CORRUPTING and c != Cause.INPUT_WRITTEN:
        return False
    if c == Cause.INDEX_OVERFLOW:
        # Index overflow only when the logic holds at every smaller scale.
        return Cause.LOGIC not in causes and Cause.RACE not in causes
    if top == Cause.FAULT:
        # A wrong answer from a run that did not fault is not explained by another run's fault.
        return r.status == "fail"
    return bool(r.independent)
