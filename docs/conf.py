"""Sphinx configuration of scancheck's guide: Markdown sources read by MyST-Parser, the
reference pages generated from the code by ``_ext/scancheck_reference.py``.

Build: ``pip install -e '.[docs]' && sphinx-build -W -b html docs docs/_build/html``
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

import scancheck  # noqa: E402

project = "scancheck"
release = version = scancheck.__version__
author = "the scancheck authors"
copyright = "the scancheck authors"

extensions = ["myst_parser", "scancheck_reference"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "findings"]
# Anchors for headings down to ###, so that [text](page.md#a-heading) links resolve.
myst_heading_anchors = 3
myst_enable_extensions = ["deflist"]
# A code block's language is for highlighting only: output blocks are "text".
highlight_language = "text"

html_theme = "furo"
html_title = f"scancheck {release}"
# Help texts name flags such as --oracle: keep their two hyphens.
smartquotes = False
