"""The tuned launch table, written from a tuning run's timings.

    python -m scancheck.kernels.tune --from tune.json [--to scancheck/kernels/tuned.json]

A tuning run (``scancheck bench --tune tune.json`` on a GPU) times every candidate launch
of every tunable variant at each (dtype, size).  :func:`choose` keeps, per (dtype, size),
the fastest candidate, and :func:`write_table` stores the result as the data that
:meth:`Variant.tuned <scancheck.kernels.registry.Variant.tuned>` reads: a launch is
chosen by looking a size up in that table, never by code.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .registry import TUNED_PATH, VARIANTS, tuned_table


def choose(sweep: dict[str, Any]) -> dict[str, dict[str, list[dict]]]:
    """{variant: {dtype: rows}} from a tuning run: per (dtype, size) the candidate with the
    least median time; a row covers sizes up to its own and down to the previous row's, and
    runs of one choice are merged into their largest size.  Raises ValueError for a timed
    launch that is not one of its variant's candidates (the table may only name those)."""
    table: dict[str, dict[str, list[dict]]] = {}
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


def write_table(table: dict[str, dict[str, list[dict]]], note: str, path: Path = TUNED_PATH
                ) -> None:
    """Write ``table`` to ``path`` and read it back through the registry's checks."""
    path = Path(path)
    # One row a line: the table is read by people too, and diffs of a new run stay short.
    parts = [f'{{\n "note": {json.dumps(note)}']
    for name, by_dtype in table.items():
        dtypes = [f'  {json.dumps(dt)}: [\n' + ",\n".join(f"   {json.dumps(r)}" for r in rows)
                  + "\n  ]" for dt, rows in by_dtype.items()]
        parts.append(f' {json.dumps(name)}: {{\n' + ",\n".join(dtypes) + "\n }")
    path.write_text(",\n".join(parts) + "\n}\n")
    tuned_table.cache_clear()
    tuned_table(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scancheck.kernels.tune", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--from", dest="source", required=True,
                        help="the tuning run's JSON (scancheck bench --tune PATH)")
    parser.add_argument("--to", default=str(TUNED_PATH),
                        help=f"the table to write (default: {TUNED_PATH})")
    args = parser.parse_args(argv)
    try:
        sweep = json.loads(Path(args.source).read_text())
        table = choose(sweep)
    except (OSError, ValueError, KeyError) as exc:
        print(f"--from {args.source}: cannot read a tuning run from it: {exc!r}", file=sys.stderr)
        return 2
    note = (f"Chosen by python -m scancheck.kernels.tune from a tuning run on "
            f"{sweep.get('device', 'an unnamed device')} ({sweep.get('date', 'undated')}).")
    write_table(table, note, Path(args.to))
    for name, by_dtype in table.items():
        for dtype, rows in by_dtype.items():
            shown = ", ".join(f"<=2^{r['up_to_log2']}: b{r['block']} {r['params']}" for r in rows)
            print(f"{name} {dtype}: {shown}")
    print(f"wrote {args.to}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
