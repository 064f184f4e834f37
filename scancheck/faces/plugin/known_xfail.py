"""Known bugs in the pytest plugin: a conformance test of a built-in target that a known
upstream bug affects, on the installed version, is a strict xfail carrying the bug's link.
It xfails where the check meets that bug (its typed symptom), fails as any test does where
it fails otherwise, and once upstream fixes the bug, passes as XPASS(strict): a failure that
says so.  On a version older than any seen to have the bug, the xfail is not strict: the
bug may be there or not yet."""

from __future__ import annotations

from typing import Any

import pytest


class KnownUpstream(Exception):
    """A conformance check met a known bug of its library (the message names it)."""


def _affecting(target: str, check: str) -> list[Any]:
    from ...adapters import known_for

    return [b for b in known_for(target) if target in b.targets and check in b.props
            and b.unfixed(b.installed())]


def mark_known(items: list[pytest.Item]) -> None:
    """Mark each conformance test that a known bug affects a strict xfail that only that
    bug's failure satisfies (:class:`KnownUpstream`)."""
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        target, check = params.get("scan_target_name"), params.get("scan_check")
        if not isinstance(target, str) or not isinstance(check, str):
            continue
        bugs = _affecting(target, check)
        if bugs:
            item.add_marker(pytest.mark.xfail(
                raises=KnownUpstream, strict=any(b.affects(b.installed()) for b in bugs),
                reason="; ".join(f"{b.told} ({b.title})" for b in bugs)))


def raise_if_known(report: Any) -> None:
    """Raise :class:`KnownUpstream` where a known bug explains a failure of ``report`` (a
    ConformanceReport); otherwise return."""
    from ...adapters import known_for
    from ...adapters.known import explain

    found = explain(report, known_for(report.target))
    if found:
        raise KnownUpstream("; ".join(f"{hit.name}: {bug.told} ({bug.title})"
                                      for bug, hit in found))
