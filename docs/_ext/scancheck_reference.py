"""The reference pages, generated from scancheck's own code at build time.

Each page under ``docs/reference/`` that holds the line ``<!-- generated: NAME -->`` gets the
Markdown that :data:`GENERATORS` [NAME] returns in that line's place, as Sphinx reads it
(the ``source-read`` event): nothing is written into the source tree, and no description is
typed twice.  What each generator reads:

* ``cli`` -- every command and flag, from :func:`scancheck.faces.cli.main.build_parser`;
* ``spec`` -- every :class:`~scancheck.targets.spec.TargetSpec` field, its type, default, flag
  and the ``#:`` comment above it in its definition, and the rule tables its values name;
* ``diagnoses`` -- every :class:`~scancheck.engine.diagnosis.Cause`, ranked, with the negative
  controls of :data:`scancheck.controls.CONTROLS` that show it;
* ``plugin`` -- the pytest plugin's options, from :func:`scancheck.faces.plugin.hooks.pytest_addoption`;
* ``variants`` -- the reference kernels, from :data:`scancheck.kernels.registry.VARIANTS`;
* ``operators`` -- the operator table, from :data:`scancheck.core.operators.OPERATORS`.

Run ``python docs/_ext/scancheck_reference.py NAME`` to print one page's Markdown.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import os
import re
import sys
import tokenize
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from typing import Any

#: The marker a reference page holds where its generated part goes, and the quoted note
#: below it that tells a reader of the source how to see that part: both replaced.
MARKER = re.compile(r"^<!-- generated: ([a-z]+) -->\n(?:>.*\n)*", re.MULTILINE)
#: Columns the usage lines are laid out in (as the command prints them on a wide terminal).
USAGE_COLUMNS = 100


def cell(text: Any) -> str:
    """``text`` as one cell of a Markdown table: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def code(text: Any) -> str:
    """``text`` as inline code, whatever backticks it holds."""
    text = str(text)
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown(text: str) -> str:
    """reST inline markup in a docstring or comment as Markdown: ``x`` and :role:`x` as code
    (a role's ``~`` shortening the name to its last part)."""
    text = re.sub(r":[a-z]+:`~?([^`]*)`",
                  lambda m: code(m.group(1).split(".")[-1] if m.group(0).split("`")[1][:1] == "~"
                                 else m.group(1)), text)
    return re.sub(r"``([^`]+)``", lambda m: code(m.group(1)), text)


def table(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    """A Markdown table of ``rows`` (each cell already Markdown, made one line here)."""
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


@contextmanager
def columns(width: int):
    """argparse lays help out to the terminal's width: fix it while the pages are made."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    try:
        yield
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


# -- the command line --------------------------------------------------------------------


def _flags(action: argparse.Action) -> str:
    """How an argument is typed: its option strings and metavar, or its positional name."""
    if not action.option_strings:
        return code(action.metavar or action.dest)
    takes = action.nargs != 0 and not isinstance(action, argparse.BooleanOptionalAction)
    metavar = ""
    if takes:
        if action.metavar:
            metavar = f" {action.metavar}"
        elif action.choices:
            metavar = " {" + ",".join(map(str, action.choices)) + "}"
        else:
            metavar = f" {action.dest.upper()}"
        if action.nargs in ("+", "*"):
            metavar = f"{metavar} ..." if action.nargs == "+" else f" [{metavar.strip()} ...]"
        elif action.nargs == "?":
            metavar = f" [{metavar.strip()}]"
    return ", ".join(code(s + metavar) for s in action.option_strings)


def _default(action: argparse.Action) -> str:
    """An argument's default as the reader needs it ("" where it has none worth saying)."""
    if action.default in (None, False, argparse.SUPPRESS) or action.nargs == 0:
        return ""
    if isinstance(action.default, list):
        return code(" ".join(map(str, action.default)))
    return code(action.default)


def _help(action: argparse.Action) -> str:
    text = action.help or ""
    if action.choices and action.metavar and action.option_strings:
        text += f" (one of: {', '.join(map(str, action.choices))})"
    return text


def _arguments(parser: argparse.ArgumentParser) -> str:
    out = []
    for group in parser._action_groups:
        actions = [a for a in group._group_actions if not isinstance(a, argparse._HelpAction)]
        if not actions:
            continue
        if group.title not in ("positional arguments", "options", "optional arguments"):
            out.append(f"**{group.title}**" + (f": {group.description}" if group.description else ""))
            out.append("")
        out.append(table(["argument", "default", "what it sets"],
                         [[_flags(a), _default(a), _help(a)] for a in actions]))
    return "\n".join(out)


def cli_page() -> str:
    """Every ``scancheck`` command with its usage, description and arguments."""
    from scancheck.faces.cli.main import build_parser, builtin_availability

    with columns(USAGE_COLUMNS):
        parser = build_parser()
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        helps = {a.dest: a.help for a in sub._choices_actions}
        out = [f"```text\n{parser.format_usage().strip()}\n```\n",
               table(["command", "what it does"],
                     [[f"[{code('scancheck ' + name)}](#scancheck-{name})", helps.get(name, "")]
                      for name in sub.choices])]
        for name, p in sub.choices.items():
            out.append(f"## scancheck {name}\n")
            said = helps.get(name, "")
            out.append(f"{said}{'' if said.endswith(('.', '?', '!')) else '.'}\n"
                       if not p.description else f"{p.description}\n")
            out.append(f"```text\n{p.format_usage().strip()}\n```\n")
            out.append(_arguments(p))
            if getattr(p, "epilog_from", None) is not None:  # the built-ins, from their table
                here, lacked = builtin_availability()
                out.append("Built-in targets the machine that built this page can run:\n")
                out.append(", ".join(code(n) for n in here) + "\n")
                if lacked:
                    need = ", ".join(f"{what} ({count})" for what, count in lacked.items())
                    out.append(f"And more that need what it lacked, by what they need: {need}; "
                               f"[the conformance matrix](../conformance-matrix.md) lists "
                               f"every one.\n")
    return "\n".join(out)


# -- TargetSpec ----------------------------------------------------------------------------


def _attribute_docs(module: str) -> dict[tuple[str, str], str]:
    """The ``#:`` comments above each attribute of ``module``, as Sphinx's autodoc reads them."""
    from sphinx.pycode import ModuleAnalyzer

    return {key: " ".join(line.strip() for line in lines).strip()
            for key, lines in ModuleAnalyzer.for_module(module).find_attr_docs().items()}


def _flag_helps() -> dict[str, str]:
    """Each ``check`` flag's help, by flag."""
    from scancheck.faces.cli.main import build_parser

    with columns(USAGE_COLUMNS):
        parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {s: a.help or "" for a in sub.choices["check"]._actions for s in a.option_strings}


def spec_page() -> str:
    """Every TargetSpec field: type, default, flag and what it declares; the rule tables."""
    from scancheck.core import rules
    from scancheck.targets import contracts, spec

    docs = _attribute_docs("scancheck.targets.spec")
    helps = _flag_helps()
    rows = []
    for f in dataclasses.fields(spec.TargetSpec):
        flag = spec.spec_flag(f.name)
        text = markdown(docs.get(("TargetSpec", f.name)) or helps.get(flag, ""))
        rows.append([code(f.name), code(f.type), code(repr(f.default)), code(flag), text])
    out = [table(["field", "type", "default", "flag", "what it declares"], rows)]
    out.append("## The values of the rule fields\n")
    for field_name, values, where in (
            ("zeros", rules.ZERO_ORDERS, "scancheck.core.rules.ZERO_ORDERS"),
            ("nans", rules.NAN_RULES, "scancheck.core.rules.NAN_RULES"),
            ("nan_prefix", rules.NAN_PREFIXES, "scancheck.core.rules.NAN_PREFIXES"),
            ("subnormals", rules.SUBNORMAL_RULES, "scancheck.core.rules.SUBNORMAL_RULES"),
            ("overflow", contracts.OVERFLOW_RULES, "scancheck.targets.contracts.OVERFLOW_RULES")):
        out.append(f"### {field_name}\n")
        out.append(f"From {code(where)}.\n")
        out.append(table(["value", "meaning"], [[code(k), v] for k, v in values.items()]))
    out.append("### subnormals='flush': what each operator must do\n")
    out.append(f"From {code('scancheck.core.rules.FLUSH_RULES')}; each operator's column is in "
               "the [operator table](operators.md).\n")
    out.append(table(["flush column", "meaning"],
                     [[code(k), v] for k, v in rules.FLUSH_RULES.items()]))
    out.append("### segments\n")
    out.append(f"{markdown(docs.get(('', 'SEGMENT_KINDS'), ''))}\n")
    out.append(", ".join(code(k) for k in spec.SEGMENT_KINDS) + "\n")
    out.append("### device\n")
    out.append(f"{markdown(docs.get(('', 'DEVICES'), ''))}\n")
    return "\n".join(out)


# -- diagnoses -----------------------------------------------------------------------------


def _member_comments(cls: type) -> dict[str, str]:
    """For each member of the enum ``cls``, the ``#:`` comment above it or the comment that
    ends its line, as written in its definition."""
    import inspect

    docs = {name: text for (owner, name), text in _attribute_docs(cls.__module__).items()
            if owner == cls.__name__}
    source = inspect.getsource(cls)
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            line = tok.line.strip()
            member = re.match(r"([A-Z_]+) = -?\d+", line)
            if member and member.group(1) not in docs:
                docs[member.group(1)] = tok.string.lstrip("#").strip()
    return docs


def diagnoses_page() -> str:
    """Every cause, ranked, with what it means and the negative controls that show it."""
    from scancheck.controls import CONTROLS
    from scancheck.engine.diagnosis import Cause, Reason

    comments = _member_comments(Cause)
    ranked = sorted(Cause, key=lambda c: c.value)
    out = ["The verdict names the highest-ranked cause among the failures, in this order "
           "(first is highest):\n",
           " > ".join(f"[{c.label}](#{_anchor(c)})" for c in ranked) + "\n",
           table(["rank", "cause", "name in JSON", "controls that show it"],
                 [[i + 1, c.label, code(c.name), sum(k.cause is c for k in CONTROLS)]
                  for i, c in enumerate(ranked)])]
    for c in ranked:
        out.append(f"## {c.label}\n")
        out.append(f"{code('Cause.' + c.name)}. {markdown(_sentence(comments.get(c.name, '')))}\n")
        shows = [k for k in CONTROLS if k.cause is c]
        out.append(f"Negative controls whose expected diagnosis is this cause ({len(shows)}): "
                   "each is checked by `scancheck check --controls` and by the test suite, "
                   "and must be told this cause with the words shown.\n")
        out.append(table(["control", "runs on", "its diagnosis contains", "what catches it"],
                         [[k.name, "GPU" if k.gpu else "CPU",
                           "; ".join(code(w) for w in (k.expect, *k.also)), k.caught_by]
                          for k in shows]))
    reasons = _member_comments(Reason)
    out.append("## Reasons\n")
    out.append("Beside its cause, every failure carries a reason: what its check found, the "
               "criterion an output broke or why the target gave no answer (`reason` in the "
               "JSON report).  Every decision of the search and of the diagnosis reads the "
               "reason; the words of a message are only its rendering.\n")
    out.append(table(["reason", "name in JSON", "more"],
                     [[r.label, code(r.name), markdown(_sentence(reasons.get(r.name, "")))]
                      for r in Reason]))
    return "\n".join(out)


def _anchor(cause: Any) -> str:
    """The anchor MyST gives the heading of ``cause``'s section."""
    return re.sub(r"[^a-z0-9 -]", "", cause.label.lower()).replace(" ", "-")


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return ""
    return text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")


# -- the pytest plugin ---------------------------------------------------------------------


class _Recorder:
    """Stands for pytest's parser and its option groups: records each option declared."""

    def __init__(self) -> None:
        self.options: list[tuple[tuple[str, ...], dict[str, Any]]] = []

    def getgroup(self, *args: Any, **kwargs: Any) -> _Recorder:
        return self

    def addoption(self, *names: str, **kwargs: Any) -> None:
        self.options.append((names, kwargs))

    def addini(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.options.append(((f"[ini] {name}",), kwargs))


def plugin_page() -> str:
    """The options ``pytest_addoption`` declares, with their defaults and help."""
    from scancheck.faces.plugin.hooks import pytest_addoption

    rec = _Recorder()
    pytest_addoption(rec)  # type: ignore[arg-type]
    rows = []
    for names, kw in rec.options:
        action = kw.get("action", "store")
        metavar = "" if action in ("store_true", "store_false") else (
            " {" + ",".join(kw["choices"]) + "}" if kw.get("choices") else
            f" {kw.get('metavar') or names[0].lstrip('-').replace('-', '_').upper()}")
        default = kw.get("default")
        rows.append([", ".join(code(n + metavar) for n in names),
                     "" if default in (None, False, []) else code(default),
                     kw.get("help") or ""])
    return table(["option", "default", "what it does"], rows)


# -- kernels and operators -----------------------------------------------------------------


def variants_page() -> str:
    """One row per reference kernel of the registry."""
    from scancheck.kernels.registry import VARIANTS

    rows = []
    for v in VARIANTS.values():
        params = ", ".join(f"{k} {'/'.join(map(str, vals))}"
                           for k, vals in {**v.params, **v.runtime_params}.items())
        rows.append([code(v.name), code("kernels/" + v.source), v.scope,
                     "inclusive" if v.inclusive else "exclusive",
                     ", ".join(v.operators), params,
                     ("racy by design; " if v.racy else "")
                     + ("" if v.deterministic else "non-deterministic bits; ") + v.doc])
    return table(["variant", "source", "scope", "scan", "operators", "parameters", "what it is"],
                 rows)


def operators_page() -> str:
    """One row per operator of the shared table."""
    from scancheck.core.operators import OPERATORS

    rows = []
    for op in OPERATORS.values():
        rows.append([code(op.name), op.family, ", ".join(op.dtypes),
                     "yes" if op.commutative else "no", code(op.cuda_functor), code(op.flush),
                     "no: " + op.not_a_target if op.not_a_target else "yes", op.doc])
    return table(["operator", "family", "dtypes", "commutative", "CUDA functor", "flush column",
                  "a target may declare it", "what it is"], rows)


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli_page, "spec": spec_page, "diagnoses": diagnoses_page, "plugin": plugin_page,
    "variants": variants_page, "operators": operators_page,
}


def _fill(app: Any, docname: str, source: list[str]) -> None:
    """Sphinx's ``source-read``: each marker replaced by its generator's Markdown."""
    def replace(match: re.Match) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise ValueError(f"{docname}: no generator {name!r}; known: {', '.join(GENERATORS)}")
        return GENERATORS[name]() + "\n"

    source[0] = MARKER.sub(replace, source[0])


def setup(app: Any) -> dict[str, Any]:
    app.connect("source-read", _fill)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    cli = argparse.ArgumentParser(description="Print one reference page's generated Markdown.")
    cli.add_argument("page", choices=GENERATORS, help="the page")
    page = cli.parse_args().page
    try:
        print(GENERATORS[page](), flush=True)
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as SIGPIPE would
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(128 + 13)
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] != "sphinx":
            raise
        # The spec and diagnoses pages read the code's #: comments as autodoc does.
        cli.exit(2, f"{cli.prog}: error: the {page} page reads the code's #: comments with "
                    f"Sphinx, which is not installed: pip install -e '.[docs]'\n")
