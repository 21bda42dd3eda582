"""The Adult (census income) data set, bundled, with a data-independent preprocessor."""

from __future__ import annotations

import csv
import gzip
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.utils import Bunch

from ._base import DATA_DIR, import_pandas
from ._preprocessing import make_public_preprocessor

__all__ = [
    "ADULT_CATEGORIES",
    "ADULT_FEATURE_NAMES",
    "ADULT_NUMERIC_SCALING",
    "adult_preprocessor",
    "load_adult",
]

#: Feature columns of Adult, in the order of the raw files (the target ``income`` follows).
ADULT_FEATURE_NAMES: tuple[str, ...] = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education_num",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital_gain",
    "capital_loss",
    "hours_per_week",
    "native_country",
)

_NUMERIC_COLUMNS = frozenset(
    ("age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week")
)

#: Public category lists of the categorical columns, copied verbatim (order and spelling)
#: from the published ``adult.names``. Missing values ("?") are not a category.
ADULT_CATEGORIES: dict[str, list[str]] = {
    "workclass": [
        "Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
        "State-gov", "Without-pay", "Never-worked",
    ],
    "education": [
        "Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm",
        "Assoc-voc", "9th", "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate",
        "5th-6th", "Preschool",
    ],
    "marital_status": [
        "Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
        "Married-spouse-absent", "Married-AF-spouse",
    ],
    "occupation": [
        "Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
        "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
        "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
        "Armed-Forces",
    ],
    "relationship": [
        "Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried",
    ],
    "race": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"],
    "sex": ["Female", "Male"],
    "native_country": [
        "United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
        "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba",
        "Iran", "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam",
        "Mexico", "Portugal", "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador",
        "Taiwan", "Haiti", "Columbia", "Hungary", "Guatemala", "Nicaragua", "Scotland",
        "Thailand", "Yugoslavia", "El-Salvador", "Trinadad&Tobago", "Peru", "Hong",
        "Holand-Netherlands",
    ],
}  # fmt: skip

#: Public scaling of the numeric columns: ``name -> (f, center, scale)``, the output is
#: ``(f(x) - center) / scale``. Chosen from the documented meaning and range of each
#: column, never estimated from the records.
ADULT_NUMERIC_SCALING: dict[str, tuple[str, float, float]] = {
    # years; adults of working age, roughly 17..90
    "age": ("linear", 45.0, 25.0),
    # census sampling weight, about 1e4..1.5e6: log-scale, centred at e**12 (about 160,000)
    "fnlwgt": ("log", 12.0, 1.5),
    # years of education coded 1..16
    "education_num": ("linear", 8.5, 7.5),
    # US dollars, heavy-tailed, 0 for most people, top-coded at 99,999
    "capital_gain": ("log1p", 0.0, float(np.log1p(100_000.0))),
    "capital_loss": ("log1p", 0.0, float(np.log1p(100_000.0))),
    # 1..99 hours; a full-time week is 40
    "hours_per_week": ("linear", 40.0, 20.0),
}

TARGET_NAMES = ("<=50K", ">50K")

DESCR = """\
Adult (census income) data set
==============================

Binary classification: does a person earn more than 50,000 USD a year? Extracted by
Barry Becker from the 1994 US Census database (donors Ronny Kohavi and Barry Becker).
The official split is kept: 32,561 training and 16,281 test records, 14 features
(6 numeric, 8 categorical) and the target ``income`` (1 for ">50K", 0 for "<=50K";
about 24% positive). Missing categorical values ("?" in the raw files, in
``workclass``, ``occupation`` and ``native_country``) are NaN.

Features: age, workclass, fnlwgt, education, education_num, marital_status,
occupation, relationship, race, sex, capital_gain, capital_loss, hours_per_week,
native_country.

Source: Becker, B. and Kohavi, R. (1996). Adult. UCI Machine Learning Repository.
https://doi.org/10.24432/C5XW20 . Licence: CC BY 4.0. See ``adult.names`` and
``ATTRIBUTION.txt`` in ``skdp/datasets/data``.
"""


def _parse_adult_file(path: Path, positive_label: str) -> tuple[np.ndarray, np.ndarray]:
    """Parse one raw Adult file into an object feature array and an int64 target."""
    rows: list[list[Any]] = []
    labels: list[int] = []
    numeric_mask = [name in _NUMERIC_COLUMNS for name in ADULT_FEATURE_NAMES]
    n_fields = len(ADULT_FEATURE_NAMES) + 1
    with gzip.open(path, mode="rt", encoding="ascii", newline="") as handle:
        for record in csv.reader(handle, skipinitialspace=True):
            if not record or record[0].startswith("|"):
                continue  # blank trailing lines, the "|1x3 Cross validator" comment
            if len(record) != n_fields:
                raise ValueError(f"{path.name}: malformed record {record!r}")
            fields = [field.strip() for field in record]
            row: list[Any] = []
            for value, is_numeric in zip(fields[:-1], numeric_mask, strict=True):
                if is_numeric:
                    row.append(float(value))
                elif value == "?":
                    row.append(np.nan)
                else:
                    row.append(value)
            rows.append(row)
            labels.append(int(fields[-1] == positive_label))
    X = np.empty((len(rows), len(ADULT_FEATURE_NAMES)), dtype=object)
    X[:] = rows
    return X, np.asarray(labels, dtype=np.int64)


@lru_cache(maxsize=1)
def _load_adult_arrays() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Parse the bundled files once; callers must copy before handing arrays out."""
    X_train, y_train = _parse_adult_file(DATA_DIR / "adult.data.gz", ">50K")
    X_test, y_test = _parse_adult_file(DATA_DIR / "adult.test.gz", ">50K.")
    for array in (X_train, X_test, y_train, y_test):
        array.setflags(write=False)
    return X_train, X_test, y_train, y_test


def _adult_frame(X: np.ndarray) -> Any:
    pd = import_pandas()
    columns = {}
    for j, name in enumerate(ADULT_FEATURE_NAMES):
        if name in _NUMERIC_COLUMNS:
            columns[name] = X[:, j].astype(np.float64)
        else:
            columns[name] = X[:, j].copy()
    return pd.DataFrame(columns)


def load_adult(*, return_X_y: bool = False, as_frame: bool = False) -> Bunch | tuple[Any, ...]:
    """Load the bundled Adult (census income) data set, with its official train/test split.

    The data are read from the copy shipped with skdp; nothing is downloaded. Numeric
    columns (age, fnlwgt, education_num, capital_gain, capital_loss, hours_per_week) are
    float64; categorical columns hold ``str`` values, with missing values ("?" in the raw
    files) as NaN. Preprocess with :func:`adult_preprocessor`, which maps missing
    categories to an all-zero one-hot block.

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(X_train, X_test, y_train, y_test)`` (the order of
        :func:`sklearn.model_selection.train_test_split`) instead of a Bunch.
    as_frame : bool, default=False
        If True, the features are pandas DataFrames with named columns (categoricals of
        object/string dtype, numerics float64) and the targets pandas Series named
        ``"income"``. Requires pandas, which is otherwise not needed.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        With attributes

        - ``X_train`` : ndarray of shape (32561, 14), dtype object, or DataFrame
        - ``X_test`` : ndarray of shape (16281, 14), dtype object, or DataFrame
        - ``y_train`` : ndarray of shape (32561,), int64 (1 means income >50K), or Series
        - ``y_test`` : ndarray of shape (16281,), int64, or Series
        - ``feature_names`` : list of str, the 14 column names in order
        - ``target_names`` : ndarray ``["<=50K", ">50K"]``
        - ``DESCR`` : str, a description with source and licence
    (X_train, X_test, y_train, y_test) : tuple
        If ``return_X_y`` is True. Every call returns fresh copies, which may be modified.

    Examples
    --------
    >>> from skdp.datasets import load_adult
    >>> adult = load_adult()
    >>> adult.X_train.shape, adult.X_test.shape
    ((32561, 14), (16281, 14))
    >>> adult.feature_names[:3]
    ['age', 'workclass', 'fnlwgt']
    >>> X_train, X_test, y_train, y_test = load_adult(return_X_y=True)
    >>> round(float(y_train.mean()), 4)
    0.2408
    """
    if as_frame:
        pd = import_pandas()  # fail early, before any parsing
    X_train, X_test, y_train, y_test = _load_adult_arrays()
    y_train, y_test = y_train.copy(), y_test.copy()
    if as_frame:
        X_train_out: Any = _adult_frame(X_train)
        X_test_out: Any = _adult_frame(X_test)
        y_train_out: Any = pd.Series(y_train, name="income")
        y_test_out: Any = pd.Series(y_test, name="income")
    else:
        X_train_out, X_test_out = X_train.copy(), X_test.copy()
        y_train_out, y_test_out = y_train, y_test
    if return_X_y:
        return X_train_out, X_test_out, y_train_out, y_test_out
    return Bunch(
        X_train=X_train_out,
        X_test=X_test_out,
        y_train=y_train_out,
        y_test=y_test_out,
        feature_names=list(ADULT_FEATURE_NAMES),
        target_names=np.array(TARGET_NAMES),
        DESCR=DESCR,
    )


def adult_preprocessor() -> ColumnTransformer:
    """Return an unfitted, data-independent preprocessor for :func:`load_adult` features.

    Why data-independent? Under differential privacy, every statistic computed from the
    private records consumes privacy budget. A ``StandardScaler`` (means, variances),
    a ``MinMaxScaler`` (extremes, which can be a single person's value) or a
    ``OneHotEncoder`` with ``categories="auto"`` (which reveals whether a rare category
    such as a country is present) would all leak information outside the privacy
    accounting. This transformer therefore fixes everything in advance: fitting it
    learns nothing from the data, so it is safe to fit on private records. Only the
    number of records ``n`` is treated as public, as is usual for DP-SGD style
    accounting.

    Categorical columns (workclass, education, marital_status, occupation,
    relationship, race, sex, native_country) are one-hot encoded with
    ``OneHotEncoder(categories=<ADULT_CATEGORIES>, handle_unknown="ignore",
    sparse_output=False, dtype=float64)``; missing (NaN) or unknown values give an
    all-zero block.

    Numeric columns are mapped with fixed public constants,
    ``(f(x) - center) / scale`` (see ``ADULT_NUMERIC_SCALING``), chosen from the
    documented meaning and range of each column so that typical values land roughly
    in [-2, 2]:

    ==============  =======  ============  ==========  ===============================
    column          f        center        scale       rationale
    ==============  =======  ============  ==========  ===============================
    age             x        45            25          years, about 17..90
    fnlwgt          log      12            1.5         census weight, about 1e4..1.5e6
    education_num   x        8.5           7.5         coded 1..16
    capital_gain    log1p    0             log1p(1e5)  dollars, mostly 0, <= 99,999
    capital_loss    log1p    0             log1p(1e5)  dollars, mostly 0
    hours_per_week  x        40            20          1..99, full time is 40
    ==============  =======  ============  ==========  ===============================

    Numeric NaN does not occur in Adult; if present it propagates to the output (and
    skdp estimators will then reject the input).

    Columns are selected by integer position, so the transformer accepts both the
    numpy object arrays and the DataFrames returned by :func:`load_adult` (14 columns
    in the original order). The output is a dense float64 array with 6 numeric and
    99 one-hot columns (105 in all), in the input column order; feature names from
    ``get_feature_names_out()`` are ``"age"``, ``"workclass_Private"``, ... for either
    input type.

    Returns
    -------
    ColumnTransformer
        Unfitted; ``fit`` only records the input shape.

    Examples
    --------
    >>> from skdp.datasets import adult_preprocessor, load_adult
    >>> X_train, X_test, y_train, y_test = load_adult(return_X_y=True)
    >>> pre = adult_preprocessor().fit(X_train)
    >>> pre.transform(X_test).shape
    (16281, 105)
    >>> [str(name) for name in pre.get_feature_names_out()[:3]]
    ['age', 'workclass_Private', 'workclass_Self-emp-not-inc']
    """
    return make_public_preprocessor(ADULT_FEATURE_NAMES, ADULT_NUMERIC_SCALING, ADULT_CATEGORIES)
