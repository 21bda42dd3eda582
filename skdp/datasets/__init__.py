"""Bundled public data sets and data-independent preprocessing for DP experiments.

Two real data sets ship with skdp, so examples, tests and benchmarks run offline:

- :func:`load_adult`: Adult (census income), binary classification, official split of
  32,561 training and 16,281 test records (UCI, CC BY 4.0);
- :func:`load_diamonds`: diamonds (ggplot2), price regression, 53,940 records (MIT).

Under differential privacy, preprocessing must not learn from the private records:
fitted means, variances, extremes or category sets would leak information outside the
privacy accounting. :func:`adult_preprocessor` and :func:`diamonds_preprocessor`
therefore return scikit-learn ``ColumnTransformer`` objects configured only with public
constants (documented category lists and domain-based scaling), so fitting them on
private data is free of privacy cost. :func:`scale_diamonds_target` maps prices to a
public, roughly unit scale. Sources and licences are in ``data/ATTRIBUTION.txt``.

Examples
--------
>>> from sklearn.linear_model import LogisticRegression
>>> from sklearn.pipeline import make_pipeline
>>> from skdp.datasets import adult_preprocessor, load_adult
>>> X_train, X_test, y_train, y_test = load_adult(return_X_y=True)
>>> model = make_pipeline(adult_preprocessor(), LogisticRegression(max_iter=1000))
>>> model.fit(X_train, y_train).score(X_test, y_test) > 0.84
True
"""

from ._adult import ADULT_CATEGORIES, ADULT_NUMERIC_SCALING, adult_preprocessor, load_adult
from ._diamonds import (
    DIAMONDS_CATEGORIES,
    DIAMONDS_LOG_PRICE_CENTER,
    DIAMONDS_NUMERIC_SCALING,
    diamonds_preprocessor,
    load_diamonds,
    scale_diamonds_target,
    unscale_diamonds_target,
)

__all__ = [
    "ADULT_CATEGORIES",
    "ADULT_NUMERIC_SCALING",
    "DIAMONDS_CATEGORIES",
    "DIAMONDS_LOG_PRICE_CENTER",
    "DIAMONDS_NUMERIC_SCALING",
    "adult_preprocessor",
    "diamonds_preprocessor",
    "load_adult",
    "load_diamonds",
    "scale_diamonds_target",
    "unscale_diamonds_target",
]
