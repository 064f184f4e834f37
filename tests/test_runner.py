"""The test runner itself: under ``pytest -n``, a hanging test and a test that crashes its
worker each fail alone, and the run goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parent.parent


def test_a_hang_and_a_crash_are_reported_without_stopping_the_run(pytester):
    pytester.makepyfile(
        """
        import os, time

        def test_hangs():
            time.sleep(600)

        def test_crashes_its_worker():
            os.abort()

        def test_passes_before():
            assert True

        def test_passes_after():
            assert True
        """
    )
    # Without scancheck's own plugin or Hypothesis's: this is xdist's and pytest-timeout's
    # behaviour, and each of the five processes (a crashed worker is replaced) would import
    # scancheck's engine, or Hypothesis (1.3 CPU-s each where no bytecode is cached), for
    # nothing.  One second: the passing tests take milliseconds, and the hang's wait is the
    # test's time.
    result = pytester.runpytest_subprocess("-n", "2", "--timeout=1", "-o", "timeout_method=thread",
                                           "-p", "no:cacheprovider", "-p", "no:scancheck",
                                           "-p", "no:hypothesispytest")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(["*crashed while running*test_hangs*"])
    result.stdout.fnmatch_lines(["*crashed while running*test_crashes_its_worker*"])
    assert result.duration < 120  # the 600 s sleep was cut short by the timeout


#: Loaded into the collecting child: it names each test collected, in order, with its
#: xdist_group (or -) and whether it is marked slow (one collection, where ``-m slow`` would
#: need a second).
_MARKS = """
def pytest_collection_finish(session):
    for item in session.items:
        group = item.get_closest_marker("xdist_group")
        print("scancheck-order", group.args[0] if group else "-",
              int(item.get_closest_marker("slow") is not None), item.nodeid)
"""


def _kind(group: str, slow: bool) -> str:
    return f"group:{group}" if group != "-" else "slow" if slow else "quick"


@pytest.fixture(scope="module")
def collected(request, tmp_path_factory) -> list[tuple[str, str]]:
    """(kind, test) of each test collected, in order: this session's own collection where it
    holds every kind and nothing was deselected (conftest's pytest_deselected says), as in
    CI's whole suite, else a collecting child's of three modules that do."""
    import os
    import subprocess
    import sys

    session = request.session
    mine = [(_kind(g.args[0] if (g := item.get_closest_marker("xdist_group")) else "-",
                   item.get_closest_marker("slow") is not None), item.nodeid)
            for item in session.items]
    if not getattr(request.config, "_scancheck_deselected", False) and {"slow", "quick"} <= {
            kind for kind, _ in mine} and any(kind.startswith("group:") for kind, _ in mine):
        return mine
    tmp_path = tmp_path_factory.mktemp("order")
    (tmp_path / "scancheck_order.py").write_text(_MARKS)
    files = [str(ROOT / "tests" / f) for f in ("controls/test_controls.py", "oracle/test_laws.py",
                                               "adapters/test_torch_scans.py")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p))
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p",
                           "no:cacheprovider", "-p", "scancheck_order", *files],
                          capture_output=True, text=True, cwd=ROOT, env=env)
    return [(_kind(group, slow == "1"), test) for group, slow, test in
            (ln.split(" ", 3)[1:] for ln in proc.stdout.splitlines()
             if ln.startswith("scancheck-order "))]


def test_slow_tests_are_collected_first_each_beside_a_quick_one(collected):
    marked = [(mark, test) for mark, test in collected if not mark.startswith("group:")]
    everything = [test for _, test in marked]
    slow = [test for mark, test in marked if mark == "slow"]
    assert slow and len(slow) < len(everything)
    positions = [everything.index(test) for test in slow]
    pairs = min(len(slow), len(everything) - len(slow))
    assert positions[:pairs] == list(range(0, 2 * pairs, 2))
    assert positions == sorted(positions)


def test_the_tests_of_a_group_are_collected_first_side_by_side(collected):
    """The compiled torch targets' tests share one worker's torch.compile warm-up: at the head
    of the collection, worksteal hands them to one worker, as loadgroup would."""
    kinds = [mark for mark, _ in collected]
    grouped = [i for i, kind in enumerate(kinds) if kind.startswith("group:")]
    assert grouped == [0, 1, 2] and set(kinds[:3]) == {"group:torch.compile"}


def _workers_started(env: dict[str, str]) -> int:
    import os
    import re
    import subprocess
    import sys

    base = {k: v for k, v in os.environ.items() if k != "PYTEST_XDIST_AUTO_NUM_WORKERS"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-n", "auto", "-p", "no:cacheprovider",
                           "tests/oracle/test_laws.py", "-k", "bad_arguments"],
                          capture_output=True, text=True, cwd=ROOT, env={**base, **env})
    return int(re.search(r"created: (\d+)/\1 worker", proc.stdout).group(1))


def test_n_auto_leaves_cores_for_child_processes_where_a_gpu_is_listed():
    import os

    cores = len(os.sched_getaffinity(0))
    assert _workers_started({"CUDA_VISIBLE_DEVICES": "0"}) == max(1, cores * 3 // 4)


def test_n_auto_is_left_to_xdist_where_the_environment_says_and_is_a_worker_past_the_cores_without_a_gpu(
        monkeypatch):
    """Without a GPU the workers wait a tenth of their time (children starting, timeouts):
    one worker more than cores keeps the cores busy."""
    import os
    from types import SimpleNamespace

    from conftest import pytest_xdist_auto_num_workers as auto
    from scancheck.core.devices import visible_gpus

    cores = len(os.sched_getaffinity(0))
    config = SimpleNamespace(option=SimpleNamespace(numprocesses="auto", dist="no"),
                             getoption=lambda name, default=None: "")
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    try:
        for listed, env, expected in (("0", None, max(1, cores * 3 // 4)), ("0", "3", None),
                                      ("", None, cores + 1), ("", "3", None)):
            visible_gpus.cache_clear()
            monkeypatch.setenv("CUDA_VISIBLE_DEVICES", listed)
            if env:
                monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", env)
            else:
                monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
            assert auto(config) == expected, (listed, env)
        config.option.numprocesses = 4  # -n 4: as asked
        assert auto(config) is None
    finally:
        visible_gpus.cache_clear()


def test_n_auto_steals_work_unless_a_dist_mode_was_given():
    from types import SimpleNamespace

    from conftest import pytest_xdist_auto_num_workers as auto

    for given, expected in (("no", "worksteal"), ("load", "load"), ("loadgroup", "loadgroup")):
        config = SimpleNamespace(option=SimpleNamespace(numprocesses="auto", dist=given),
                                 getoption=lambda name, default=None: "")
        auto(config)
        assert config.option.dist == expected, given
    config = SimpleNamespace(option=SimpleNamespace(numprocesses=4, dist="no"),
                             getoption=lambda name, default=None: "")
    auto(config)
    assert config.option.dist == "no"  # -n 4: xdist's own default


@pytest.mark.gpu
def test_workers_start_without_initialising_cuda(pytester):
    """xdist hands out no test before every worker has started, so a worker leaves CUDA to
    its first GPU test; the controller tells it whether GPU tests run."""
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text())
    pytester.makepyfile(
        """
        import ctypes
        import pytest

        CUDA_ERROR_NOT_INITIALIZED = 3

        @pytest.mark.gpu
        @pytest.mark.parametrize("k", [0, 1])
        def test_cuda_is_not_initialised_before_the_first_test(k):
            context = ctypes.c_void_p()
            status = ctypes.CDLL("libcuda.so.1").cuCtxGetCurrent(ctypes.byref(context))
            assert status == CUDA_ERROR_NOT_INITIALIZED, f"cuCtxGetCurrent returned {status}"
        """
    )
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)  # run, not skipped: the workers know there is a GPU


@pytest.mark.gpu
def test_a_gpu_sessions_workers_end_without_the_interpreters_exit(pytester, tmp_path):
    """Where GPU tests run, each worker's process ends after its session, before the atexit
    handlers CUDA, JAX and torch leave; without GPU tests it exits as Python does."""
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text())
    pytester.makepyfile(
        f"""
        import atexit
        import os
        from pathlib import Path

        def test_leaves_a_note_at_exit():
            note = Path({str(tmp_path)!r}) / os.environ["PYTEST_XDIST_WORKER"]
            atexit.register(note.write_text, "exited")
        """
    )
    pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert not list(tmp_path.iterdir())
    pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", "-m", "not gpu"
                                  ).assert_outcomes(passed=1)
    assert len(list(tmp_path.iterdir())) == 1


def test_each_workers_first_chunk_opens_with_its_share_of_the_slow_tests():
    """Worksteal hands worker i the i-th contiguous chunk of the collection and steals from
    a chunk's back: every chunk opens with slow tests, as many in each as can be, and the
    group's tests stay side by side at the head of the first."""
    from types import SimpleNamespace

    from conftest import _WorkerChunks

    def item(name, slow=False, group=None):
        marks = {"slow": slow or None, "xdist_group": group}
        return SimpleNamespace(name=name, get_closest_marker=lambda m: marks.get(m))

    items = ([item(f"g{i}", group="compile") for i in range(2)]
             + [item(f"s{i}", slow=True) for i in range(7)] + [item(f"q{i}") for i in range(14)])
    config = SimpleNamespace(workerinput={"workercount": 3}, option=SimpleNamespace(
        dist="worksteal"))
    _WorkerChunks().pytest_collection_modifyitems(config, items)
    names = [i.name for i in items]
    chunks = [names[:7], names[7:15], names[15:]]  # 23 // 3, then 16 // 2, then the rest
    assert chunks[0][:2] == ["g0", "g1"]
    for chunk in chunks:
        kinds = [n[0] for n in chunk]
        assert kinds == sorted(kinds, key="gsq".index), chunk  # groups, slow, then quick
    assert [sum(n[0] in "gs" for n in c) for c in chunks] == [3, 3, 3]
    # Not under worksteal, or outside a worker: the collection's order stands.
    before = list(items)
    _WorkerChunks().pytest_collection_modifyitems(SimpleNamespace(option=SimpleNamespace(
        dist="worksteal")), items)
    assert items == before
