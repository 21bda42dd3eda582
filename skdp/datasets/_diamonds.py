"""The diamonds data set (ggplot2), bundled, with a data-independent preprocessor."""

from __future__ import annotations

import csv
import gzip
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.compose import ColumnTransformer
from sklearn.utils import Bunch

from ._base import DATA_DIR, import_pandas
from ._preprocessing import make_public_preprocessor

__all__ = [
    "DIAMONDS_CATEGORIES",
    "DIAMONDS_FEATURE_NAMES",
    "DIAMONDS_LOG_PRICE_CENTER",
    "DIAMONDS_NUMERIC_SCALING",
    "diamonds_preprocessor",
    "load_diamonds",
    "scale_diamonds_target",
    "unscale_diamonds_target",
]

#: Feature columns, in order (the raw file also has ``price``, the target).
DIAMONDS_FEATURE_NAMES: tuple[str, ...] = (
    "carat",
    "cut",
    "color",
    "clarity",
    "depth",
    "table",
    "x",
    "y",
    "z",
)

_CATEGORICAL_COLUMNS = frozenset(("cut", "color", "clarity"))

#: Public category lists (the level orders of ggplot2, worst to best for cut and clarity,
#: D (best) to J for color).
DIAMONDS_CATEGORIES: dict[str, list[str]] = {
    "cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
    "color": ["D", "E", "F", "G", "H", "I", "J"],
    "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"],
}

#: Public scaling of the numeric columns: ``name -> (f, center, scale)``, the output is
#: ``(f(x) - center) / scale``. Chosen from the meaning and usual range of each quantity,
#: never estimated from the records.
DIAMONDS_NUMERIC_SCALING: dict[str, tuple[str, float, float]] = {
    # weight in carats, about 0.2..5; price grows roughly as a power of it -> log scale
    "carat": ("log", 0.0, 0.6),
    # total depth percentage, usually 58..66
    "depth": ("linear", 62.0, 2.0),
    # table width as a percentage of the widest point, usually 52..63
    "table": ("linear", 57.0, 3.0),
    # length, width and depth in mm (a 1-carat round stone is about 6.4 x 6.4 x 4 mm)
    "x": ("linear", 5.5, 1.5),
    "y": ("linear", 5.5, 1.5),
    "z": ("linear", 3.5, 1.0),
}

#: Public centre of the log price: log(2,440 USD), a typical diamond price; not estimated
#: from the data.
DIAMONDS_LOG_PRICE_CENTER: float = 7.8

DESCR = """\
diamonds data set
=================

Regression: the price in US dollars (326..18,823) of 53,940 round-cut diamonds from
9 features: carat (weight), cut (Fair, Good, Very Good, Premium, Ideal), color (D best
to J worst), clarity (I1, SI2, SI1, VS2, VS1, VVS2, VVS1, IF; worst to best), depth
(total depth percentage), table (width of the top relative to the widest point, %),
and x, y, z (length, width, depth in mm; a few are 0, meaning not measured).

Price is heavy-tailed; for linear models regress ``log(price)``, e.g. with
``scale_diamonds_target``.

Source: the ``diamonds`` data set of the ggplot2 R package, as distributed by the
plotnine Python package (MIT licence). See ``ATTRIBUTION.txt`` in
``skdp/datasets/data``. There is no official train/test split.
"""


@lru_cache(maxsize=1)
def _load_diamonds_arrays() -> tuple[np.ndarray, np.ndarray]:
    """Parse the bundled file once; callers must copy before handing arrays out."""
    path = DATA_DIR / "diamonds.csv.gz"
    rows: list[list[Any]] = []
    prices: list[float] = []
    with gzip.open(path, mode="rt", encoding="ascii", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        expected = [*DIAMONDS_FEATURE_NAMES[:6], "price", *DIAMONDS_FEATURE_NAMES[6:]]
        if header != expected:
            raise ValueError(f"{path.name}: unexpected header {header!r}")
        price_index = header.index("price")
        for record in reader:
            if not record:
                continue
            if len(record) != len(header):
                raise ValueError(f"{path.name}: malformed record {record!r}")
            prices.append(float(record[price_index]))
            features = record[:price_index] + record[price_index + 1 :]
            rows.append(
                [
                    value.strip() if name in _CATEGORICAL_COLUMNS else float(value)
                    for name, value in zip(DIAMONDS_FEATURE_NAMES, features, strict=True)
                ]
            )
    X = np.empty((len(rows), len(DIAMONDS_FEATURE_NAMES)), dtype=object)
    X[:] = rows
    y = np.asarray(prices, dtype=np.float64)
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


def load_diamonds(*, return_X_y: bool = False, as_frame: bool = False) -> Bunch | tuple[Any, Any]:
    """Load the bundled diamonds data set (price regression).

    The data are read from the copy shipped with skdp; nothing is downloaded. Numeric
    columns (carat, depth, table, x, y, z) are float64 and categorical columns (cut,
    color, clarity) hold ``str`` values; there are no missing values. There is no
    official split: use :func:`sklearn.model_selection.train_test_split`. Preprocess
    with :func:`diamonds_preprocessor` and, for linear models, regress
    :func:`scale_diamonds_target` of the price.

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(X, y)`` instead of a Bunch.
    as_frame : bool, default=False
        If True, ``X`` is a pandas DataFrame with named columns (categoricals of
        object/string dtype, numerics float64) and ``y`` a Series named ``"price"``.
        Requires pandas, which is otherwise not needed.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        With attributes

        - ``data`` : ndarray of shape (53940, 9), dtype object, or DataFrame
        - ``target`` : ndarray of shape (53940,), float64 price in USD, or Series
        - ``feature_names`` : list of str, the 9 column names in order
        - ``DESCR`` : str, a description with source and licence
    (X, y) : tuple
        If ``return_X_y`` is True. Every call returns fresh copies, which may be modified.

    Examples
    --------
    >>> from skdp.datasets import load_diamonds
    >>> X, y = load_diamonds(return_X_y=True)
    >>> X.shape, y.shape
    ((53940, 9), (53940,))
    >>> load_diamonds().feature_names
    ['carat', 'cut', 'color', 'clarity', 'depth', 'table', 'x', 'y', 'z']
    """
    if as_frame:
        pd = import_pandas()  # fail early, before any parsing
    X_cached, y_cached = _load_diamonds_arrays()
    y = y_cached.copy()
    if as_frame:
        columns = {}
        for j, name in enumerate(DIAMONDS_FEATURE_NAMES):
            if name in _CATEGORICAL_COLUMNS:
                columns[name] = X_cached[:, j].copy()
            else:
                columns[name] = X_cached[:, j].astype(np.float64)
        X: Any = pd.DataFrame(columns)
        y_out: Any = pd.Series(y, name="price")
    else:
        X, y_out = X_cached.copy(), y
    if return_X_y:
        return X, y_out
    return Bunch(
        data=X,
        target=y_out,
        feature_names=list(DIAMONDS_FEATURE_NAMES),
        DESCR=DESCR,
    )


def diamonds_preprocessor() -> ColumnTransformer:
    """Return an unfitted, data-independent preprocessor for :func:`load_diamonds` features.

    Under differential privacy, scaling statistics (means, variances, extremes) or
    category sets learned from the private records would leak information outside the
    privacy accounting. Everything here is fixed in advance, so fitting learns nothing
    from the data; only the number of records ``n`` is treated as public.

    Categorical columns (cut, color, clarity) are one-hot encoded with the public
    ``DIAMONDS_CATEGORIES`` and ``handle_unknown="ignore"`` (unknown values give an
    all-zero block). Numeric columns are mapped to ``(f(x) - center) / scale`` with
    public constants (``DIAMONDS_NUMERIC_SCALING``):

    ======  =====  ======  =====  ==============================================
    column  f      center  scale  rationale
    ======  =====  ======  =====  ==============================================
    carat   log    0       0.6    weight 0.2..5 carat; price ~ power of weight
    depth   x      62      2      total depth %, usually 58..66
    table   x      57      3      table width %, usually 52..63
    x       x      5.5     1.5    length in mm
    y       x      5.5     1.5    width in mm
    z       x      3.5     1      depth in mm
    ======  =====  ======  =====  ==============================================

    A few records have x, y or z equal to 0 (not measured) and a few have implausible
    values (y up to 58.9 mm); they are kept and simply map to large scaled values. DP
    estimators bound each record's influence by clipping, so no data-dependent
    outlier handling is done here. NaN numerics (absent from this data) would
    propagate to the output.

    Columns are selected by integer position, so numpy object arrays and DataFrames
    (9 columns in the order of :func:`load_diamonds`) both work. The output is a dense
    float64 array of 6 numeric and 20 one-hot columns (26 in all), in input column
    order, with names ``"carat"``, ``"cut_Fair"``, ...

    Returns
    -------
    ColumnTransformer
        Unfitted; ``fit`` only records the input shape.

    Examples
    --------
    >>> from skdp.datasets import diamonds_preprocessor, load_diamonds
    >>> X, y = load_diamonds(return_X_y=True)
    >>> diamonds_preprocessor().fit_transform(X).shape
    (53940, 26)
    """
    return make_public_preprocessor(
        DIAMONDS_FEATURE_NAMES, DIAMONDS_NUMERIC_SCALING, DIAMONDS_CATEGORIES
    )


def scale_diamonds_target(price: ArrayLike) -> np.ndarray:
    """Map diamond prices to a public, roughly unit scale: ``log(price) - 7.8``.

    skdp's DP estimators need targets on a known, roughly unit scale (the bound on a
    record's influence depends on it), and a linear model fits log price far better
    than price. The centre ``DIAMONDS_LOG_PRICE_CENTER = 7.8`` (log of about 2,400 USD,
    a typical diamond price) is a public constant, not estimated from the data; the
    log prices of the data set span about -2 to 2 after centring.

    Parameters
    ----------
    price : array-like
        Prices in USD, positive.

    Returns
    -------
    ndarray of float64
        Same shape as ``price``.

    Examples
    --------
    >>> from skdp.datasets import scale_diamonds_target, unscale_diamonds_target
    >>> z = scale_diamonds_target([326.0, 2441.0, 18823.0])
    >>> z.round(2)
    array([-2.01,  0.  ,  2.04])
    >>> unscale_diamonds_target(z).round(6)
    array([  326.,  2441., 18823.])
    """
    return np.log(np.asarray(price, dtype=np.float64)) - DIAMONDS_LOG_PRICE_CENTER


def unscale_diamonds_target(z: ArrayLike) -> np.ndarray:
    """Invert :func:`scale_diamonds_target`: ``exp(z + 7.8)``, a price in USD.

    Parameters
    ----------
    z : array-like
        Scaled log prices, e.g. predictions of a model fitted on
        ``scale_diamonds_target(y)``.

    Returns
    -------
    ndarray of float64
        Prices in USD, same shape as ``z``.

    Examples
    --------
    >>> from skdp.datasets import unscale_diamonds_target
    >>> float(unscale_diamonds_target(0.0).round(1))
    2440.6
    """
    return np.exp(np.asarray(z, dtype=np.float64) + DIAMONDS_LOG_PRICE_CENTER)
