"""The public API: every exported name resolves, and loads only the modules it needs."""

from __future__ import annotations

import subprocess
import sys

import pytest

import scancheck


def test_every_exported_name_resolves_to_its_module():
    assert sorted(scancheck.__all__) == sorted(scancheck._MODULE_OF)
    for name in scancheck.__all__:
        value = getattr(scancheck, name)
        home = sys.modules[f"scancheck.{scancheck._MODULE_OF[name]}"]
        assert value is getattr(home, name)


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="no_such_thing"):
        scancheck.no_such_thing  # noqa: B018


def test_a_sanitizer_child_does_not_import_the_conformance_machinery():
    code = "import sys, scancheck.isolation.sanitizer, scancheck.kernels; print('hypothesis' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
