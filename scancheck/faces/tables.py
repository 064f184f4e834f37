"""Plain-text tables for a terminal: the rows of a report aligned in columns, and columns
cut or wrapped to a width so that a table fits."""

from __future__ import annotations

import textwrap

import numpy as np


def format_table(rows: list[dict[str, object]], title: str | None = None) -> str:
    """Render report rows as an aligned plain-text table (floats in 3 significant digits); a
    cell of several lines makes its row that many lines high."""
    if not rows:
        return "(no rows)"
    cols = list(rows[0])

    def cell(v: object) -> list[str]:
        if isinstance(v, float | np.floating):
            return [f"{v:.3g}"]
        return str(v).split("\n")

    body = [[cell(r.get(c, "")) for c in cols] for r in rows]
    widths = [max(len(c), *(len(ln) for b in body for ln in b[i])) for i, c in enumerate(cols)]
    lines = [title] if title else []
    lines.append("  ".join(c.ljust(w) for c, w in zip(cols, widths)).rstrip())
    lines.append("  ".join("-" * w for w in widths))
    for b in body:
        for k in range(max(map(len, b))):
            lines.append("  ".join((v[k] if k < len(v) else "").ljust(w)
                                   for v, w in zip(b, widths)).rstrip())
    return "\n".join(lines)


def fit_columns(rows: list[dict], widths: dict[str, int], ends: tuple[str, ...] = (),
                wrap: tuple[str, ...] = ()) -> list[dict]:
    """``rows`` with the named columns cut to their widths (an ellipsis where cut), so that
    a :func:`format_table` of them fits a terminal; the columns in ``ends`` keep their ends
    (a target's function, not the start of its path), and those in ``wrap`` are kept whole,
    each of their lines wrapped at spaces onto lines of the width (a line after the first
    of one line indented)."""
    def cut(k: str, v: object, w: int) -> object:
        text = str(v)
        if k in wrap:
            return "\n".join(part for line in text.split("\n")
                             for part in textwrap.wrap(line, w, subsequent_indent="  ") or [""])
        if len(text) <= w:
            return text
        return "…" + text[len(text) - w + 1:] if k in ends else text[:w - 1] + "…"

    return [{k: cut(k, v, widths[k]) if k in widths else v for k, v in r.items()} for r in rows]


#: The width of a line told as work goes on (a check's end, a run's): a terminal's of 120
#: columns, where the tables keep to 100 for their own cuts.
LINE_WIDTH = 120


def cut_words(text: str, width: int = LINE_WIDTH) -> str:
    """``text`` cut to ``width`` characters at a word's end, an ellipsis where cut."""
    return text if len(text) <= width else text[:width - 1].rsplit(" ", 1)[0] + " …"


def around(text: str, words: str, width: int) -> str:
    """``text`` cut to ``width`` characters about its first ``words`` where it holds them
    and is longer (an ellipsis at each end cut), else as :func:`fit_columns` cuts it."""
    at = text.find(words) if words else -1
    if len(text) <= width or at < 0 or len(words) > width - 2:
        return text if len(text) <= width else text[:width - 1] + "…"
    start = max(0, min(at - (width - len(words)) // 2, len(text) - width))
    end = start + width
    head, tail = "…" if start else "", "…" if end < len(text) else ""
    return head + text[start + len(head):end - len(tail)] + tail
