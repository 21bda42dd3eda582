"""Execute notebooks headless with nbclient and fail on any error (CI runs this).

    python examples/notebooks/run_notebook.py [NOTEBOOK ...]

Default: every ``*.ipynb`` next to this script. Outputs are not written back; a cell that
raises, or writes a warning or a traceback to stderr, fails the run (progress bars may write
there). Needs the ``docs`` extra (nbclient, nbformat,
ipykernel).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def run(path: Path, timeout: int = 600) -> None:
    notebook = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":  # nbclient raises first; belt and braces
                raise RuntimeError(f"{path}: cell {index} raised {output.get('ename')}")
            text = output.get("text", "") if output.get("output_type") == "stream" else ""
            if output.get("name") == "stderr" and ("Warning" in text or "Traceback" in text):
                raise RuntimeError(f"{path}: cell {index} wrote to stderr:\n{text}")
    n_html = sum(
        "text/html" in output.get("data", {})
        for cell in notebook.cells
        for output in cell.get("outputs", [])
    )
    print(f"{path}: {len(notebook.cells)} cells ran clean in {time.perf_counter() - start:.1f} s "
          f"({n_html} HTML outputs)")


if __name__ == "__main__":
    paths = [Path(p) for p in sys.argv[1:]] or sorted(Path(__file__).parent.glob("*.ipynb"))
    for path in paths:
        run(path)
