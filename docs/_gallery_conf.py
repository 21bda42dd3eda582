"""sphinx-gallery settings for the skdp documentation (imported by conf.py).

The gallery scripts are ``examples/plot_*.py``; the other scripts in ``examples/`` stay
plain command-line examples. ``SKDP_GALLERY_FAST=1`` (used by CI) makes every script shrink
its work (fewer privacy levels, seeds and rows: see ``examples/_gallery_fast.py``);
the figures are then rougher but every script still runs end to end.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

sphinx_gallery_conf = {
    "examples_dirs": [str(ROOT / "examples")],
    "gallery_dirs": ["auto_examples"],
    # Only plot_*.py are gallery items; quickstart.py and friends stay command-line scripts.
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"^(?!plot_).*\.py$",  # matched against the file name
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "capture_repr": ("_repr_html_", "__repr__"),
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "reset_modules": ("matplotlib",),
    "show_memory": False,
    "plot_gallery": "True",
    # The API pages' "Gallery examples using ..." (minigallery in templates/autosummary/class.rst).
    "backreferences_dir": "api/generated/backreferences",
    "doc_module": ("skdp",),
    "inspect_global_variables": False,
    "first_notebook_cell": None,
    "default_thumb_file": None,
}

if os.environ.get("SKDP_GALLERY_OFF", "") not in ("", "0"):
    sphinx_gallery_conf["plot_gallery"] = "False"
