"""Markdown tables and the number formats of their cells.

Cells are strings: a results file stores what the page shows (``0.8490 ± 0.0007``), and the
raw numbers, where a study needs them again, go to the file's ``raw`` part.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def escape(cell: object) -> str:
    """A cell's text with ``|`` escaped, so that it stays one cell of a markdown table."""
    return str(cell).replace("\\|", "|").replace("|", "\\|").replace("\n", " ")


def markdown_table(headers: Sequence[object], rows: Sequence[Sequence[object]]) -> str:
    """A markdown table, columns padded to their widest cell."""
    cells = [[escape(c) for c in headers]] + [[escape(c) for c in row] for row in rows]
    widths = [max(len(row[j]) for row in cells) for j in range(len(headers))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(cells[0], widths, strict=True)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    for row in cells[1:]:
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True))
                     + " |")
    return "\n".join(lines)


def finite(values: Sequence[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and not math.isnan(v)]


def _num(value: float, digits: int) -> str:
    return f"{value:.3g}" if abs(value) >= 1e4 else f"{value:.{digits}f}"


def mean_std(values: Sequence[float], digits: int = 4, scale: float = 1.0,
             median: bool = False) -> str:
    """``mean ± std`` (sample std) of the finite values, ``n/a`` if there is none."""
    values = finite(values)
    if not values:
        return "n/a"
    arr = np.asarray(values, dtype=float) * scale
    if arr.size == 1:
        return _num(arr[0], digits)
    out = f"{_num(arr.mean(), digits)} ± {_num(arr.std(ddof=1), digits)}"
    if median:
        out += f" (median {_num(float(np.median(arr)), digits)})"
    return out


def mean_min(values: Sequence[float], digits: int = 3) -> str:
    """``mean (min)`` of timings: the min is the estimate least affected by other load."""
    values = finite(values)
    if not values:
        return "n/a"
    return f"{np.mean(values):.{digits}f} ({min(values):.{digits}f})"


def min_or_nan(values: Sequence[float]) -> float:
    values = finite(values)
    return float(min(values)) if values else float("nan")


def mean_or_nan(values: Sequence[float]) -> float:
    values = finite(values)
    return float(np.mean(values)) if values else float("nan")


def fmt(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}"


def ratio(num: float, den: float, digits: int = 1) -> str:
    if any(v is None or math.isnan(v) for v in (num, den)) or den == 0:
        return "n/a"
    return f"{num / den:.{digits}f}x"


def paired_cell(values: Sequence[float], base: Sequence[float] | None = None) -> str:
    """``mean ± std`` over seeds and, given a baseline over the same seeds, ``(+diff)``: the
    mean paired difference to it."""
    arr = np.asarray(values, dtype=float)
    cell = f"{arr.mean():.4f} ± {arr.std(ddof=1) if arr.size > 1 else 0:.4f}"
    if base is not None:
        cell += f" ({(arr - np.asarray(base, dtype=float)).mean():+.4f})"
    return cell


def score(value: float, task: str) -> str:
    """A test score as the studies print it: accuracy in % (2 decimals), R^2 (4 decimals)."""
    if value is None or math.isnan(value):
        return "n/a"
    return f"{100 * value:.2f}" if task == "classification" else f"{value:.4f}"


def score_diff(value: float, task: str) -> str:
    if value is None or math.isnan(value):
        return "n/a"
    return f"{100 * value:+.2f}" if task == "classification" else f"{value:+.4f}"
