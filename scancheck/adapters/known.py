"""Known bugs of other libraries as data: where a bug shows (the library, the versions it
affects, the built-in targets), what a check reports when it meets it -- typed: the property
and the :class:`~scancheck.engine.diagnosis.Cause`, never a message's text -- and the
upstream link (None for a finding not reported upstream), its status and the standalone
reproducer in docs/findings/, which prints "still reproduces" or "fixed in <version>".

Each family module lists its own in ``KNOWN``; :func:`explain` tells a report's failures
that one of them explains, and :func:`unseen` the ones that no longer show.
"""

from __future__ import annotations

import importlib.metadata
import re
from dataclasses import dataclass
from typing import Any

from ..engine.diagnosis import Cause
from ..targets.target import Witness


@dataclass(frozen=True)
class Symptom:
    """What a check reports where it meets a bug: the property that fails, the cause it names
    and, where those alone would not identify it, values its smallest case takes (a key ->
    the values it may have)."""

    prop: str
    cause: Cause
    case: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    #: Whether the failing input holds no element (a shape with a 0 in it); None: either.
    empty: bool | None = None

    def matches(self, result: Any) -> bool:
        """Whether the failing property result is this symptom."""
        case = result.smallest_case or {}
        shape = case.get("shape") or [case.get("n", 1)]
        return (result.name == self.prop and result.cause == self.cause.name
                and all(case.get(k) in values for k, values in self.case)
                and (self.empty is None or (0 in shape) == self.empty))


@dataclass(frozen=True)
class KnownBug:
    """An upstream bug a built-in target's check meets."""

    #: Its name ("pytorch/pytorch#137943" upstream; a short name of its own where it is not
    #: reported), its upstream link (None: not reported upstream) and a one-line title.
    key: str
    link: str | None
    title: str
    #: The module the bug is in, and the distributions that install it (the first found
    #: names the installed version).
    library: str
    distributions: tuple[str, ...]
    #: The first version seen to have it, and the first version with the fix (None: not
    #: fixed in any release known here).
    since: str
    fixed: str | None
    #: The built-in targets it shows in, and what their checks report of it.
    targets: tuple[str, ...]
    symptoms: tuple[Symptom, ...]
    #: Upstream's word for the issue ("open", "closed"), or "not reported upstream".
    status: str
    #: Its standalone reproducer (docs/findings/...), which prints "still reproduces" or
    #: "fixed in <version>"; and whether it needs a GPU.
    reproducer: str
    gpu: bool = False
    #: Cases that showed it, which the checks of its targets run before they search: whether
    #: it is still there is then judged on the inputs it was seen on, whatever the seed.
    witnesses: tuple[Witness, ...] = ()

    def installed(self) -> str | None:
        """The installed version of the library, or None where none of its distributions is
        installed."""
        for dist in self.distributions:
            try:
                return importlib.metadata.version(dist)
            except importlib.metadata.PackageNotFoundError:
                continue
        return None

    def affects(self, version: str | None) -> bool:
        """Whether ``version`` (None: unknown) is among those seen to have it: from
        :attr:`since` up to :attr:`fixed`."""
        return not self.older(version) and self.unfixed(version)

    def unfixed(self, version: str | None) -> bool:
        """Whether ``version`` (None: unknown) comes before the fix, if any: a failure of its
        symptoms there is this bug, on a version older than :attr:`since` too (:attr:`since`
        is the first version seen, not one known to be the first affected)."""
        return version is None or self.fixed is None or _key(version) < _key(self.fixed)

    def older(self, version: str | None) -> bool:
        """Whether ``version`` predates the first version seen to have it."""
        return version is not None and _key(version) < _key(self.since)

    def matches(self, target: str, result: Any) -> bool:
        """Whether the failing property result ``result`` of ``target`` is this bug (one of
        its symptoms: the property, the cause and the case values that identify it)."""
        if target not in self.targets or result.status not in ("fail", "fault", "hang"):
            return False
        return any(s.matches(result) for s in self.symptoms)

    @property
    def props(self) -> tuple[str, ...]:
        """The properties its symptoms are in."""
        return tuple(dict.fromkeys(s.prop for s in self.symptoms))

    @property
    def told(self) -> str:
        """How a check tells it: ``known upstream: <link>``, or where it is not reported
        upstream, the finding's reproducer."""
        if self.link:
            return f"known upstream: {self.link}"
        return f"known, not reported upstream: {self.reproducer}"


def _key(version: str) -> tuple[int, ...]:
    """A version's release numbers, for ordering (local and pre-release parts dropped)."""
    return tuple(int(p) for p in re.findall(r"\d+", version.split("+")[0])[:3])


def _failures(report: Any) -> list[Any]:
    out = []
    for r in report.results:
        out += [f for f in (*r.more, r) if f.status not in ("pass", "skip", "slow", "partial")]
    return out


def explain(report: Any, bugs: list[KnownBug]) -> list[tuple[KnownBug, Any]]:
    """Each of ``bugs`` that explains a failure of ``report`` (a ConformanceReport) on the
    installed version, with that failure."""
    found = []
    for bug in bugs:
        if not bug.unfixed(bug.installed()):
            continue
        hit = next((f for f in _failures(report) if bug.matches(report.target, f)), None)
        if hit is not None:
            found.append((bug, hit))
    return found


def unseen(report: Any, bugs: list[KnownBug]) -> list[KnownBug]:
    """Each of ``bugs`` on ``report``'s target whose properties that ran all passed (at least
    one ran; a symptom's property may not apply to every target the bug names): it did not
    reproduce on the installed version (fixed in it?)."""
    status = {r.name: r.status for r in report.results}
    return [b for b in bugs if report.target in b.targets and b.affects(b.installed())
            and (ran := [status[p] for p in b.props if status.get(p, "skip") != "skip"])
            and all(s == "pass" for s in ran)]


def unexplained(report: Any, bugs: list[KnownBug]) -> list[Any]:
    """The failures of ``report`` that none of ``bugs`` explains on the installed version:
    every failure a bug's symptoms match, not only the first (:func:`explain` names one)."""
    live = [b for b in bugs if b.unfixed(b.installed())]
    return [f for f in _failures(report) if not any(b.matches(report.target, f) for b in live)]


def lines(report: Any, bugs: list[KnownBug]) -> list[str]:
    """What a check says of the known bugs on its target: "known upstream: <link>" beside
    each failure one explains, "fixed in <version>?" for one that did not reproduce."""
    out = []
    for bug, hit in explain(report, bugs):
        installed = bug.installed()
        seen = (f"; seen from {bug.library} {bug.since} on, {installed} here"
                if bug.older(installed) else "")
        out.append(f"{hit.name}: {bug.told} ({bug.title}; {bug.status}{seen})")
    for bug in unseen(report, bugs):
        version = bug.installed() or "the installed version"
        seen_on = (f", on the {len(bug.witnesses)} case{'s' * (len(bug.witnesses) > 1)} it "
                   f"was seen on too," if bug.witnesses else "")
        out.append(f"{bug.key} ({bug.link or bug.reproducer}) did not reproduce in "
                   f"{', '.join(map(repr, bug.props))}{seen_on} on {bug.library} {version}: "
                   f"fixed in {version}?")
    return out


def versions(bug: KnownBug) -> str:
    """The versions a bug was seen in (from :attr:`KnownBug.since` up to its fix), as a person
    reads them."""
    if bug.since in ("0", ""):
        return f"< {bug.fixed}" if bug.fixed else "all seen"
    return f">= {bug.since}" + (f", < {bug.fixed}" if bug.fixed else "")


def gallery(bugs: list[KnownBug]) -> str:
    """The findings gallery: one Markdown row per bug -- library, versions seen with it, status
    (new here, known upstream with its link, fixed in a version), its reproducer and what
    it needs to run."""
    head = ("| finding | library | versions seen | status | reproducer | runs on |\n"
            "|---|---|---|---|---|---|\n")
    rows = []
    for b in bugs:
        if b.link:
            status = f"known upstream: [{b.key}]({b.link}) ({b.status})"
        elif b.status == "not reported upstream":
            status = "new here (not reported upstream)"
        else:
            status = f"new here ({b.status})"
        if b.fixed:
            status += f"; fixed in {b.fixed}"
        where = "GPU" if b.gpu else "CPU"
        rows.append(f"| {b.title.replace('|', chr(92) + '|')} | {b.library} | {versions(b)} | {status} | "
                    f"[{b.reproducer.rsplit('/', 1)[-1]}]({b.reproducer.removeprefix('docs/')}) | "
                    f"{where} |\n")
    return head + "".join(rows)


GALLERY_START, GALLERY_END = "<!-- gallery: start -->", "<!-- gallery: end -->"


def with_gallery(page: str, bugs: list[KnownBug]) -> str:
    """``page`` (docs/findings.md) with the text between its gallery markers replaced by
    :func:`gallery` of ``bugs``; a ValueError where the markers are missing."""
    if GALLERY_START not in page or GALLERY_END not in page:
        raise ValueError(f"the page has no {GALLERY_START} ... {GALLERY_END} markers")
    head, rest = page.split(GALLERY_START, 1)
    return f"{head}{GALLERY_START}\n{gallery(bugs)}{GALLERY_END}{rest.split(GALLERY_END, 1)[1]}"

