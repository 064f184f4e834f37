"""The conformance tests ``pytest --scan-target=TARGET`` collects (see pytest_plugin)."""

from __future__ import annotations

import pytest

from scancheck.faces.plugin.hooks import run_check


@pytest.mark.conformance
def test_conformance(request: pytest.FixtureRequest, scan_target_name: str, scan_check: str) -> None:
    # Skipped or failed here, not in the plugin: pytest reports this file as the place.
    status, message = run_check(request.config, scan_target_name, scan_check)
    if status == "skip":
        pytest.skip(message)
    if status == "fail":
        pytest.fail(message, pytrace=False)
