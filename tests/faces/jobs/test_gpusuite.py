"""The GPU suite's warm step (scancheck.faces.jobs.gpusuite), on the CPU: its jobs and their stamps."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from scancheck.adapters import all_rows, builtin_targets
from scancheck.core.private import bytecode_cache
from scancheck.faces.jobs import gpusuite


def test_the_library_jobs_cover_every_dtype_and_share_the_heavy_ones():
    table = builtin_targets()
    jobs = gpusuite._library_jobs(("numpy.cumsum", "numpy.cumprod"))
    for name in ("numpy.cumsum", "numpy.cumprod"):
        mine = [job for job in jobs if job.target == name]
        assert {job.label.split(" ")[-1] for job in mine} == set(table[name].spec.dtypes)
        assert all(job.label == f"{name} {job.dtype}" for job in mine)
    heavy = "jax.lax.associative_scan (x64)"
    parts = gpusuite._WARM_PARTS[heavy]
    if not table[heavy].unavailable:
        shared = [job.code for job in gpusuite._library_jobs((heavy,)) if job.dtype == "float64"]
        assert len(shared) == parts and all(f"parts={parts}" in code for code in shared)


def test_a_jax_job_done_on_this_machine_is_passed_over(tmp_path, monkeypatch):
    """A job that succeeded leaves a stamp; the next warm step with the same code passes it
    over, and a job that failed is run again."""
    ran = tmp_path / "ran"
    ok = f"open({str(ran)!r}, 'a').write('ok ')"
    bad = f"open({str(ran)!r}, 'a').write('bad '); raise SystemExit(3)"
    monkeypatch.setattr(gpusuite, "_library_jobs",
                        lambda names: [gpusuite._Job("ok", ok), gpusuite._Job("bad", bad)]
                        if names == gpusuite.JIT_TARGETS else [])
    monkeypatch.setattr("scancheck.kernels.launch.warm_jobs", lambda: [])
    monkeypatch.setattr("scancheck.oracle.exact_device.FORMATS", {})
    monkeypatch.setattr("scancheck.oracle.compiled.SHARES", 0)
    monkeypatch.setattr(gpusuite, "_compiled_jobs", lambda: [])
    monkeypatch.setattr(gpusuite, "_collection_jobs", lambda: [])
    env = {"JAX_COMPILATION_CACHE_DIR": str(tmp_path / "jax"), "PATH": ""}
    first = gpusuite._warm_kernels(sys.executable, env)
    assert sorted(ran.read_text().split()) == ["bad", "ok"] and "failed: bad" in first
    ran.unlink()
    second = gpusuite._warm_kernels(sys.executable, env)
    assert ran.read_text().split() == ["bad"] and "failed: bad" in second


def test_the_compiled_libraries_gpu_targets_are_warmed_under_their_tests_property(monkeypatch):
    """Each target the GPU tests of torch.compile and fla check (the real table, as if both
    were installed) gets a warm check of the property and n its test checks; CPU ones and
    unavailable ones none."""
    table = {name: replace(t, unavailable=None) for name, t in builtin_targets().items()}
    table["fla chunk_local_cumsum (chunk 64, carried)"] = replace(
        table["fla chunk_local_cumsum (chunk 64, carried)"], unavailable="fla is not installed")
    monkeypatch.setattr("scancheck.adapters.builtin_targets", lambda: table)
    jobs = {job.label: job.code for job in gpusuite._compiled_jobs()}
    assert all(job.target == job.label for job in gpusuite._compiled_jobs())
    further = {r.name for r in all_rows() if r.variant}  # the hunt's, not the GPU tests'
    torch_cuda = {n for n in table if n.startswith("torch associative_scan") and "CUDA" in n
                  and n not in further}
    fla = {n for n in table if n.startswith("fla ")} - {"fla chunk_local_cumsum (chunk 64, carried)"}
    assert torch_cuda and fla and set(jobs) == torch_cuda | fla
    for name, code in jobs.items():
        prop = gpusuite.compiled_property(table[name].spec)
        max_n = 2**10 if name.startswith("torch") else 2**14
        assert f"warm_check({name!r}, {prop!r}, {max_n})" in code
    assert gpusuite.compiled_property(table["fla chunk_global_cumsum (BT 32)"].spec) == (
        "floats within bound")
    assert gpusuite.compiled_property(
        table["torch associative_scan (pointwise, compiled, CUDA)"].spec) == "probe monoids"


def test_the_longest_jobs_tests_wait_for_start_right_after_the_gate(monkeypatch):
    """torch.compile's jobs (the longest a test waits for) start first after what pytest needs,
    then the CUDA modules the kernel and oracle tests load, ahead of the JAX and CuPy jobs."""
    monkeypatch.setattr(gpusuite, "_compiled_jobs",
                        lambda: [gpusuite._Job("compiled", "pass", "torch associative_scan")])
    monkeypatch.setattr(gpusuite, "_library_jobs",
                        lambda names: [gpusuite._Job(f"library {names[0]}", "pass", names[0])])
    monkeypatch.setattr("scancheck.kernels.launch.warm_jobs", lambda: [("blelloch", None)])
    warming = gpusuite._Warming(sys.executable, dict(os.environ))
    jobs = [job.label for job in warming.jobs]
    assert jobs[len(warming.gated)] == "compiled"
    order = [jobs.index(label) for label in ("compiled", "kernels 1/4",
                                              f"library {gpusuite.JIT_TARGETS[0]}",
                                              f"library {gpusuite.CUPY_TARGETS[0]}")]
    assert order == sorted(order)


def test_the_kernel_shares_compile_every_module_once_the_tests_ones_first(monkeypatch):
    """The kernel jobs share every variant's module, the device oracle's formats and the
    tuning candidates among KERNEL_SHARES processes, each once; the modules the kernel and
    oracle tests load start each share, and a module that fails does not stop its share."""
    import ast

    from scancheck.kernels.launch import warm_jobs
    from scancheck.oracle.exact_device import FORMATS

    warming = gpusuite._Warming(sys.executable, dict(os.environ))
    shares = [ast.literal_eval(job.code.split("compile_modules(", 1)[1].rsplit("))", 1)[0])
              for job in warming.jobs if job.label.startswith("kernels ")]
    assert len(shares) == gpusuite.KERNEL_SHARES
    modules = [m for share in shares for m in share]
    expected = ([("kernel", n, p) for n, p in warm_jobs()]
                + [("oracle", d, None) for d in FORMATS])
    assert sorted(map(repr, modules)) == sorted(map(repr, expected))
    for share in shares:
        kinds = [p is not None for kind, _, p in share]
        assert kinds == sorted(kinds)  # candidates after the defaults and the oracle

    ran: list[str] = []

    def kernel(name, params):
        ran.append(name)
        if name == "broken":
            raise RuntimeError("nvrtc: error")

    monkeypatch.setattr("scancheck.kernels.launch.warm", kernel)
    monkeypatch.setattr("scancheck.oracle.exact_device.warm", lambda d: ran.append(d))
    assert gpusuite.compile_modules([("kernel", "broken", None), ("oracle", "float32", None),
                                     ("kernel", "blelloch", None)]) == 1
    assert ran == ["broken", "float32", "blelloch"]


def test_the_suites_processes_share_the_test_sessions_bytecode_cache(tmp_path, monkeypatch):
    """The warm step writes the bytecode the tests' workers load: on an H100 whose torch had
    none, each of twelve workers compiled dynamo and Inductor (15 s; 5 s from the cache).
    The rest of the environment is the caller's, with the suite's caches and one Inductor
    compile thread where it names none, the profile, and this checkout on the path."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    root = str(Path(gpusuite.__file__).resolve().parents[3])
    env = gpusuite.suite_env("gpu", {"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/bin"})
    assert env == {**gpusuite._JAX_CACHE, "CUPY_CACHE_DIR": str(gpusuite.SUITE_CUPY_CACHE),
                   "TORCHINDUCTOR_COMPILE_THREADS": "1",
                   "PATH": "/bin", "SCANCHECK_HYPOTHESIS_PROFILE": "gpu",
                   "PYTHONUNBUFFERED": "1", "PYTHONPATH": root + os.pathsep,
                   "PYTHONPYCACHEPREFIX": str(bytecode_cache())}
    theirs = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": "/theirs",
              "CUPY_CACHE_DIR": "/cupy", "JAX_COMPILATION_CACHE_DIR": "/jax",
              "TORCHINDUCTOR_COMPILE_THREADS": "8"}
    assert gpusuite.suite_env("thorough", theirs).items() >= theirs.items()


def test_the_summary_takes_pytests_closing_line_not_one_quoted_in_a_traceback():
    """A failing pytester test prints pytester's docstring, which quotes an outcome line; the
    suite's summary must give the session's own, or say there was none."""
    quoted = ('            ======= 1 failed, 1 passed, 1 warning, 1 error in 0.13s ====\n'
              'E   ValueError: Pytest terminal summary report not found\n')
    closing = "1 failed, 417 passed, 20 skipped, 74 warnings in 55.43s\n"
    assert gpusuite._counts(quoted + closing) == closing.strip()
    assert gpusuite._counts("===== 3 passed in 1.00s =====\n") == "3 passed in 1.00s"
    assert gpusuite._counts(quoted + "INTERNALERROR> FileNotFoundError\n").startswith(
        "no pytest summary line")
    coloured = "\x1b[32m===== \x1b[32m\x1b[1m3 passed\x1b[0m\x1b[32m in 1.00s\x1b[0m =====\n"
    assert gpusuite._counts(coloured) == "3 passed in 1.00s"  # pytest --color=yes


def test_the_tests_start_at_the_gate_and_a_test_waits_for_its_targets_job(tmp_path, monkeypatch):
    """The warm step runs beside the tests: its gate opens once the jobs pytest needs ended,
    while a target's slow job goes on; a test process of that target waits for the job, and
    the summary counts the wait, writes each job's times and removes the marks."""
    import subprocess
    import time

    from scancheck.engine.warmup import WARMING_ENV

    marker, waiting = tmp_path / "slow-ended", tmp_path / "test-waiting"
    slow = (f"import time, pathlib\nwhile not pathlib.Path({str(waiting)!r}).exists():\n"
            f"    time.sleep(0.05)\ntime.sleep(0.5)\npathlib.Path({str(marker)!r}).touch()")
    monkeypatch.setattr(gpusuite, "_library_jobs",
                        lambda names: [gpusuite._Job("slow float32", slow, "jax.numpy.cumprod",
                                                     "float32")]
                        if names == gpusuite.JIT_TARGETS else [])
    monkeypatch.setattr("scancheck.kernels.launch.warm_jobs", lambda: [])
    monkeypatch.setattr("scancheck.oracle.exact_device.FORMATS", {})
    monkeypatch.setattr("scancheck.oracle.compiled.SHARES", 0)
    monkeypatch.setattr(gpusuite, "_compiled_jobs", lambda: [])
    monkeypatch.setattr(gpusuite, "_collection_jobs",
                        lambda: [gpusuite._Job("test modules", "pass")])
    env = {**os.environ, "JAX_COMPILATION_CACHE_DIR": str(tmp_path / "jax")}
    warming = gpusuite._Warming(sys.executable, env, tmp_path / "warming").start()
    warming.gate()
    assert not marker.exists()  # the tests start before the slow job ends
    test = ("from scancheck.engine.warmup import wait_warmed; import pathlib; "
            f"pathlib.Path({str(waiting)!r}).touch(); "
            "wait_warmed('jax.numpy.cumprod', 'float32'); "
            f"print(pathlib.Path({str(marker)!r}).exists())")
    out = subprocess.run([sys.executable, "-c", test], env=warming.test_env,
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
    (tmp_path / "out").mkdir()
    line = warming.finish(tmp_path / "out")
    assert line.startswith("caches warmed: 2 of 2 jobs") and "1 tests waited for them" in line
    times = json.loads((tmp_path / "out" / "warm-jobs.json").read_text())
    assert [t["job"] for t in times] == ["test modules", "slow float32"]
    assert warming.test_env[WARMING_ENV] == str(tmp_path / "warming")
    assert not (tmp_path / "warming").exists()  # its marks, read, are not left among the logs
    assert time.monotonic() - warming.t0 < 60


def test_the_summary_names_the_modules_that_took_the_most_test_seconds(tmp_path):
    """From pytest's JUnit XML: the total and the heaviest modules, largest first; nothing
    where the file is missing or cut short (a session killed mid-write)."""
    junit = tmp_path / "gpu-tests.xml"
    junit.write_text('<testsuites><testsuite name="pytest">'
                     '<testcase classname="tests.a" name="t1" time="2.5"/>'
                     '<testcase classname="tests.b" name="t2" time="7.0"/>'
                     '<testcase classname="tests.a" name="t3" time="1.5"/>'
                     '</testsuite></testsuites>')
    assert gpusuite.seconds_by_module(junit) == [
        "test-seconds 11 in all; by module: tests.b 7, tests.a 4"]
    assert gpusuite.seconds_by_module(tmp_path / "none.xml") == []
    junit.write_text("<testsuites><testsuite")
    assert gpusuite.seconds_by_module(junit) == []


def test_every_target_the_warm_step_names_is_a_built_in_name():
    """The warm step looks its targets up by their names in the table of built-ins: a name
    renamed there (an API enumerated into modes) would end the GPU suite before its tests."""
    table = builtin_targets()
    named = (*gpusuite.JIT_TARGETS, *gpusuite.CUPY_TARGETS, *gpusuite._WARM_PARTS)
    assert [n for n in named if n not in table] == []


def test_the_check_part_starts_the_longest_checks_first(tmp_path, monkeypatch):
    # Checks start in the order given, --jobs at once: the kernels' first, then the other GPU
    # targets', the CPU ones' last, so that no long check starts when the others are done.
    import scancheck.adapters

    table = {name: replace(t, unavailable=None) for name, t in builtin_targets().items()}
    monkeypatch.setattr(scancheck.adapters, "builtin_targets", lambda: table)  # as on a GPU
    given = []
    monkeypatch.setattr(gpusuite, "_run", lambda cmd, log, env: (
        given.extend(cmd[cmd.index("check") + 1:cmd.index("--jobs")]) or (0, "summary\n", 0.0)))
    gpusuite._check_targets(sys.executable, tmp_path, {}, [], "1")
    on_gpu = {r.name for r in all_rows() if r.gpu or r.follows_device}  # JAX's rows too
    assert "jax.numpy.cumsum" in on_gpu and table["jax.numpy.cumsum"].spec.device == "cpu"
    rank = [0 if name.startswith(("kernel:", "scancheck:")) else
            1 if name in on_gpu else 2 for name in given if not name.startswith("kernel:")]
    assert given[0].startswith("kernel:") and rank == sorted(rank)
    assert rank.count(0) > 10 and rank.count(1) >= 5 and rank.count(2) > 10
