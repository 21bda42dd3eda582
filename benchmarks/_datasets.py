"""Data sets of the benchmark scripts, prepared with public preprocessing only.

Adult and diamonds are bundled with skdp. Fashion-MNIST is read from the IDX files in
``--fashion-mnist-dir`` (default: ``../shared/data/fashion-mnist`` next to the checkout, or the
``SKDP_FASHION_MNIST`` environment variable); pixels are divided by 255, a public constant.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split

from skdp.datasets import (
    adult_preprocessor,
    diamonds_preprocessor,
    load_adult,
    load_diamonds,
    scale_diamonds_target,
)

DEFAULT_FASHION_MNIST_DIR = Path(
    os.environ.get(
        "SKDP_FASHION_MNIST",
        Path(__file__).resolve().parents[2] / "shared" / "data" / "fashion-mnist",
    )
)


def adult():
    """``(X_train, X_test, y_train, y_test)``: the official split, 105 public-scaled columns."""
    X_train, X_test, y_train, y_test = load_adult(return_X_y=True)
    pre = adult_preprocessor().fit(X_train)  # data-independent: fit only records the columns
    return pre.transform(X_train), pre.transform(X_test), y_train, y_test


def diamonds():
    """``(X_train, X_test, y_train, y_test)``: 80/20 split, scaled log price as the target."""
    X, price = load_diamonds(return_X_y=True)
    X = diamonds_preprocessor().fit_transform(X)
    y = scale_diamonds_target(price)
    return train_test_split(X, y, test_size=0.2, random_state=0)


def _read_idx(path: Path, offset: int) -> np.ndarray:
    with gzip.open(path) as handle:
        return np.frombuffer(handle.read(), np.uint8, offset=offset)


def fashion_mnist(data_dir: Path | str | None = None):
    """``(X_train, X_test, y_train, y_test)``: 60,000 / 10,000 images as 784 floats in [0, 1]."""
    root = Path(data_dir) if data_dir is not None else DEFAULT_FASHION_MNIST_DIR
    if not root.is_dir():
        raise SystemExit(
            f"Fashion-MNIST not found in {root}; pass --fashion-mnist-dir or set "
            "SKDP_FASHION_MNIST to the folder holding the four IDX .gz files"
        )
    X_train = _read_idx(root / "train-images-idx3-ubyte.gz", 16).reshape(-1, 784)
    X_test = _read_idx(root / "t10k-images-idx3-ubyte.gz", 16).reshape(-1, 784)
    y_train = _read_idx(root / "train-labels-idx1-ubyte.gz", 8).astype(np.int64)
    y_test = _read_idx(root / "t10k-labels-idx1-ubyte.gz", 8).astype(np.int64)
    scale = np.float32(1 / 255)
    return X_train.astype(np.float32) * scale, X_test.astype(np.float32) * scale, y_train, y_test


def validation_split(data, seed: int = 0):
    """The training part split 80/20 into (train, validation): tuning never sees the test set."""
    X_train, _, y_train, _ = data
    X_tr, X_val, y_tr, y_val = train_test_split(X_train, y_train, test_size=0.2, random_state=seed)
    return X_tr, X_val, y_tr, y_val
