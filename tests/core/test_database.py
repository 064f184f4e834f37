"""A failure found on one runner is replayed first on another, through a real Redis server."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time

import pytest

from scancheck.core.database import VARIABLE, example_database
from scancheck.engine.cases import Budget, ladder
from scancheck.engine.search import search


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def redis_url():
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
    redis = pytest.importorskip("redis", reason="the redis client: pip install 'hypothesis[redis]'")
    port = _free_port()
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    client = redis.Redis(port=port)
    try:
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.exceptions.ConnectionError:
                time.sleep(0.05)
        else:
            pytest.skip(f"redis-server did not start on port {port}")
        yield f"redis://127.0.0.1:{port}/0", client
    finally:
        proc.terminate()
        proc.wait(10)


def _fails_off_the_ladder(case):
    # No tile edge and no small size: only Hypothesis's draws reach it.
    return "wrong" if 700 <= case.n < 800 else None


def test_a_failure_found_on_one_runner_is_replayed_first_on_the_next(redis_url, monkeypatch):
    url, client = redis_url
    monkeypatch.setenv(VARIABLE, url)
    key = b"scancheck\0test target\0integers exact"
    # 5000 draws: about 1 in 200 lands in [700, 800), so 1000 missed it once in ~150 runs.
    first = search(_fails_off_the_ladder, ("int32",), ("uniform",), 1000, Budget(20, 5000),
                   key=key)
    assert first.failing is not None and 700 <= first.failing.n < 800
    assert client.keys(b"hypothesis-example:*")  # the failure is in the shared store

    seen = []

    def record(case):
        seen.append(case.n)
        return _fails_off_the_ladder(case)

    again = search(record, ("int32",), ("uniform",), 1000, Budget(20), key=key)
    assert again.failing is not None
    # After the ladder (every size on it misses 700-799), the very first draw is the replay.
    rungs = len(ladder(("int32",), ("uniform",), 1000, empty=True))
    assert not any(700 <= n < 800 for n in seen[:rungs])
    assert 700 <= seen[rungs] < 800, seen[rungs - 2:rungs + 3]

    # Without the store the first draw is Hypothesis's simplest, nowhere near it.
    monkeypatch.delenv(VARIABLE)
    seen.clear()
    search(record, ("int32",), ("uniform",), 1000, Budget(20), key=key)
    assert not 700 <= seen[rungs] < 800


def test_the_store_is_named_by_the_environment_and_refused_clearly(tmp_path, monkeypatch):
    monkeypatch.delenv(VARIABLE, raising=False)
    assert example_database() is None
    db = example_database(str(tmp_path / "examples"))
    db.save(b"k", b"v")
    assert list(db.fetch(b"k")) == [b"v"]
    with pytest.raises(ValueError, match=VARIABLE):
        example_database("redis://:not-a-port")


def test_hypothesis_keeps_its_own_files_elsewhere_while_a_search_runs_and_finds_home_after():
    from hypothesis.configuration import storage_directory

    from scancheck.core.database import private_storage

    home = storage_directory("constants", intent_to_write=False).path
    with private_storage():
        inside = storage_directory("constants", intent_to_write=False).path
        with private_storage():  # nested (or another thread's): the same place
            assert storage_directory("constants", intent_to_write=False).path == inside
        assert inside != home and inside.parent.name.startswith("scancheck-hypothesis-")
        assert inside.parent.is_dir()
    assert not inside.parent.exists()
    assert storage_directory("constants", intent_to_write=False).path == home


def test_the_constants_hypothesis_reads_from_local_modules_are_cached_for_every_search(
        tmp_path, monkeypatch):
    """Inside a search, Hypothesis's cache of local modules' constants is this user's shared
    directory (a child process would parse every module again in each fresh home); a
    directory of that name that is not this user's private one is not used."""
    from hypothesis.configuration import storage_directory

    from scancheck.core.database import constants_cache, private_storage

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    shared = constants_cache()
    assert shared is not None and shared.parent == tmp_path and (shared.stat().st_mode & 0o777) == 0o700
    with private_storage():
        inside = storage_directory("constants", intent_to_write=False).path
        assert inside.resolve() == shared.resolve()
    assert shared.is_dir()  # the search's home is removed, the shared cache kept
    shared.chmod(0o755)  # readable by others: not this user's alone
    assert constants_cache() is None
    with private_storage():
        assert not storage_directory("constants", intent_to_write=False).path.exists()


def test_a_check_writes_nothing_in_its_working_directory(tmp_path, monkeypatch):
    """In a fresh interpreter started there, on a target imported from there: Hypothesis
    takes its home from the working directory it was imported in, so no test process's
    own can show this."""
    import sys

    monkeypatch.delenv(VARIABLE, raising=False)
    (tmp_path / "userscan.py").write_text(
        "import numpy as np\n"
        "from scancheck import TargetSpec\n"
        "SCAN_SPEC = TargetSpec(dtypes=('int32',))\n"
        "def cumsum(x):\n"
        "    return np.cumsum(x, dtype=x.dtype)\n")
    code = ("from scancheck.engine.cases import Budget, ladder\n"
            "from scancheck.engine.conformance import check\n"
            "from scancheck.engine.properties import TABLE\n"
            "from scancheck.targets.resolve import resolve\n"
            "rep = check(resolve('userscan:cumsum'), properties=('integers exact',),\n"
            "            budget=Budget(1.0, max_n=16))\n"
            "rungs = ladder(('int32',), TABLE['integers exact'].distributions, 16, True)\n"
            "# Past the ladder: Hypothesis drew cases (before, that wrote .hypothesis here);\n"
            "# a second, since on a loaded machine the ladder alone took 0.3-0.4 s.\n"
            "assert rep.passed and rep.results[0].detail['cases'] > len(rungs), rep.rows()\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [p.name for p in tmp_path.iterdir()] == ["userscan.py"]
