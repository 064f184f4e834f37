"""Launch tables per device kind: the (block, params) each tuned variant runs at each size.

A table is data, one JSON file per device kind -- its name and compute capability, as CUDA
reports them -- under ``scancheck/kernels/tuned/``; one device's best launch is not
another's (the H100's table left the look-back at 0.89 x memcpy on an H200).
:func:`device_table` finds the current device's table, first of:

1. ``$SCANCHECK_TUNED_DIR/<kind>.json``, a folder of tables of the user's own (a tuning
   run writes one there);
2. the table the package carries for the device kind ("built-in");
3. one tuned on this machine before, kept in the user's cache folder
   (``$XDG_CACHE_HOME/scancheck/tuned``, else ``~/.cache/scancheck/tuned``) under a key of
   the device kind, the CUDA driver and runtime versions and a hash of the kernel sources
   and candidates: any of them changed, the table is tuned again;
4. a table tuned now, in at most :data:`TUNE_BUDGET_S` seconds (said on stderr as it
   starts, with the device), then kept there (``SCANCHECK_AUTOTUNE=0`` turns this off);
5. else the variant's default launch at every size.

A tuning run (``scancheck bench --tune sweep.json`` on a GPU) times every candidate launch;
:func:`choose` keeps, per (dtype, size), the fastest, and :func:`write_table` stores it:

    python -m scancheck.kernels.tune --from sweep.json [--to DIR]

writes ``DIR/<kind>.json`` (default: the package's own folder).  A table may only name its
variant's ``candidates``, which ``scancheck verify`` compares with their models: a table
that names anything else, or is not what this module writes, is refused with the file and
the field.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.cuda import NVRTC_OPTIONS, LaunchError, expand_source
from .registry import VARIANTS, Variant

#: The package's tables, one file per device kind.
TUNED_DIR = Path(__file__).with_name("tuned")
#: The variants whose launches are tuned, and the dtypes their tables cover.
TUNED_VARIANTS = ("decoupled_lookback",)
TUNED_DTYPES = ("float32", "float64", "int32", "int64")
#: Seconds a first-use tuning may take (compiles included; the measurement in flight when
#: they run out is the last).
TUNE_BUDGET_S = 20.0
#: The sizes (log2) a first-use tuning times, where they fit in device memory; a table row
#: covers the sizes up to its own, the last row all larger ones.
AUTOTUNE_LOG2_SIZES = (16, 20, 24, 28)
#: Launches a first-use tuning tries per (dtype, size): those the package's tables chose for
#: any device, then the variant's default, in that order.
AUTOTUNE_CANDIDATES = 12
AUTOTUNE_ENV = "SCANCHECK_AUTOTUNE"
TABLES_ENV = "SCANCHECK_TUNED_DIR"
#: Fields of a table file other than its variants.
_META = ("device", "compute_capability", "note", "fingerprint")
_CC = re.compile(r"^\d+\.\d+$")


class TableError(ValueError):
    """A launch table that cannot be used; the message names its file and the field."""


@dataclass(frozen=True)
class DeviceKind:
    """A device as its tables are keyed: CUDA's name for it and its compute capability."""

    name: str
    compute_capability: str  # "9.0"

    @property
    def key(self) -> str:
        """The stem of its table's file name: ``NVIDIA_H100_80GB_HBM3-sm_90``."""
        return (re.sub(r"[^A-Za-z0-9]+", "_", self.name).strip("_")
                + "-sm_" + self.compute_capability.replace(".", ""))

    def __str__(self) -> str:
        return f"{self.name} (sm_{self.compute_capability.replace('.', '')})"


def current_device() -> DeviceKind:
    """The kind of the current CUDA device."""
    import cupy as cp

    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    return DeviceKind(props["name"].decode(), f"{props['major']}.{props['minor']}")


Table = dict[str, dict[str, list[dict]]]


@dataclass(frozen=True)
class LaunchTable:
    """One device's table, {variant: {dtype: rows by increasing size}}, and where it came
    from (:attr:`source`, as ``bench`` states it)."""

    rows: Table
    source: str
    path: Path | None = None

    def launch(self, variant: str | Variant, dtype: str, n: int) -> tuple[int, dict[str, int]]:
        """The (block, params) this table gives ``n`` elements of ``dtype``."""
        var = VARIANTS[variant] if isinstance(variant, str) else variant
        return var.tuned(dtype, n, self.rows)


# -- reading and writing tables ----------------------------------------------------------


def _fail(path: Path | str, where: str, what: str) -> TableError:
    return TableError(f"{path}: {where}: {what}")


def check_table(data: Any, path: Path | str, kind: DeviceKind | None = None) -> Table:
    """The variants' rows of a table file's contents, each launch resolved; raises
    :class:`TableError` naming ``path`` and the field where anything is amiss: a field of
    the wrong type, a variant, dtype or parameter unknown, a launch that is not one of its
    variant's candidates, rows not by increasing size, or a table of another device kind."""
    if not isinstance(data, dict):
        raise _fail(path, "the top level", f"must be a JSON object, not {type(data).__name__}")
    for key in ("device", "compute_capability"):
        if not isinstance(data.get(key), str):
            raise _fail(path, f"field {key!r}", f"must be a string, got {data.get(key)!r}")
    if not _CC.match(data["compute_capability"]):
        raise _fail(path, "field 'compute_capability'",
                    f"{data['compute_capability']!r} is not of the form '9.0'")
    if kind is not None and (data["device"], data["compute_capability"]) != (
            kind.name, kind.compute_capability):
        raise _fail(path, "fields 'device', 'compute_capability'",
                    f"the table is for {data['device']} (sm {data['compute_capability']}), "
                    f"not {kind}")
    table: Table = {}
    for name, by_dtype in data.items():
        if name in _META:
            continue
        if name not in VARIANTS:
            raise _fail(path, f"field {name!r}", f"is not a variant; allowed: "
                        f"{', '.join(_META)} and {', '.join(TUNED_VARIANTS)}")
        var = VARIANTS[name]
        if not isinstance(by_dtype, dict):
            raise _fail(path, f"field {name!r}", "must map dtypes to lists of rows")
        allowed = var.candidate_launches()
        table[name] = {}
        for dtype, rows in by_dtype.items():
            where = f"{name}.{dtype}"
            if dtype not in var.dtypes:
                raise _fail(path, f"field {where!r}", f"{dtype!r} is not a dtype of {name}; "
                            f"allowed: {', '.join(var.dtypes)}")
            if not isinstance(rows, list) or not rows:
                raise _fail(path, f"field {where!r}", "must be a non-empty list of rows")
            table[name][dtype] = [_check_row(row, var, allowed, path, f"{where}[{i}]")
                                  for i, row in enumerate(rows)]
            sizes = [r["up_to_log2"] for r in rows]
            if sizes != sorted(set(sizes)):
                raise _fail(path, f"field {where!r}",
                            f"rows are not by increasing size: up_to_log2 {sizes}")
    return table


def _check_row(row: Any, var: Variant, allowed: list, path: Path | str, where: str) -> dict:
    if not isinstance(row, dict) or set(row) != {"up_to_log2", "block", "params"}:
        got = sorted(row) if isinstance(row, dict) else type(row).__name__
        raise _fail(path, f"field {where!r}", f"a row has exactly the fields up_to_log2, "
                    f"block and params; got {got}")
    for key in ("up_to_log2", "block"):
        value = row[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise _fail(path, f"field '{where}.{key}'",
                        f"must be a non-negative integer, got {value!r}")
    if not isinstance(row["params"], dict):
        raise _fail(path, f"field '{where}.params'", f"must be an object, got {row['params']!r}")
    try:
        params = var.resolve_params(row["params"])
    except LaunchError as exc:
        raise _fail(path, f"field '{where}.params'", str(exc)) from None
    if (row["block"], params) not in allowed:
        raise _fail(path, f"field {where!r}", f"block={row['block']} {row['params']} is not "
                    f"one of the candidates of {var.name} (scancheck verify checks those alone)")
    return {"up_to_log2": row["up_to_log2"], "block": row["block"], "params": params}


def read_table(path: Path, kind: DeviceKind | None = None) -> tuple[Table, dict]:
    """(the checked rows, the whole file's contents) of the table file ``path``; raises
    :class:`TableError` naming the file, and the field, where it cannot be used."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as exc:
        raise TableError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise TableError(f"{path}: is not JSON: {exc}") from None
    return check_table(data, path, kind), data


def write_table(path: Path, kind: DeviceKind, table: Table, note: str,
                fingerprint: dict | None = None) -> Path:
    """Write ``table`` for ``kind`` to ``path`` (a ``.json`` file, or else a folder to hold
    ``<kind.key>.json``) and read it back through :func:`read_table`'s checks; the file."""
    path = Path(path)
    if path.suffix != ".json":
        path = path / f"{kind.key}.json"
    head = {"device": kind.name, "compute_capability": kind.compute_capability, "note": note}
    if fingerprint is not None:
        head["fingerprint"] = fingerprint
    # One row a line: the table is read by people too, and a new run's diff stays short.
    parts = [f" {json.dumps(k)}: {json.dumps(v)}" for k, v in head.items()]
    for name, by_dtype in table.items():
        dtypes = [f'  {json.dumps(dt)}: [\n' + ",\n".join(f"   {json.dumps(r)}" for r in rows)
                  + "\n  ]" for dt, rows in by_dtype.items()]
        parts.append(f" {json.dumps(name)}: {{\n" + ",\n".join(dtypes) + "\n }")
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f".{path.name}.{os.getpid()}.part")
    part.write_text("{\n" + ",\n".join(parts) + "\n}\n")
    read_table(part, kind)
    part.replace(path)  # whole or not at all, for a process reading beside this one
    return path


def choose(sweep: dict[str, Any]) -> Table:
    """{variant: {dtype: rows}} from a tuning run: per (dtype, size) the candidate with the
    least median time; a row covers sizes up to its own and down to the previous row's, and
    runs of one choice are merged into their largest size.  Raises ValueError for a timed
    launch that is not one of its variant's candidates (the table may only name those)."""
    table: Table = {}
    for res in sorted(sweep["results"], key=lambda r: (r["variant"], r["dtype"], r["log2_n"])):
        var = VARIANTS[res["variant"]]
        allowed = var.candidate_launches()
        timed = [c for c in res["configs"] if c.get("ms") is not None]
        for c in timed:
            if (c["block"], var.resolve_params(c["params"])) not in allowed:
                raise ValueError(f"{var.name} block={c['block']} {c['params']} was timed but is "
                                 f"not one of its candidates {allowed}")
        if not timed:
            continue
        best = min(timed, key=lambda c: c["ms"])
        rows = table.setdefault(var.name, {}).setdefault(res["dtype"], [])
        row = {"up_to_log2": int(res["log2_n"]), "block": int(best["block"]),
               "params": var.resolve_params(best["params"])}
        if rows and (rows[-1]["block"], rows[-1]["params"]) == (row["block"], row["params"]):
            rows[-1] = row
        else:
            rows.append(row)
    return table


# -- finding the current device's table ----------------------------------------------------


def cache_dir() -> Path:
    """Where tables tuned on this machine are kept."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "scancheck" / "tuned"


def source_hash() -> str:
    """A hash of what a tuned launch's speed depends on in this package: the tuned variants'
    kernel sources (headers inlined), their candidates and the compile options."""
    digest = hashlib.sha256()
    for name in TUNED_VARIANTS:
        var = VARIANTS[name]
        digest.update(expand_source(var.source).encode())
        digest.update(repr(var.candidate_launches()).encode())
    digest.update(repr(NVRTC_OPTIONS).encode())
    return digest.hexdigest()[:16]


def fingerprint(kind: DeviceKind, driver: int, runtime: int, source: str) -> dict:
    """What a cached table was tuned under: the device kind, the CUDA driver and runtime
    versions and :func:`source_hash`."""
    return {"device": kind.name, "compute_capability": kind.compute_capability,
            "driver": int(driver), "runtime": int(runtime), "source": source}


def cache_path(fp: dict, where: Path | None = None) -> Path:
    """The cache file of a table tuned under ``fp``: the device kind, then a hash of all of it."""
    kind = DeviceKind(fp["device"], fp["compute_capability"])
    key = hashlib.sha256(json.dumps(fp, sort_keys=True).encode()).hexdigest()[:12]
    return (where or cache_dir()) / f"{kind.key}-{key}.json"


def read_cached(fp: dict, where: Path | None = None) -> tuple[Table, Path] | None:
    """The table kept for ``fp``, or None where there is none, or it was tuned under another
    fingerprint (stale), or it cannot be used (said on stderr; it is tuned again)."""
    path = cache_path(fp, where)
    if not path.is_file():
        return None
    try:
        table, data = read_table(path, DeviceKind(fp["device"], fp["compute_capability"]))
    except TableError as exc:
        _say(f"the cached launch table is unusable, tuning again: {exc}")
        return None
    return (table, path) if data.get("fingerprint") == fp else None


def autotune_enabled(environ: dict[str, str] | None = None) -> bool:
    """Whether a device without a table may be tuned on first use (``SCANCHECK_AUTOTUNE=0``
    says no)."""
    value = (os.environ if environ is None else environ).get(AUTOTUNE_ENV, "1")
    return value.strip().lower() not in ("0", "no", "false", "off")


def device_table(kind: DeviceKind | None = None, tune_now: bool | None = None,
                 measure: Callable[[str, int, int, dict], float | None] | None = None,
                 versions: tuple[int, int] | None = None,
                 environ: dict[str, str] | None = None, cache: Path | None = None,
                 builtin: Path = TUNED_DIR, clock: Callable[[], float] = time.monotonic
                 ) -> LaunchTable:
    """The launch table for ``kind`` (default: the current device's), found as the module
    says.  ``tune_now`` overrides ``SCANCHECK_AUTOTUNE``; ``measure`` times a launch for a
    tuning now (default :func:`device_measure`);
    ``versions`` are the CUDA driver's and runtime's (default: the current ones)."""
    env = os.environ if environ is None else environ
    kind = kind or current_device()
    own = env.get(TABLES_ENV)
    if own and (Path(own) / f"{kind.key}.json").is_file():
        path = Path(own) / f"{kind.key}.json"
        return LaunchTable(read_table(path, kind)[0], f"from {path}", path)
    path = Path(builtin) / f"{kind.key}.json"
    if path.is_file():
        return LaunchTable(read_table(path, kind)[0], f"built-in for {kind}", path)
    fp = fingerprint(kind, *(versions or _cuda_versions()), source_hash())
    found = read_cached(fp, cache)
    if found is not None:
        return LaunchTable(found[0], f"cached from {found[1]}", found[1])
    if not (autotune_enabled(env) if tune_now is None else tune_now):
        return LaunchTable({}, f"defaults: no table for {kind}, and {AUTOTUNE_ENV}=0")
    _say(f"no launch table for {kind}: tuning the look-back on it now, for at most "
         f"{TUNE_BUDGET_S:.0f} s ({AUTOTUNE_ENV}=0 turns this off)")
    try:
        result = autotune(measure or device_measure, clock=clock)
    finally:
        _inputs.clear()  # the largest size's arrays: GiBs of device memory
    note = (f"Tuned on first use on {kind} ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})"
            f": {result.summary()}.")
    path = cache_path(fp, cache)
    try:
        write_table(path, kind, result.table, note, fp)
    except OSError as exc:
        _say(f"tuned in {result.seconds:.1f} s ({result.summary()}); not kept: {exc}")
        return LaunchTable(result.table, f"tuned now for {kind} ({result.summary()}; not kept)")
    _say(f"tuned in {result.seconds:.1f} s ({result.summary()}); kept in {path}")
    return LaunchTable(result.table, f"tuned now for {kind} in {result.seconds:.0f} s "
                                     f"({result.summary()}), kept in {path}", path)


def _cuda_versions() -> tuple[int, int]:
    import cupy as cp

    return cp.cuda.runtime.driverGetVersion(), cp.cuda.runtime.runtimeGetVersion()


def _say(text: str) -> None:
    print(f"scancheck: {text}", file=sys.stderr, flush=True)


# -- tuning on first use -------------------------------------------------------------------


@dataclass
class AutotuneResult:
    """A first-use tuning: its table, the launches timed of those planned, and its seconds."""

    table: Table
    timed: int
    planned: int
    seconds: float
    sweep: dict = field(default_factory=dict)

    def summary(self) -> str:
        cut = "" if self.timed == self.planned else ", the time bound reached"
        return f"{self.timed} of {self.planned} launches timed{cut}"


def first_use_candidates(variant: Variant, tables: Iterable[Table] | None = None,
                         limit: int = AUTOTUNE_CANDIDATES) -> list[tuple[int, dict[str, int]]]:
    """The launches a first-use tuning tries, most promising first: those the package's
    tables choose, by how many rows choose them, then the variant's default launch."""
    counts: dict[tuple, int] = {}
    for table in tables if tables is not None else builtin_tables():
        for rows in table.get(variant.name, {}).values():
            for r in rows:
                key = (r["block"], tuple(sorted(variant.resolve_params(r["params"]).items())))
                counts[key] = counts.get(key, 0) + 1
    ranked = sorted(counts, key=lambda k: -counts[k])
    default = (256, tuple(sorted(variant.resolve_params(None).items())))
    if default not in ranked:
        ranked.append(default)
    return [(b, variant.resolve_params(dict(p))) for b, p in ranked[:limit]]


def builtin_tables(folder: Path = TUNED_DIR) -> list[Table]:
    """Every table the package carries."""
    return [read_table(p)[0] for p in sorted(Path(folder).glob("*.json"))]


def autotune(measure: Callable[[str, int, int, dict], float | None],
             clock: Callable[[], float] = time.monotonic, budget_s: float = TUNE_BUDGET_S,
             dtypes: tuple[str, ...] = TUNED_DTYPES,
             log2_sizes: tuple[int, ...] = AUTOTUNE_LOG2_SIZES,
             variant: str = TUNED_VARIANTS[0],
             candidates: list[tuple[int, dict[str, int]]] | None = None) -> AutotuneResult:
    """A table from timing ``candidates`` (default :func:`first_use_candidates`) at each
    (dtype, size) with ``measure(dtype, log2_n, block, params)`` (ms, or None for a launch
    refused or a size that does not fit), until ``budget_s`` seconds of ``clock`` have passed:
    candidates in turn, each at every (dtype, size), so that a cut run has tried its best
    candidates everywhere."""
    var = VARIANTS[variant]
    cands = candidates if candidates is not None else first_use_candidates(var)
    start = clock()
    timed = 0
    results = {(dt, k): {"variant": var.name, "dtype": dt, "log2_n": k, "configs": []}
               for dt in dtypes for k in log2_sizes}
    planned = len(cands) * len(results)
    for block, params in cands:
        for res in results.values():
            if clock() - start >= budget_s:
                break
            res["configs"].append({"block": block, "params": params,
                                   "ms": measure(res["dtype"], res["log2_n"], block, params)})
            timed += 1
    sweep = {"results": list(results.values())}
    return AutotuneResult(choose(sweep), timed, planned, clock() - start, sweep)


def time_gpu(fn: Callable[[], Any], warmup: int = 3, reps: int = 20) -> float:
    """Median milliseconds of ``fn`` on the current stream, timed with CUDA events."""
    import cupy as cp

    for _ in range(warmup):
        fn()
    cp.cuda.Device().synchronize()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(reps):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return statistics.median(times)


_inputs: dict[tuple[str, int], Any] = {}


def device_measure(dtype: str, log2_n: int, block: int, params: dict,
                   variant: str = TUNED_VARIANTS[0]) -> float | None:
    """Median ms of ``variant``'s launch at (block, params) on 2**log2_n values of ``dtype``
    on the current device (its instantiation alone compiled); None where the launch is
    refused or the arrays do not fit in free device memory."""
    import cupy as cp

    from .launch import plan

    n = 2**log2_n
    if (dtype, log2_n) not in _inputs:
        _inputs.clear()  # one size's arrays at a time
        cp.get_default_memory_pool().free_all_blocks()
        free, _ = cp.cuda.runtime.memGetInfo()
        if free < 3 * n * cp.dtype(dtype).itemsize + 2**28:
            return None
        x = cp.ones(n, dtype=dtype)  # the speed of an add scan does not depend on the values
        _inputs[(dtype, log2_n)] = (x, cp.empty_like(x))
    x, out = _inputs[(dtype, log2_n)]
    try:
        run = plan(x, variant, "add", block, params, out=out, narrow=True)
    except LaunchError:
        return None
    return time_gpu(run, warmup=2, reps=5)


def write_sweep_table(sweep: dict[str, Any], to: Path) -> tuple[Path, Table]:
    """The table :func:`choose` makes of a tuning run, written for the run's device into
    ``to`` (a folder: as ``<kind>.json``; or a file); the file and the table."""
    kind = DeviceKind(sweep["device"], sweep["compute_capability"])
    table = choose(sweep)
    note = (f"Chosen by python -m scancheck.kernels.tune from a tuning run on {kind} "
            f"({sweep.get('date', 'undated')}).")
    return write_table(Path(to), kind, table, note), table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scancheck.kernels.tune", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--from", dest="source", required=True,
                        help="the tuning run's JSON (scancheck bench --tune PATH)")
    parser.add_argument("--to", default=str(TUNED_DIR),
                        help=f"the folder to write <device>.json in, or a .json file (default: "
                             f"{TUNED_DIR})")
    args = parser.parse_args(argv)
    try:
        sweep = json.loads(Path(args.source).read_text())
        path, table = write_sweep_table(sweep, Path(args.to))
    except (OSError, ValueError, KeyError) as exc:
        print(f"--from {args.source}: cannot read a tuning run from it: {exc!r}", file=sys.stderr)
        return 2
    for name, by_dtype in table.items():
        for dtype, rows in by_dtype.items():
            shown = ", ".join(f"<=2^{r['up_to_log2']}: b{r['block']} {r['params']}" for r in rows)
            print(f"{name} {dtype}: {shown}")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
