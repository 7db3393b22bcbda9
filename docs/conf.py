"""Sphinx configuration of judgebox's docs site (``sphinx-build -W docs <out>``; scripts/check).

Sphinx + MyST: the pages are Markdown (MyST), and the Python API reference comes from the
docstrings through autodoc + napoleon (Google-style sections), which turns their Sphinx roles
(``:class:``, ``:func:``, ``:mod:``) into links. The HTTP, settings and CLI references are generated
from the code at build time (``_ext/generated.py``).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "_ext"))

project = "judgebox"
author = "judgebox developers"
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "generated"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_ext"]
html_theme = "furo"
html_title = "judgebox"
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
# frameworks of the integrations and the agent's engines: the docs build does not need them
autodoc_mock_imports = ["verl", "trl", "vllm", "torch", "transformers", "openrlhf", "evalplus", "ray",
                        "accelerate", "datasets"]
napoleon_google_docstring = True
napoleon_numpy_docstring = False
# an Attributes: section as fields of the class, not attribute entries of their own (autodoc documents
# dataclass and pydantic fields already)
napoleon_use_ivar = True
suppress_warnings = ["myst.header"]
