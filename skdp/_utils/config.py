"""skdp's global configuration: what a user sets once for every fit (like scikit-learn's
``set_config``). Each thread sees the configuration it set, over process-wide defaults."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from numbers import Integral

__all__ = ["config_context", "get_config", "set_config"]

_DEFAULTS = {"n_threads": "auto"}
_local = threading.local()


def _current() -> dict:
    if not hasattr(_local, "config"):
        _local.config = dict(_DEFAULTS)
    return _local.config


def get_config() -> dict:
    """The current configuration.

    Returns
    -------
    config : dict
        ``{"n_threads": ...}``: see :func:`set_config`.
    """
    return dict(_current())


def _check_n_threads(n_threads) -> None:
    if n_threads == "auto":
        return
    if not isinstance(n_threads, Integral) or isinstance(n_threads, bool) or n_threads < 1:
        raise ValueError(
            f"n_threads must be 'auto' or a positive integer, got {n_threads!r}"
        )


def set_config(*, n_threads=None) -> None:
    """Set skdp's configuration for this thread.

    Parameters
    ----------
    n_threads : 'auto' or int, default=None
        CPU threads a fit computes with (torch's and the BLAS libraries'). ``'auto'`` (the
        default) picks them for each fit from the size of its work: one thread for the small
        products of most tabular fits, which more threads slow down as soon as another process
        uses a core (see :doc:`the defaults page </user_guide/defaults>`). An int sets the
        number for every fit. Either way, the caller's own thread settings are restored when
        the fit ends, also when it raises. ``None`` leaves the setting unchanged.

    Examples
    --------
    >>> import skdp
    >>> skdp.set_config(n_threads=2)
    >>> skdp.get_config()["n_threads"]
    2
    >>> skdp.set_config(n_threads="auto")
    """
    if n_threads is not None:
        _check_n_threads(n_threads)
        _current()["n_threads"] = n_threads


@contextlib.contextmanager
def config_context(*, n_threads=None) -> Iterator[None]:
    """Set skdp's configuration inside a ``with`` block (see :func:`set_config`).

    Examples
    --------
    >>> import skdp
    >>> with skdp.config_context(n_threads=1):
    ...     skdp.get_config()["n_threads"]
    1
    """
    previous = get_config()
    set_config(n_threads=n_threads)
    try:
        yield
    finally:
        _current().update(previous)
