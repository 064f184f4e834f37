"""This user's private directories (scancheck.core.private): what is refused, and the
bytecode cache the test runs and the GPU suite share."""

from __future__ import annotations

import os
import sys
import tempfile

import pytest

from scancheck.core.private import (
    bytecode_cache,
    cache_bytecode,
    private_dir,
    redirect_bytecode,
    seed_bytecode,
)

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX users only")


@pytest.fixture
def tmp(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_a_private_directory_is_made_for_this_user_alone(tmp):
    path = private_dir("cache")
    assert path == tmp / f"cache-{os.getuid()}" and (path.stat().st_mode & 0o777) == 0o700
    assert private_dir("cache") == path  # found again, as it was left


def test_a_directory_others_may_write_or_a_link_or_a_file_is_refused(tmp):
    private_dir("open").chmod(0o777)
    (tmp / "elsewhere").mkdir(mode=0o700)
    (tmp / f"link-{os.getuid()}").symlink_to(tmp / "elsewhere")
    (tmp / f"file-{os.getuid()}").write_text("")
    assert private_dir("open") is None
    assert private_dir("link") is None
    assert private_dir("file") is None


def test_a_directory_of_another_user_is_refused(tmp, monkeypatch):
    (tmp / f"theirs-{os.getuid() + 1}").mkdir(mode=0o700)  # owned by this user, named for another
    monkeypatch.setattr(os, "getuid", lambda: os.geteuid() + 1)
    assert private_dir("theirs") is None


def test_a_temporary_directory_anyone_may_write_needs_the_sticky_bit(tmp):
    tmp.chmod(0o777)  # another user could rename our directory and put theirs in its place
    assert private_dir("cache") is None
    tmp.chmod(0o1777)  # as /tmp is: only the owner renames what is theirs
    assert private_dir("cache") is not None


def test_bytecode_that_may_not_be_written_beside_the_sources_goes_to_the_private_cache(tmp):
    env = {"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/bin"}
    cache = cache_bytecode(env)
    assert cache == str(bytecode_cache())
    assert env == {"PYTHONPYCACHEPREFIX": cache, "PATH": "/bin"}


@pytest.mark.parametrize("env", [{"PATH": "/bin"},  # bytecode is written beside the sources
                                 {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": "/x"},
                                 {"PYTHONDONTWRITEBYTECODE": "", "PATH": "/bin"}])
def test_an_environment_that_writes_bytecode_or_names_its_own_cache_is_left_alone(tmp, env):
    before = dict(env)
    assert cache_bytecode(env) is None and env == before


def test_without_a_private_cache_the_setting_is_kept(tmp):
    bytecode_cache().chmod(0o755)
    env = {"PYTHONDONTWRITEBYTECODE": "1"}
    assert cache_bytecode(env) is None and env == {"PYTHONDONTWRITEBYTECODE": "1"}


@pytest.mark.parametrize("usable", [True, False])
def test_a_process_that_may_not_write_bytecode_keeps_it_in_the_private_cache(tmp, monkeypatch,
                                                                              usable):
    """As conftest does when pytest starts under ``python -B`` or PYTHONDONTWRITEBYTECODE:
    the process and the ones it starts (its environment) use the private cache; where that
    cache is not usable, the setting and the environment are left as they were."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setattr(sys, "pycache_prefix", None)
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)  # -B alone
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    seeded = []
    monkeypatch.setattr("scancheck.core.private.seed_bytecode", seeded.append)
    if not usable:
        bytecode_cache().chmod(0o755)
        assert redirect_bytecode() is None
        assert sys.dont_write_bytecode and sys.pycache_prefix is None
        assert "PYTHONDONTWRITEBYTECODE" not in os.environ
        assert "PYTHONPYCACHEPREFIX" not in os.environ and not seeded
        return
    cache = str(bytecode_cache())
    assert redirect_bytecode() == cache
    assert not sys.dont_write_bytecode and sys.pycache_prefix == cache
    assert os.environ["PYTHONPYCACHEPREFIX"] == cache
    assert seeded and all(site.endswith("site-packages") for site in seeded)
    assert redirect_bytecode() is None  # a prefix is set: the user's, or this one


def test_a_process_with_a_cache_of_its_own_keeps_it(tmp, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setattr(sys, "pycache_prefix", "/theirs")
    assert redirect_bytecode() is None and sys.pycache_prefix == "/theirs"


def test_the_installers_bytecode_seeds_the_cache_once(tmp_path, monkeypatch):
    """With a cache named, Python reads no ``__pycache__``: the bytecode pip wrote is linked
    into the cache where Python will look for it, once per site folder."""
    import py_compile
    from importlib.util import cache_from_source

    site = tmp_path / "site-packages"
    (site / "pkg").mkdir(parents=True)
    (site / "pkg" / "mod.py").write_text("X = 1\n")
    tag = sys.implementation.cache_tag
    installed = py_compile.compile(str(site / "pkg" / "mod.py"),
                                   cfile=str(site / "pkg" / "__pycache__" / f"mod.{tag}.pyc"))
    py_compile.compile(str(site / "pkg" / "mod.py"), optimize=1,
                       cfile=str(site / "pkg" / "__pycache__" / f"mod.{tag}.opt-1.pyc"))
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "cache"))
    seed_bytecode(str(site))
    seeded = cache_from_source(str(site / "pkg" / "mod.py"))
    assert seeded.startswith(str(tmp_path / "cache"))
    assert os.path.samefile(seeded, installed)
    assert [p.name for p in (tmp_path / "cache").rglob("*.pyc")] == [f"mod.{tag}.pyc"]
    (site / "pkg" / "__pycache__" / f"other.{tag}.pyc").write_bytes(b"")
    seed_bytecode(str(site))  # stamped: the folder is not walked again
    assert not os.path.exists(cache_from_source(str(site / "pkg" / "other.py")))
