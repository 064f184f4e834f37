"""The conformance tests ``pytest --scan-target=TARGET`` collects (see pytest_plugin)."""

from __future__ import annotations

import pytest

from scancheck.pytest_plugin import run_property


@pytest.mark.conformance
def test_conformance(request: pytest.FixtureRequest, scan_target_name: str, scan_property: str) -> None:
    run_property(request.config, scan_target_name, scan_property)
