"""Progress output of ``verbose=1`` fits: a tqdm bar when tqdm is installed, plain lines otherwise.

The training loops call ``progress(done, total, line)`` once per epoch (or round), with the
line they would print. Without tqdm (or with ``SKDP_PROGRESS=plain`` in the environment) that
line is printed unchanged; with tqdm, one bar per run advances to ``done / total`` and shows
the line's details as its postfix (a widget in Jupyter when ipywidgets is installed, text
elsewhere); :func:`use_tqdm` says when the bar is used. Everything shown is computed from
released noisy values by the caller (DESIGN.md §3); this module only displays it.
"""

from __future__ import annotations

import os
import sys
import threading

__all__ = ["progress", "use_tqdm"]

_state = threading.local()


def use_tqdm() -> bool:
    """Whether progress is drawn as a tqdm bar.

    ``SKDP_PROGRESS=plain`` forces plain lines and ``SKDP_PROGRESS=tqdm`` a bar (when tqdm is
    installed); by default the bar is used in interactive sessions only (a Jupyter kernel, or a
    terminal on stderr), so that logs and captured output keep the plain lines.
    """
    mode = os.environ.get("SKDP_PROGRESS", "").strip().lower()
    if mode in ("plain", "lines", "0", "off"):
        return False
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return False
    if mode in ("tqdm", "bar", "1", "on"):
        return True
    if "ipykernel" in sys.modules:
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _tqdm_class():
    """tqdm's notebook widget when ipywidgets is there (in a kernel), its text bar otherwise."""
    if "ipykernel" in sys.modules:
        try:
            import ipywidgets  # noqa: F401
            from tqdm.notebook import tqdm

            return tqdm
        except ImportError:
            pass
    from tqdm.std import tqdm

    return tqdm


def progress(done: int, total: int, message: str) -> None:
    """Show that ``done`` of ``total`` units (epochs, rounds) are finished.

    Parameters
    ----------
    done : int
        Units finished, from 1 to ``total``. A ``done`` that does not continue the current bar
        (a new fit) starts a new bar.
    total : int
        Units in the run.
    message : str
        The line a plain run prints, e.g. ``"[skdp] epoch 3/20: mean squared norm of the
        released noisy gradient 0.25"``.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"SKDP_PROGRESS": "plain"}):
    ...     progress(1, 2, "[skdp] epoch 1/2: mean squared norm of the released noisy gradient 0.5")
    [skdp] epoch 1/2: mean squared norm of the released noisy gradient 0.5
    """
    if not use_tqdm():
        _close()
        print(message)
        return
    bar = getattr(_state, "bar", None)
    if bar is None or bar.total != total or done <= bar.n:
        _close()
        unit = "epoch" if "epoch" in message else "it"
        bar = _tqdm_class()(total=total, desc="[skdp]", unit=unit, leave=True, dynamic_ncols=True)
        _state.bar = bar
    _, _, details = message.partition(": ")
    bar.set_postfix_str(details or message, refresh=False)
    bar.update(done - bar.n)
    if done >= total:
        _close()


def _close() -> None:
    bar = getattr(_state, "bar", None)
    if bar is not None:
        bar.close()
        _state.bar = None
