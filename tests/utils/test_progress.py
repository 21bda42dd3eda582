"""verbose=1 progress output (skdp/_progress.py): plain lines without tqdm, a bar with it."""

from __future__ import annotations

import builtins
import sys

import numpy as np
import pytest

from skdp._utils import progress as _progress
from skdp.linear_model import DPLogisticRegression


def _fit(verbose=1):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = (X[:, 0] > 0).astype(int)
    return DPLogisticRegression(privacy=(1.0, 1e-5), max_iter=3, verbose=verbose,
                                random_state=0).fit(X, y)


def test_plain_lines_when_asked(monkeypatch, capsys):
    monkeypatch.setenv("SKDP_PROGRESS", "plain")
    assert not _progress.use_tqdm()
    _fit()
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    for epoch, line in enumerate(lines, start=1):
        assert line.startswith(f"[skdp] epoch {epoch}/3: mean squared norm of the released noisy")


def test_plain_lines_without_tqdm(monkeypatch, capsys):
    monkeypatch.delenv("SKDP_PROGRESS", raising=False)
    real_import = builtins.__import__

    def no_tqdm(name, *args, **kwargs):
        if name == "tqdm" or name.startswith("tqdm."):
            raise ImportError("no tqdm here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    for name in [m for m in sys.modules if m == "tqdm" or m.startswith("tqdm.")]:
        monkeypatch.delitem(sys.modules, name)
    assert not _progress.use_tqdm()
    _progress.progress(1, 2, "[skdp] epoch 1/2: mean squared norm 0.5")
    assert capsys.readouterr().out == "[skdp] epoch 1/2: mean squared norm 0.5\n"


def test_silent_without_verbose(monkeypatch, capsys):
    monkeypatch.setenv("SKDP_PROGRESS", "plain")
    _fit(verbose=0)
    captured = capsys.readouterr()
    assert captured.out == "" and "[skdp]" not in captured.err


def test_plain_lines_when_not_interactive(monkeypatch, capsys):
    # Captured output (pytest, logs) is not a terminal: plain lines even with tqdm installed.
    monkeypatch.delenv("SKDP_PROGRESS", raising=False)
    if "ipykernel" in sys.modules:
        pytest.skip("running inside a Jupyter kernel")
    assert not _progress.use_tqdm()
    _fit()
    assert capsys.readouterr().out.count("[skdp] epoch") == 3


def test_tqdm_bar(monkeypatch, capsys):
    pytest.importorskip("tqdm")
    monkeypatch.setenv("SKDP_PROGRESS", "tqdm")
    assert _progress.use_tqdm()
    _fit()
    captured = capsys.readouterr()
    assert "[skdp] epoch" not in captured.out  # the bar replaces the lines
    assert "3/3" in captured.err and "mean squared norm" in captured.err
    assert getattr(_progress._state, "bar", None) is None  # closed at the end of the run
    # a second run starts a new bar
    _fit()
    assert "3/3" in capsys.readouterr().err
