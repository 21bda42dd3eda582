"""scikit-learn conformance and input handling of every DP estimator."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp import PrivacyWarning
from skdp.linear_model import DPLogisticRegression, DPRidge
from tests._inventory import ESTIMATORS, SGD_OPTIMIZERS

INF = (float("inf"), 0)


@parametrize_with_checks([Estimator() for Estimator in ESTIMATORS])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        # The generic checks use tiny data sets; the delta-vs-n warning is expected there.
        warnings.simplefilter("ignore", PrivacyWarning)
        check(estimator)


@pytest.fixture(scope="module")
def binary_data():
    X, y = make_classification(n_samples=3000, n_features=8, n_informative=5, random_state=0)
    return X, y


@pytest.fixture(scope="module")
def regression_data():
    X, y, coef = make_regression(
        n_samples=3000, n_features=6, n_informative=6, noise=5.0, coef=True, random_state=0
    )
    scale = np.abs(y).max()  # a known bound of this synthetic target, used as a public scale
    return X, y / scale


# --- privacy parameter ----------------------------------------------------------------------------
@pytest.mark.parametrize("Estimator", ESTIMATORS)
@pytest.mark.parametrize(
    "privacy, match",
    [
        ((0.0, 1e-5), "epsilon must be positive"),
        ((-1.0, 1e-5), "epsilon must be positive"),
        ((float("nan"), 1e-5), "epsilon must be positive"),
        ((1.0, 0.0), "delta must be in the open interval"),
        ((1.0, 1.0), "delta must be in the open interval"),
        ((1.0, -1e-5), "delta must be in the open interval"),
        (1.0, "privacy must be a pair"),
        ((1.0,), "privacy must be a pair"),
        ("1.0", "privacy must be a pair"),
        (("1", 1e-5), "must be real numbers"),
        (None, "privacy must be a pair"),
    ],
)
def test_invalid_privacy_is_refused(Estimator, privacy, match, binary_data):
    X, y = binary_data
    with pytest.raises(ValueError, match=match):
        Estimator(privacy=privacy).fit(X, y)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_delta_not_below_one_over_n_warns(Estimator, binary_data):
    X, y = binary_data
    with pytest.warns(PrivacyWarning, match="1/n_samples"):
        Estimator(privacy=(1.0, 1e-3), max_iter=1, random_state=0).fit(X, y)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
@pytest.mark.parametrize("name", SGD_OPTIMIZERS)
def test_every_optimizer_fits_every_estimator(Estimator, name, binary_data):
    X, y = binary_data
    est = Estimator(optimizer=name, max_iter=3, random_state=0).fit(X, y)
    assert np.isfinite(est.predict(X).astype(float)).all()
    assert est.privacy_spent_[0] <= 1.0
    assert f"optimizer={name!r}" in est.privacy_report()


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_unknown_optimizer_params_are_refused_with_the_accepted_names(Estimator, binary_data):
    X, y = binary_data
    with pytest.raises(ValueError, match="accepts .*gamma"):
        Estimator(optimizer="adaclip", optimizer_params={"gama": 0.5}).fit(X, y)
    with pytest.raises(ValueError, match="takes no optimizer_params"):
        Estimator(optimizer="noisy_sgd", optimizer_params={"gamma": 0.5}).fit(X, y)
    with pytest.raises(ValueError, match="restart_period"):
        Estimator(optimizer="diff2", optimizer_params={"restart_period": 0}).fit(X, y)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_unknown_optimizer_is_a_parameter_error(Estimator, binary_data):
    X, y = binary_data
    with pytest.raises(ValueError, match="optimizer"):
        Estimator(optimizer="adam").fit(X, y)


# --- the guarantee of a fit -----------------------------------------------------------------------
@pytest.mark.parametrize("Estimator", ESTIMATORS)
@pytest.mark.parametrize("accountant", ["pld", "rdp"])
def test_privacy_spent_never_above_request(Estimator, accountant, binary_data):
    X, y = binary_data
    est = Estimator(privacy=(0.7, 1e-6), accountant=accountant, random_state=0).fit(X, y)
    eps, delta = est.privacy_spent_
    assert eps <= 0.7
    assert eps >= 0.69  # calibration uses the budget, it does not waste it
    assert delta == 1e-6
    assert est.noise_multiplier_ > 0
    report = est.privacy_report()
    for fragment in (
        "add or remove one row",
        f"{est.noise_multiplier_:.4g}",
        "1e-06",
        accountant.upper(),
        "Poisson",
    ):
        assert fragment in report


def test_non_private_fit_has_no_guarantee(binary_data):
    X, y = binary_data
    est = DPLogisticRegression(privacy=INF, random_state=0).fit(X, y)
    assert est.noise_multiplier_ == 0.0
    assert est.privacy_spent_ == (float("inf"), 0.0)
    assert "NONE" in est.privacy_report()


def test_privacy_report_requires_fit():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        DPLogisticRegression().privacy_report()


# --- accuracy -------------------------------------------------------------------------------------
def test_non_private_logistic_matches_sklearn(binary_data):
    X, y = binary_data
    ours = DPLogisticRegression(privacy=INF, random_state=0).fit(X, y).score(X, y)
    ref = LogisticRegression().fit(X, y).score(X, y)
    assert ours >= ref - 0.01


def test_non_private_ridge_matches_sklearn(regression_data):
    X, y = regression_data
    ours = DPRidge(privacy=INF, random_state=0).fit(X, y).score(X, y)
    ref = Ridge(alpha=1.0).fit(X, y).score(X, y)
    assert ours >= ref - 0.01


def test_private_logistic_is_useful(binary_data):
    X, y = binary_data
    ours = DPLogisticRegression(privacy=(2.0, 1e-5), random_state=0).fit(X, y).score(X, y)
    ref = LogisticRegression().fit(X, y).score(X, y)
    assert ours >= ref - 0.05


def test_multiclass_softmax():
    X, y = make_classification(
        n_samples=4000,
        n_features=10,
        n_informative=6,
        n_classes=4,
        n_clusters_per_class=1,
        random_state=1,
    )
    labels = np.array(["ant", "bee", "cat", "dog"])[y]
    est = DPLogisticRegression(privacy=(2.0, 1e-5), random_state=0).fit(X, labels)
    assert est.coef_.shape == (4, 10) and est.intercept_.shape == (4,)
    proba = est.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.exp(est.predict_log_proba(X)), proba, rtol=1e-10)
    assert set(est.predict(X)) <= set(labels)
    ref = LogisticRegression().fit(X, labels).score(X, labels)
    assert est.score(X, labels) >= ref - 0.08


def test_binary_string_labels_and_shapes(binary_data):
    X, y = binary_data
    labels = np.where(y == 1, "yes", "no")
    est = DPLogisticRegression(privacy=(1.0, 1e-5), random_state=0).fit(X, labels)
    assert est.classes_.tolist() == ["no", "yes"]
    assert est.coef_.shape == (1, 8) and est.intercept_.shape == (1,)
    assert est.decision_function(X).shape == (3000,)
    positive = est.predict(X) == "yes"
    np.testing.assert_array_equal(positive, est.decision_function(X) > 0)


def test_multioutput_ridge(regression_data):
    X, y = regression_data
    Y = np.column_stack([y, -y])
    est = DPRidge(privacy=(2.0, 1e-5), random_state=0).fit(X, Y)
    assert est.coef_.shape == (2, 6) and est.intercept_.shape == (2,)
    assert est.predict(X).shape == (3000, 2)
    assert est.score(X, Y) > 0.8


# --- public classes -------------------------------------------------------------------------------
def test_public_classes_parameter(binary_data):
    X, y = binary_data
    est = DPLogisticRegression(classes=[0, 1, 2], privacy=(1.0, 1e-5), random_state=0)
    est.fit(X, y)  # class 2 never appears: it is still a public, learnable class
    assert est.classes_.tolist() == [0, 1, 2]
    assert est.predict_proba(X).shape == (3000, 3)
    assert "given by the user" in est.privacy_report()


def test_labels_outside_public_classes_are_refused(binary_data):
    X, y = binary_data
    with pytest.raises(ValueError, match="not in the public classes"):
        DPLogisticRegression(classes=[0]).fit(X, y + 5)


def test_single_class_is_refused(binary_data):
    X, _ = binary_data
    with pytest.raises(ValueError, match="at least 2 classes"):
        DPLogisticRegression().fit(X, np.zeros(len(X)))


# --- bad input ------------------------------------------------------------------------------------
@pytest.mark.parametrize("Estimator", ESTIMATORS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input_is_refused(Estimator, bad, binary_data):
    X, y = binary_data
    X = X.copy()
    X[3, 2] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        Estimator().fit(X, y)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_sparse_input_fits_like_dense(Estimator, binary_data):
    # Sparse input is supported (tests/engine/test_sparse_input.py has the details).
    X, y = binary_data
    dense = Estimator(random_state=0, max_iter=1).fit(X, y)
    sparse = Estimator(random_state=0, max_iter=1).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(
        sparse.predict(sp.csr_matrix(X[:50])), dense.predict(X[:50]), rtol=1e-4, atol=1e-5
    )


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_empty_and_misshaped_input(Estimator, binary_data):
    X, y = binary_data
    with pytest.raises(ValueError):
        Estimator().fit(X[:0], y[:0])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        Estimator().fit(X, y[:-1])
    with pytest.raises(ValueError, match="2D array"):
        Estimator().fit(X[:, 0], y)
    est = Estimator(random_state=0, max_iter=1).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :3])


def test_cuda_without_gpu_is_refused(binary_data):
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    X, y = binary_data
    with pytest.raises(ValueError, match="no CUDA device"):
        DPLogisticRegression(device="cuda").fit(X, y)
    with pytest.raises(ValueError, match="device must be"):
        DPLogisticRegression(device="tpu:0").fit(X, y)


def test_huge_feature_scale_stays_finite(binary_data):
    X, y = binary_data
    est = DPLogisticRegression(privacy=(1.0, 1e-5), random_state=0).fit(X * 1e6, y)
    assert np.all(np.isfinite(est.coef_)) and np.all(np.isfinite(est.intercept_))


def test_float32_and_float64_agree(binary_data):
    X, y = binary_data
    a = DPLogisticRegression(random_state=0).fit(X.astype(np.float64), y)
    b = DPLogisticRegression(random_state=0).fit(X.astype(np.float32), y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-4, atol=1e-5)


# --- scikit-learn workflows -----------------------------------------------------------------------
def test_pandas_input_records_feature_names(binary_data):
    pd = pytest.importorskip("pandas")
    X, y = binary_data
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    est = DPLogisticRegression(random_state=0).fit(frame, pd.Series(y))
    assert est.feature_names_in_.tolist() == list(frame.columns)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        from_numpy = est.predict(X)
    np.testing.assert_array_equal(est.predict(frame), from_numpy)


def test_clone_pickle_pipeline_and_search(binary_data):
    X, y = binary_data
    est = DPLogisticRegression(privacy=(1.0, 1e-5), random_state=0)
    cloned = clone(est)
    assert cloned.get_params() == est.get_params()
    est.fit(X, y)
    restored = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(restored.predict(X), est.predict(X))
    assert restored.privacy_spent_ == est.privacy_spent_
    pipe = make_pipeline(FunctionTransformer(np.tanh), DPLogisticRegression(random_state=0))
    assert cross_val_score(pipe, X, y, cv=3).mean() > 0.7
    search = GridSearchCV(
        DPLogisticRegression(random_state=0), {"max_grad_norm": [0.5, 1.0]}, cv=2
    ).fit(X, y)
    assert search.best_params_["max_grad_norm"] in (0.5, 1.0)


def test_fitted_attributes_are_numpy_on_cpu(binary_data):
    # Whatever device trained it ('auto': CUDA where there is one), the fitted attributes are
    # host numpy values.
    X, y = binary_data
    est = DPRidge(random_state=0).fit(X, y.astype(float))
    assert isinstance(est.coef_, np.ndarray) and isinstance(est.intercept_, float)
    assert est.device_ == ("cuda" if torch.cuda.is_available() else "cpu")
    assert est.n_steps_ == est.n_iter_ * round(len(X) / est.batch_size_)


def test_verbose_reports_only_released_values(binary_data, capsys):
    X, y = binary_data
    DPLogisticRegression(max_iter=2, verbose=1, random_state=0).fit(X, y)
    out = capsys.readouterr().out
    assert out.count("epoch") == 2
    assert "released noisy gradient" in out


def test_average_parameter(binary_data):
    X, y = binary_data
    # (not a dict: True and 1.0 are the same key)
    default, tenth, last, everything = (
        DPLogisticRegression(average=avg, random_state=0, max_iter=4).fit(X, y).coef_
        for avg in (True, 0.1, False, 1.0)
    )
    np.testing.assert_array_equal(default, tenth)  # True is the documented 0.1
    assert not np.array_equal(last, tenth)
    assert not np.array_equal(everything, tenth)
    with pytest.raises(ValueError, match="average"):
        DPLogisticRegression(average=1.5).fit(X, y)


def test_privacy_report_is_fixed_at_fit_time(binary_data):
    X, y = binary_data
    est = DPLogisticRegression(max_grad_norm=0.5, random_state=0).fit(X, y)
    report = est.privacy_report()
    assert "clipped to L2 norm 0.5" in report
    est.set_params(max_grad_norm=3.0, optimizer="adaclip")
    assert est.privacy_report() == report


def test_device_accepts_torch_device_objects(binary_data):
    X, y = binary_data
    a = DPLogisticRegression(device=torch.device("cpu"), random_state=0, max_iter=2).fit(X, y)
    b = DPLogisticRegression(device="cpu", random_state=0, max_iter=2).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.device_ == "cpu"
