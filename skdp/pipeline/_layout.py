"""The layout of a private pipeline: which steps learn under DP, which are free, which are refused.

Everything here reads parameters only, never data: a pipeline is checked (and refused) before
its fit touches a row. A step may

* learn under DP: an skdp transformer (:mod:`skdp.preprocessing`) or, as the final step, an
  skdp estimator; they get shares of the pipeline's budget;
* learn nothing from the data: ``'passthrough'``/``'drop'``/``None``, stateless transformers
  (scikit-learn's ``requires_fit=False`` tag: ``Normalizer``, ``HashingVectorizer``, ...),
  ``FunctionTransformer``, encoders with public categories, constant imputation that keeps
  every column;
* contain others: ``Pipeline``, ``ColumnTransformer``, ``FeatureUnion``,
  ``TransformedTargetRegressor``.

Anything else learns from the rows without DP and is refused, with the skdp replacement named.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sklearn.compose import ColumnTransformer, TransformedTargetRegressor, make_column_selector
from sklearn.feature_extraction import FeatureHasher
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import (
    OneHotEncoder,
)

from .._fit.estimator import BaseDPEstimator
from .._fit.leaks import is_data_independent
from ..preprocessing._base import BaseDPTransformer

__all__ = ["DPStep", "PipelineLayout", "NotPrivateError", "layout_of", "iter_dp_steps"]


class NotPrivateError(ValueError):
    """A step of a private pipeline learns from the data without differential privacy."""


# What to use instead of scikit-learn classes that learn from the data.
_REPLACEMENTS = {
    "StandardScaler": "skdp.preprocessing.DPStandardScaler",
    "MinMaxScaler": "skdp.preprocessing.DPStandardScaler (or a FunctionTransformer with public "
                    "bounds)",
    "MaxAbsScaler": "skdp.preprocessing.DPStandardScaler (or a FunctionTransformer with a "
                    "public scale)",
    "RobustScaler": "skdp.preprocessing.DPStandardScaler (its bounds are private quantiles)",
    "OneHotEncoder": "skdp.preprocessing.DPOneHotEncoder (or OneHotEncoder with public "
                     "categories=[...], handle_unknown='ignore')",
    "OrdinalEncoder": "skdp.preprocessing.DPOneHotEncoder (or OrdinalEncoder with public "
                      "categories=[...] and handle_unknown='use_encoded_value')",
    "TargetEncoder": "skdp.preprocessing.DPOneHotEncoder",
    "SimpleImputer": "skdp.preprocessing.DPSimpleImputer (or SimpleImputer(strategy='constant',"
                     " keep_empty_features=True))",
    "KNNImputer": "skdp.preprocessing.DPSimpleImputer",
    "IterativeImputer": "skdp.preprocessing.DPSimpleImputer",
    "MissingIndicator": "MissingIndicator(features='all') or DPSimpleImputer(add_indicator=True)",
    "CountVectorizer": "HashingVectorizer (no vocabulary is learned)",
    "TfidfVectorizer": "HashingVectorizer (no vocabulary or idf is learned)",
    "TfidfTransformer": "HashingVectorizer(norm='l2') alone",
    "LogisticRegression": "skdp.linear_model.DPLogisticRegression",
    "SGDClassifier": "skdp.linear_model.DPLogisticRegression",
    "Ridge": "skdp.linear_model.DPRidge",
    "LinearRegression": "skdp.linear_model.DPRidge",
    "SGDRegressor": "skdp.linear_model.DPRidge",
    "MLPClassifier": "skdp.neural_network.DPMLPClassifier",
    "MLPRegressor": "skdp.neural_network.DPMLPRegressor",
}


@dataclass(frozen=True)
class DPStep:
    """A step that learns under DP: its parameter path and the object in the pipeline."""

    path: str
    step: object

    @property
    def uses_partition_selection(self) -> bool:
        return isinstance(self.step, BaseDPTransformer) and self.step._uses_partition_selection()


@dataclass(frozen=True)
class PipelineLayout:
    """The DP steps of a pipeline (transformers that release something, and the model) and the
    data-independent ones."""

    transformers: tuple[DPStep, ...]
    model: DPStep | None
    free: tuple[str, ...]


def layout_of(steps: list[tuple[str, object]], input_is_sparse: bool) -> PipelineLayout:
    """Check a private pipeline's steps (before any data is read) and find its DP steps.

    Raises :class:`NotPrivateError` for any step that learns without DP, and ``ValueError`` for
    settings a private pipeline cannot account (a DP model before the last step, two models,
    step-level privacy or budgets, caching).
    """
    transformers: list[DPStep] = []
    models: list[DPStep] = []
    free: list[str] = []
    for position, (name, step) in enumerate(steps):
        final = position == len(steps) - 1
        _visit(step, name, final, input_is_sparse, transformers, models, free)
    if len(models) > 1:
        raise ValueError(
            "a private pipeline trains one DP model, as its final step; found "
            f"{[m.path for m in models]}"
        )
    return PipelineLayout(tuple(transformers), models[0] if models else None, tuple(free))


def iter_dp_steps(obj, path: str, fitted: bool) -> Iterator[tuple[str, object]]:
    """``(path, step)`` of every skdp transformer and estimator inside ``obj``: the objects of
    the (unfitted) tree, or with ``fitted`` the fitted ones (clones made by
    ``ColumnTransformer`` and ``TransformedTargetRegressor``; a ``ColumnTransformer`` branch
    that selected no column is never fitted, released nothing, and is not listed)."""
    if isinstance(obj, BaseDPTransformer | BaseDPEstimator):
        if not fitted or hasattr(obj, "privacy_spent_"):
            yield path, obj
    elif isinstance(obj, Pipeline):
        for name, step in obj.steps:
            yield from iter_dp_steps(step, f"{path}__{name}" if path else name, fitted)
    elif isinstance(obj, ColumnTransformer):
        parts = obj.transformers_ if fitted else [
            *obj.transformers, ("remainder", obj.remainder, None)
        ]
        for name, step, _ in parts:
            yield from iter_dp_steps(step, f"{path}__{name}", fitted)
    elif isinstance(obj, FeatureUnion):
        for name, step in obj.transformer_list:
            yield from iter_dp_steps(step, f"{path}__{name}", fitted)
    elif isinstance(obj, TransformedTargetRegressor):
        regressor = obj.regressor_ if fitted else obj.regressor
        transformer = getattr(obj, "transformer_", None) if fitted else obj.transformer
        yield from iter_dp_steps(transformer, f"{path}__transformer", fitted)
        yield from iter_dp_steps(regressor, f"{path}__regressor", fitted)


def _visit(step, path, final, input_is_sparse, transformers, models, free) -> None:
    if step is None or (isinstance(step, str) and step in ("passthrough", "drop")):
        return
    if isinstance(step, BaseDPTransformer):
        _check_defaults(step, path)
        if step._release_weights():
            transformers.append(DPStep(path, step))
        else:
            free.append(path)
        return
    if isinstance(step, BaseDPEstimator):
        if not final:
            raise ValueError(
                f"step {path!r} ({type(step).__name__}) is a DP model but not the final step; a "
                "private pipeline trains one model, last"
            )
        _check_defaults(step, path)
        if getattr(step, "accountant", None) == "last_iterate":
            raise ValueError(
                f"step {path!r}: accountant='last_iterate' cannot be used in a private pipeline "
                "(its bound covers the training alone, under replace-one neighbouring); use "
                "accountant='pld' or 'rdp'"
            )
        models.append(DPStep(path, step))
        return
    if isinstance(step, Pipeline):
        if step.memory is not None:
            raise ValueError(
                f"step {path!r}: a Pipeline with memory= caches fitted steps across fits (and "
                "clones them); use memory=None inside a private pipeline"
            )
        for position, (name, sub) in enumerate(step.steps):
            _visit(sub, f"{path}__{name}", final and position == len(step.steps) - 1,
                   input_is_sparse, transformers, models, free)
        return
    if isinstance(step, ColumnTransformer):
        # Its parts first: a step that learns without DP is the error to fix first (its
        # replacement may also settle the checks on the ColumnTransformer itself).
        for name, sub, _ in step.transformers:
            _visit(sub, f"{path}__{name}", False, input_is_sparse, transformers, models, free)
        _visit(step.remainder, f"{path}__remainder", False, input_is_sparse, transformers,
               models, free)
        _check_column_transformer(step, path, input_is_sparse)
        return
    if isinstance(step, FeatureUnion):
        for name, sub in step.transformer_list:
            _visit(sub, f"{path}__{name}", False, input_is_sparse, transformers, models, free)
        return
    if isinstance(step, TransformedTargetRegressor):
        if step.check_inverse:
            raise ValueError(
                f"step {path!r}: TransformedTargetRegressor(check_inverse=True) compares the "
                "target with its round trip and warns when they differ, which depends on the "
                "private targets; set check_inverse=False"
            )
        if step.transformer is not None:
            _visit(step.transformer, f"{path}__transformer", False, input_is_sparse,
                   transformers, models, free)
        _visit(step.regressor, f"{path}__regressor", final, input_is_sparse, transformers,
               models, free)
        return
    if is_data_independent(step):
        free.append(path)
        return
    name = type(step).__name__
    instead = _REPLACEMENTS.get(name)
    hint = f"; use {instead} instead" if instead else (
        "; use an skdp estimator or transformer, a data-independent transformer, or fit it on "
        "public data and pass the transformed data"
    )
    raise NotPrivateError(
        f"step {path!r} ({name}) learns from the data it is fitted on without differential "
        f"privacy, outside the pipeline's accounting{hint}. Nothing was read or charged."
    )


def _check_defaults(step, path: str) -> None:
    """A step's own privacy and budget would be ignored inside a pipeline: refuse them."""
    default = type(step)().get_params(deep=False)
    params = step.get_params(deep=False)
    if "privacy" in params and params["privacy"] != default.get("privacy"):
        raise ValueError(
            f"step {path!r} sets privacy={params['privacy']!r}, but in a private pipeline the "
            "privacy is set once, on the pipeline, and split among its steps; leave the step's "
            "privacy at its default and use the pipeline's preprocessing_share or step_weights "
            "to change the split"
        )
    if params.get("budget") is not None:
        raise ValueError(
            f"step {path!r} has its own budget=; a private pipeline charges its budget once for "
            "all its steps: pass budget= to the pipeline instead"
        )


def _check_column_transformer(ct: ColumnTransformer, path: str, input_is_sparse: bool) -> None:
    for name, _, columns in ct.transformers:
        if callable(columns) and not isinstance(columns, make_column_selector):
            raise ValueError(
                f"step {path!r}: the columns of {name!r} are chosen by a function, which could "
                "look at the private values; select columns by name, position, or "
                "sklearn.compose.make_column_selector (dtypes and name patterns)"
            )
    if 0.0 < ct.sparse_threshold < 1.0 or ct.sparse_threshold == 1.0:
        # The output is sparse when its density is below the threshold: it must be a
        # function of public facts. Dense parts and skdp's encoders (one 1 per feature and row)
        # have public numbers of non-zeros; other sparse outputs do not.
        for name, sub, _ in [*ct.transformers, ("remainder", ct.remainder, None)]:
            if _may_output_data_dependent_sparse(sub, input_is_sparse):
                raise ValueError(
                    f"step {path!r}: {name!r} outputs a sparse matrix whose number of non-zeros "
                    "depends on the data, and with sparse_threshold="
                    f"{ct.sparse_threshold:g} whether the ColumnTransformer's output is sparse "
                    "would then depend on the private rows; set sparse_threshold=0 (always "
                    "dense) or put the sparse step outside the ColumnTransformer"
                )


def _may_output_data_dependent_sparse(step, input_is_sparse: bool) -> bool:
    if isinstance(step, HashingVectorizer | FeatureHasher):
        return True
    if isinstance(step, OneHotEncoder):
        return step.sparse_output and step.handle_unknown == "ignore"
    if isinstance(step, str) and step == "passthrough":
        return input_is_sparse
    if isinstance(step, Pipeline):
        return _may_output_data_dependent_sparse(step.steps[-1][1], input_is_sparse)
    return False
