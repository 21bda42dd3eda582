"""Shared helpers of the bundled data set loaders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: Folder of the bundled data files (see ``ATTRIBUTION.txt`` there).
DATA_DIR = Path(__file__).resolve().parent / "data"


def import_pandas() -> Any:
    """Import pandas lazily, with an actionable message when it is missing."""
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "as_frame=True requires pandas; install it with `pip install pandas`."
        ) from exc
    return pd
