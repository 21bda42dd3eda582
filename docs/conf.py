"""Sphinx configuration of the skdp documentation site.

Build (offline, warnings as errors, the gallery in its fast CI mode)::

    SKDP_GALLERY_FAST=1 python -m sphinx -W -b html docs docs/_build/html

Without ``SKDP_GALLERY_FAST`` the gallery scripts run at full size (a few minutes).
``SKDP_DOCS_ONLINE=1`` turns on intersphinx links to scikit-learn, numpy, torch and
dp_accounting; it needs internet access to download their inventories, so it is off by default
(CI has no internet). Offline, references to those projects render as plain code.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # build from a checkout even without `pip install -e .`
sys.path.insert(0, str(HERE))  # docs/_gallery_conf.py helpers

# Keep the build (the gallery scripts run in this process) light on shared machines: one torch
# thread (set before torch is imported), and verbose output as plain lines.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("SKDP_PROGRESS", "plain")

from _generate_defaults import write as _write_defaults_page  # noqa: E402

import skdp  # noqa: E402

# The user guide's defaults page is generated from skdp's registry of 'auto' rules.
_write_defaults_page()

project = "skdp"
author = "the skdp developers"
copyright = "the skdp developers"
version = release = skdp.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

ONLINE = os.environ.get("SKDP_DOCS_ONLINE", "") not in ("", "0")
if ONLINE:
    extensions.append("sphinx.ext.intersphinx")
    intersphinx_mapping = {
        "python": ("https://docs.python.org/3", None),
        "numpy": ("https://numpy.org/doc/stable/", None),
        "scipy": ("https://docs.scipy.org/doc/scipy/", None),
        "sklearn": ("https://scikit-learn.org/stable/", None),
        "torch": ("https://docs.pytorch.org/docs/stable/", None),
        "pandas": ("https://pandas.pydata.org/docs/", None),
        "dp_accounting": ("https://dp-accounting.readthedocs.io/en/latest/", None),
    }

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "Thumbs.db",
    ".DS_Store",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "auto_examples/*.json",
    "auto_examples/*.pickle",
]

# References to other projects' objects cannot resolve offline; they must not warn.
nitpicky = False
default_role = "literal"

# -- autodoc / autosummary / numpydoc ------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
# Class pages list every public method, inherited ones included (templates/autosummary/class.rst
# asks for :inherited-members:; a default here would override it, so none is set).
# _skip_member below leaves out what Python itself defines (str, tuple, Exception, Enum).
autodoc_default_options = {"members": True}
autodoc_typehints = "none"  # numpydoc's Parameters section is the reference
autoclass_content = "class"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
# Types in Parameters/Attributes become cross-references (``n_features_in_`` in a shape would
# otherwise be read as a reST link target); offline they render as code.
numpydoc_xref_param_type = True
numpydoc_xref_ignore = {
    "of", "or", "and", "shape", "default", "optional", "the", "a", "an", "in", "to", "with",
    "as", "if", "is", "for", "by", "per", "one", "each", "any", "none", "array-like",
    "sparse", "matrix", "ndarray", "int", "float", "bool", "str", "dict", "list", "tuple",
    "callable", "object", "estimator", "instance", "n_samples", "n_features", "n_outputs",
    "n_classes",
}
if not ONLINE:
    # numpydoc's default aliases point into the Python and NumPy docs (``:class:`python:float```),
    # which only resolve with intersphinx; offline they would render as "python:float". Map
    # each to itself, so that a type reads as written: "tuple of (float, float)".
    from numpydoc.xref import DEFAULT_LINKS

    numpydoc_xref_aliases = {key: key for key in DEFAULT_LINKS}
else:
    numpydoc_xref_aliases = {}
# skdp's own names as its docstrings write them.
numpydoc_xref_aliases |= {
    "PrivacyBudget": "skdp.budget.PrivacyBudget",
    "skdp.PrivacyBudget": "skdp.budget.PrivacyBudget",
}
numpydoc_validation_checks: set[str] = set()

# -- MyST (the Markdown pages) -------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "deflist", "colon_fence"]
myst_heading_anchors = 3
# The Markdown pages also read well on GitHub, where they link to scripts in the repository
# (`../benchmarks/bench_mlp.py`); those are not pages of this site.
suppress_warnings = ["myst.xref_missing", "myst.header"]

# -- sphinx-gallery ------------------------------------------------------------------------
from _gallery_conf import sphinx_gallery_conf  # noqa: E402,F401

# -- HTML ----------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"skdp {release}"
html_static_path = ["_static"]
html_css_files = ["skdp.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
    "secondary_sidebar_items": ["page-toc", "sg_download_links", "sg_launcher_links"],
}
html_sidebars = {"index": []}
# "On this page" of an API page lists its methods as "fit()", not "DPRidge.fit()".
toc_object_entries_show_parents = "hide"
html_show_sourcelink = False


# -- checks and hooks ----------------------------------------------------------------------
PUBLIC_MODULES = [
    "skdp", "skdp.linear_model", "skdp.neural_network", "skdp.preprocessing", "skdp.pipeline",
    "skdp.model_selection", "skdp.budget", "skdp.accounting", "skdp.mechanisms", "skdp.audit",
    "skdp.datasets",
]


def _check_api_page(app):
    """Every name of every public ``__all__`` must be on the API page (fails -W otherwise)."""
    import importlib
    import re

    from sphinx.util import logging

    text = (HERE / "api" / "index.rst").read_text(encoding="utf-8")
    listed = set(re.findall(r"^   (\w+)$", text, flags=re.M))
    listed |= set(re.findall(r"(?:py:data::|:`)\s*([\w.]+?)(?: <|::|`|$)", text, flags=re.M))
    for module in PUBLIC_MODULES:
        for name in importlib.import_module(module).__all__:
            if name not in listed and f"{module}.{name}" not in listed:
                logging.getLogger(__name__).warning(
                    "docs/api/index.rst does not list %s.%s", module, name
                )


def _skip_member(app, what, name, obj, skip, options):
    # Members that Python defines for every str, tuple, exception or enum (``upper``,
    # ``count``, ``with_traceback``, ...) are not skdp's API; scikit-learn's public methods
    # (``get_params``, ``score``, ``set_output``, the metadata-routing ``set_*_request``) are,
    # and are listed as scikit-learn's own pages list them.
    import inspect

    owner = getattr(obj, "__objclass__", obj)
    if inspect.isbuiltin(obj) or getattr(owner, "__module__", None) in ("builtins", "enum"):
        return True
    return None


def _public_bases(app, name, obj, options, bases):
    # "Bases:" names public classes only, not skdp's private mixins (failing any, the first
    # public class up the inheritance chain: TransformerMixin for a DP transformer).
    def public(cls):
        return not any(part.startswith("_") for part in cls.__module__.split("."))

    bases[:] = [base for base in bases if public(base)] or [
        next(cls for cls in obj.__mro__[1:] if public(cls))
    ]


def _offline_roles(app, what, name, obj, options, lines):
    # scikit-learn's inherited docstrings link to its glossary and user guide
    # (:term:`fit`, :ref:`User Guide <metadata_routing>`); without intersphinx those targets
    # do not exist here, so they become plain text.
    import re

    for i, line in enumerate(lines):
        line = re.sub(r":(?:term|ref):`([^`<]*?)\s*<[^`>]*>`", r"\1", line)
        lines[i] = re.sub(r":(?:term|ref):`([^`]*)`", r"``\1``", line)


def _escape_shape_names(app, what, name, obj, options, lines):
    # "ndarray of shape (n_features_in_,)": a trailing underscore is a reST link; escape it in
    # type lines (scikit-learn writes `n_features_in_` in backticks; skdp's docstrings do not).
    import re

    for i, line in enumerate(lines):
        if "shape (" in line:
            lines[i] = re.sub(r"(?<=[(\s,])(\w+?)_(?=[,)])", r"\1\\_", line)


def _plain_unresolved_types(app, env, node, contnode):
    # A name in a parameter's type that links nowhere ("None", "iterable", "n_targets",
    # "dp_accounting.DpEvent" offline) reads as plain text, as written, not as a code box.
    from docutils import nodes

    parent = node.parent
    while parent is not None and not isinstance(parent, nodes.classifier):
        parent = parent.parent
    return nodes.Text(contnode.astext()) if parent is not None else None


def _breakable_titles(app, pagename, templatename, context, doctree):
    # Dotted API titles may break after each dot (see _static/skdp.css).
    import re

    def add_breaks(match):
        return match.group(1) + match.group(2).replace(".", ".<wbr>") + match.group(3)

    if context.get("body"):
        context["body"] = re.sub(
            r"(<h1>)([\w.\\]+)(<a class=\"headerlink\")", add_breaks, context["body"], count=1
        )


def setup(app):
    app.connect("autodoc-process-docstring", _escape_shape_names, priority=100)
    app.connect("builder-inited", _check_api_page)
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("autodoc-process-bases", _public_bases)
    app.connect("missing-reference", _plain_unresolved_types, priority=900)
    app.connect("html-page-context", _breakable_titles)
    if not ONLINE:
        app.connect("autodoc-process-docstring", _offline_roles)
