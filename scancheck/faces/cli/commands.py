"""What each ``scancheck`` command but ``check`` does (that one is :mod:`.check`), handed its
parsed arguments (:mod:`scancheck.faces.cli.main` parses them and calls the one named):
each prints what it found and returns the exit status.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ...core.arrays import as_dtype
from ..tables import fit_columns, format_table
from .check import TABLE_WIDTH, output_dir, output_path, writing


def _apply(flags: list[str]) -> str:
    """``flags`` named as the subject of "apply": "--a applies", "--a and --b apply"."""
    return f"{' and '.join(flags)} {'applies' if len(flags) == 1 else 'apply'}"


def cmd_verify(args: argparse.Namespace) -> int:
    from ...core.devices import gpu_available
    from ..jobs.verify import check_verify_block, verify_all

    check_verify_block(args.block)  # before anything is printed or run
    gpu, why = gpu_available()
    print(f"GPU: {why}" if gpu else f"No GPU ({why}): checking the CPU models only.")
    results = verify_all(block=args.block, gpu=gpu)
    print(format_table([r.row() for r in results], title=f"scancheck verify (block={args.block})"))
    bad = [r.name for r in results if not r.ok]
    print(f"\n{len(results) - len(bad)} of {len(results)} variants verified"
          + (f"; WRONG: {', '.join(bad)}" if bad else ""))
    return 1 if bad else 0


def cmd_bench(args: argparse.Namespace) -> int:
    from ...core.devices import gpu_available
    from ..jobs import bench

    output_path(args.json, "--json")
    if args.oracle:
        mixed = [f for f, v in (("--tune", args.tune), ("--log2-sizes", args.log2_sizes),
                                ("--dtypes", args.dtypes), ("--reps", args.reps))
                 if v is not None]
        if mixed:
            raise ValueError(f"{_apply(mixed)} to the look-back's table; --oracle "
                             f"times the exact oracle alone (--oracle-dists, --oracle-sizes): "
                             f"give one or the other")
        gpu, why = gpu_available()
        dists, cpu, on_device = bench.oracle_request(args.oracle_dists, args.oracle_sizes, gpu,
                                                     why)
        rows = bench.oracle_throughput(sizes=tuple(2**k for k in cpu), dists=dists)
        print(bench.throughput_text(rows, "exact oracle throughput on this CPU (best of 5)"))
        device: list[dict] = []
        if gpu:
            device = bench.device_oracle_throughput(tuple(2**k for k in on_device), dists=dists)
            print(bench.throughput_text(device, f"exact oracle on {why} (median of 10)"))
        else:
            print(f"No GPU ({why}): the device oracle's table needs one.")
        if args.json:
            with writing(args.json, "--json"), open(args.json, "w") as fh:
                json.dump({"cpu": rows, "device": device}, fh, indent=1)
        return 0
    gpu, why = gpu_available()
    if not gpu:
        print(f"No GPU ({why}): the GPU benchmark needs one; try --oracle.")
        return 2
    log2_sizes = tuple(args.log2_sizes or bench.LOG2_SIZES)
    dtypes = tuple(args.dtypes or bench.BENCH_DTYPES)
    reps = args.reps or bench.REPS
    # The oracle's flags checked before anything is timed: a mistyped name fails at once.
    odists, _, osizes = bench.oracle_request(args.oracle_dists or None, args.oracle_sizes,
                                             True)
    if args.tune:
        from ...kernels.tune import write_sweep_table

        output_path(args.tune, "--tune")
        sweep = bench.tune_sweep(log2_sizes, dtypes, reps=reps)
        with writing(args.tune, "--tune"), open(args.tune, "w") as fh:
            json.dump(sweep, fh, indent=1)
        path, _ = write_sweep_table(sweep, Path(args.tune).resolve().parent)
        print(bench.fit_tables(bench.sweep_rows(sweep), ("dtype", "n"),
                               f"tuning run on {why}: the fastest launches, x memcpy "
                               f"({bench.LAUNCH_LEGEND})"))
        bad = {k: v for k, v in sweep["checks"].items() if v != "equal"}
        print(f"launch shapes against their models: {len(sweep['checks']) - len(bad)} of "
              f"{len(sweep['checks'])} equal" + (f"; left out: {bad}" if bad else ""))
        print(f"wrote {args.tune}\nand this device's launch table {path}\n(the package's own "
              f"once in scancheck/kernels/tuned/; SCANCHECK_TUNED_DIR={path.parent} reads it)")
        return 0
    from ...kernels.tune import device_table

    table = device_table()
    scans = bench.speed_table(log2_sizes, table, dtypes, reps=reps)
    print(bench.scans_text(scans, table.source))
    oracle: list[dict] = []
    floats = tuple(d for d in dtypes if d.startswith("float"))
    if floats and args.oracle_dists != []:  # none given: no oracle table
        oracle = bench.oracle_table(osizes, odists, floats)
        print()
        print(bench.oracle_text(oracle))
    if args.json:
        with writing(args.json, "--json"), open(args.json, "w") as fh:
            json.dump({"device": why, "launch table": table.source, "scans": scans,
                       "oracle": oracle}, fh, indent=1)
    return 0


def cmd_sanitize(args: argparse.Namespace) -> int:
    from ...core.devices import gpu_available
    from ...isolation.sanitizer import NOT_FOUND, find_sanitizer, sanitize_variant
    from ...kernels.registry import get_variant

    # The launch first (a LaunchError names the limit), then what this machine lacks: with
    # no GPU the tool's child dies and its exit status reads as the kernel's.
    get_variant(args.variant).check(args.n, args.block, args.dtype, args.op)
    gpu, why = gpu_available()
    if not gpu:
        raise ValueError(f"sanitize runs a kernel on a CUDA GPU: {why}")
    if find_sanitizer() is None:
        raise ValueError(f"{NOT_FOUND}: install the CUDA toolkit's, or put its folder on PATH")
    status = 0
    for tool in args.tools:
        rep = sanitize_variant(tool, args.variant, args.n, args.block, args.dtype, args.op)
        print(f"{tool}: {rep.issues} issue(s), exit {rep.returncode}"
              + (" (timed out)" if rep.timed_out else ""))
        if rep.issues:
            print(rep.first_lines())
        status |= int(not rep.clean)
    return status


def cmd_precision(args: argparse.Namespace) -> int:
    from ...core.devices import gpu_available
    from ..jobs import precision

    sweep_flags = [f for f, v in (("--plot", args.plot), ("--max-log2", args.max_log2))
                   if v is not None]
    if args.practical and (args.sweep or sweep_flags):
        raise ValueError(f"--practical prints the practical's own figures alone; "
                         f"{_apply(['--sweep'] * args.sweep + sweep_flags)} to the sweep: "
                         f"give one or the other")
    data_flags = [f for f, v in (("--n", args.n), ("--distribution", args.distribution),
                                 ("--seed", args.seed)) if v is not None]
    if args.practical:
        if data_flags:
            raise ValueError(f"{_apply(data_flags)} to the data of precision's own table; "
                             f"--practical judges the practical's data: give one or the other")
        from ..jobs.practical import report

        print(report())
        return 0
    n = 1_000_000 if args.n is None else args.n
    distribution = args.distribution or "integers"
    seed = 8 if args.seed is None else args.seed
    if distribution not in precision.DISTRIBUTIONS:  # before anything is printed
        raise ValueError(f"argument --distribution: {distribution!r} is unknown; allowed: "
                         f"{', '.join(precision.DISTRIBUTIONS)}")
    if not args.sweep and sweep_flags:
        raise ValueError(f"{_apply(sweep_flags)} to the sweep alone: add --sweep")
    output_path(args.plot, "--plot")
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        raise ValueError("--plot needs matplotlib, which is not installed (pip install "
                         "matplotlib, or scancheck's 'plot' extra)")
    gpu, why = gpu_available()
    top = args.max_log2 or (30 if gpu else 22)
    too_large = None if gpu or not args.sweep else precision.cpu_sweep_limit(top)
    if too_large:
        raise ValueError(too_large)
    print(f"GPU: {why}" if gpu else
          f"No GPU ({why}): the multi-block scans run as their CPU models instead.")
    x = precision.practical_data(n, distribution, seed)
    rows, text = precision.precision_table(x, gpu)
    print(format_table([r.as_dict() for r in rows],
                       title=f"n = {n:,} float32 '{distribution}' values (seed {seed})"))
    print("\n" + text)
    if args.sweep:
        swept = precision.sweep(range(10, top + 1, 2), gpu, distribution)
        points = swept.points
        print(format_table([p.as_dict() for p in points], title="\nsweep: float32 error vs exact"))
        if swept.stopped:
            print(f"sweep {swept.stopped}", file=sys.stderr)
            if not points:
                return 1
        if args.plot:
            where = why if gpu else "CPU models"
            with writing(args.plot, "--plot"):
                precision.plot(points, args.plot, f"scan error vs n, float32 ({where})")
            print(f"plot written to {args.plot}")
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from ...engine.report import jsonable, strict_json
    from ...oracle.explain import PROVEN, SUSPICIOUS, explain

    output_path(args.json, "--json")
    x = load_array(args.input, args.dtype, "INPUT")
    result = load_array(args.result, x.dtype.name, "RESULT")
    ref = (load_array(args.reference, result.dtype.name, "--reference") if args.reference
           else None)
    e = explain(x, result, ref, op=args.op, inclusive=not args.exclusive)
    if args.json:
        with writing(args.json, "--json"), open(args.json, "w") as fh:
            json.dump(strict_json(e.to_json()), fh, indent=1, default=jsonable, allow_nan=False)
    for line in e.lines():  # each wrapped to the tables' width, under its own indent
        indent = line[:len(line) - len(line.lstrip())]
        print(textwrap.fill(line, TABLE_WIDTH, subsequent_indent=indent + "  ",
                            break_on_hyphens=False, break_long_words=False))
    return 1 if e.verdict in (PROVEN, SUSPICIOUS) else 0


def cmd_known(args: argparse.Namespace) -> int:
    """The registry of known bugs: each with its versions, status and link, whether the
    installed version is among those affected, and with --reproduce what its standalone
    reproducer prints last ("still reproduces" or "fixed in <version>")."""
    import subprocess
    from pathlib import Path

    from ...adapters import known_bugs
    from ...adapters.known import versions
    from ...core.devices import gpu_available

    gpu = gpu_available()[0] if args.reproduce else False
    # The reproducers are in the source tree (docs/findings), not in an installed wheel.
    root = Path(__file__).resolve().parents[3]
    rows, links = [], []
    for bug in known_bugs():
        installed = bug.installed()
        here = ((f"{installed}, " + ("affected" if bug.affects(installed) else
                                     "older than seen" if bug.unfixed(installed) else
                                     "not affected"))
                if installed else "not installed")
        row = {"bug": bug.key, "library": bug.library, "seen in": versions(bug), "here": here,
               "status": bug.status.split(":")[0]}
        script = root / bug.reproducer
        if args.reproduce:
            if not installed or (bug.gpu and not gpu) or not script.is_file():
                row["reproducer"] = "not run: " + ("not installed" if not installed else "no GPU"
                                                   if script.is_file() else "no source tree")
            else:
                done = subprocess.run([sys.executable, str(script)], capture_output=True,
                                      text=True, timeout=args.timeout)
                out = (done.stdout.strip() or done.stderr.strip() or "no output").splitlines()
                row["reproducer"] = out[-1] if done.returncode == 0 else (
                    f"exit {done.returncode}: {out[-1]}")
        rows.append(row)
        # Whole, so that it opens from any folder; named in the tree where it is not there.
        where = str(script) if script.is_file() else f"{bug.reproducer} in scancheck's source tree"
        said = f"; its script printed: {row['reproducer']}" if "reproducer" in row else ""
        links.append(f"{bug.key}: {bug.link or bug.status.split(':')[0]} -- {bug.title} "
                     f"({where}){said}")
    print(format_table(fit_columns(rows, {"bug": 30, "status": 21, "reproducer": 30}),
                       title="known bugs of the libraries scancheck checks"))
    import textwrap

    print("\n" + "\n".join(textwrap.fill(ln, TABLE_WIDTH, subsequent_indent="    ",
                                          break_long_words=False, break_on_hyphens=False)
                            for ln in links))
    return 0


def cmd_hunt(args: argparse.Namespace) -> int:
    """Check every library target of a part this machine can run (or merge parts), write the
    table of every API and mode and each new finding's reproducer; 1 where a new finding
    was made, 2 where none of the part's targets can run here."""
    from pathlib import Path

    from ..reports.hunt import CANNOT, NEW, hunt, merge, table, with_table

    if args.write:
        output_path(args.write, "--write")
    if args.merge:
        missing = [p for p in args.merge if not os.path.isfile(p)]
        if missing:
            raise ValueError(f"argument --merge: {', '.join(missing)} is no file (give the "
                             f"hunt-PART.json files the parts wrote)")
        found = merge([Path(p) for p in args.merge])
    else:
        output_dir(args.out, "--out")
        jobs = args.jobs or max(1, (os.cpu_count() or 2) - 2)  # this machine's, at run time
        found = hunt(args.part, Path(args.out), jobs, args.budget, args.only, args.timeout,
                     max_n=args.max_n)
    text = table(found)
    if args.write:
        page = open(args.write).read() if os.path.isfile(args.write) else ""
        with writing(args.write, "--write"), open(args.write, "w") as fh:
            fh.write(with_table(page, text))
        print(f"table written to {args.write}")
    else:
        print(text)
    if any(f.verdict == NEW for f in found):
        return 1
    if not args.merge and found and all(f.verdict == CANNOT for f in found):
        # As check exits where nothing could be checked: the table holds no verdict.
        print(f"scancheck hunt: no target of part {args.part!r} can run here (of "
              f"{len(found)} tried)", file=sys.stderr)
        return 2
    return 0


def cmd_matrix(args: argparse.Namespace) -> int:
    from ..reports.matrix import run_matrix

    return run_matrix(args)


#: What each of explain's arrays must hold, beside the array it is measured against.
_DTYPE_RULES = {
    "INPUT": ("--dtype", lambda given, held: given == held,
              "--dtype names the dtype a text file is read as; give no --dtype with a .npy file"),
    "RESULT": ("INPUT", lambda given, held: np.can_cast(given, held, "safe"),
               "explain takes a RESULT of INPUT's dtype, or of one that holds every INPUT value "
               "(a promoting scan's, in which INPUT is judged)"),
    "--reference": ("RESULT", lambda given, held: np.can_cast(given, held, "safe"),
                    "a reference is of RESULT's dtype, or of one that holds every RESULT value "
                    "(float64 for a float32 RESULT)"),
}


#: How the files ``np.save`` and ``np.savez`` write begin.
_MAGIC = {".npy": b"\x93NUMPY", ".npz": b"PK"}


def _held_dtype(fh: BinaryIO, where: str, argname: str) -> np.dtype:
    """The dtype of the ``.npy`` array ``fh`` is open at, read from its header alone; a
    ValueError naming ``where`` where the header is damaged."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(fh)
        # Format 3.0 differs from 2.0 only in its header's encoding (utf-8).
        read = {(1, 0): fmt.read_array_header_1_0, (2, 0): fmt.read_array_header_2_0,
                (3, 0): fmt.read_array_header_2_0}.get(version)
        if read is None:
            raise ValueError(f"format version {version}; NumPy writes 1.0, 2.0 and 3.0")
        return read(fh)[2]
    except ValueError as exc:
        raise ValueError(f"{argname}: {where} is a damaged .npy file ({exc})") from None


def _check_saved(p: Path, argname: str) -> None:
    """A ValueError naming ``argname`` and the file unless it is a ``.npy`` or ``.npz`` file
    as NumPy writes them whose arrays hold no Python objects (which loading would unpickle)."""
    with p.open("rb") as fh:
        head = fh.read(len(_MAGIC[p.suffix]))
    if head != _MAGIC[p.suffix]:
        raise ValueError(f"{argname}: {p} is no {p.suffix} file (it does not begin as "
                         f"np.save{'z' * (p.suffix == '.npz')} writes one); give one, or "
                         f"numbers as text in a file of another suffix")
    held: list[tuple[str, np.dtype]] = []
    if p.suffix == ".npy":
        with p.open("rb") as fh:
            held.append((str(p), _held_dtype(fh, str(p), argname)))
    else:
        import zipfile

        try:
            with zipfile.ZipFile(p) as z:
                for name in z.namelist():
                    with z.open(name) as fh:
                        held.append((f"{p}:{name.removesuffix('.npy')}",
                                     _held_dtype(fh, f"{p}'s {name}", argname)))
        except zipfile.BadZipFile as exc:
            raise ValueError(f"{argname}: {p} is a damaged .npz file ({exc})") from None
    for where, dtype in held:
        if dtype.hasobject:
            raise ValueError(f"{argname}: {where} holds Python objects, which explain does "
                             f"not load (loading them would run pickled code); save an array "
                             f"of numbers")


def load_array(path: str, dtype: str | None = None, argname: str = "INPUT") -> np.ndarray:
    """A 1-D array from ``.npy``, ``.npz`` (its only array, or ``file.npz:key``) or text
    (whitespace or comma separated; ``dtype``, float32 by default, must hold every value
    exactly); a saved array's dtype must be what ``argname``'s rule allows beside
    ``dtype``."""
    file, _, key = path.partition(".npz:")
    if key:
        file += ".npz"
    p = Path(file)
    if not p.is_file():
        raise ValueError(f"{argname}: {file} is not a file")
    if p.suffix in (".npy", ".npz"):
        _check_saved(p, argname)
    if p.suffix == ".npy":
        a = np.load(p, allow_pickle=False)
    elif p.suffix == ".npz":
        with np.load(p, allow_pickle=False) as z:
            names = list(z.files)
            if not key and len(names) != 1:
                raise ValueError(f"{argname}: {file} holds {names}; name one as {file}:KEY")
            if key and key not in names:
                raise ValueError(f"{argname}: {file} has no array {key!r}; it holds {names}")
            a = z[key or names[0]]
    else:
        text = p.read_text().replace(",", " ").split()
        try:
            wide = np.array([float(t) for t in text], dtype=np.float64)
        except ValueError as exc:
            raise ValueError(f"{argname}: {file} is not a list of numbers ({exc})") from None
        with np.errstate(invalid="ignore", over="ignore"):  # told below, as not held exactly
            a = wide.astype(as_dtype(dtype or "float32"))
        back = a.astype(np.float64)
        if not np.array_equal(back, wide, equal_nan=True):
            k = int(np.flatnonzero(~((back == wide) | (np.isnan(wide) & np.isnan(back))))[0])
            raise ValueError(f"{argname}: {file}'s text is read as float64, and {a.dtype.name} "
                             f"changes some of its values ({text[k]} to {a[k].item()!r}); pass --dtype "
                             f"float64, or give {a.dtype.name} data as a .npy file")
    beside, allowed, rule = _DTYPE_RULES[argname]
    if dtype is not None and not allowed(as_dtype(dtype), a.dtype):
        raise ValueError(f"{argname}: {file} holds {a.dtype.name}, {beside} {dtype}: {rule}")
    if a.ndim != 1:
        raise ValueError(f"{argname}: {file} holds an array of shape {a.shape}; explain takes 1-D")
    return a
