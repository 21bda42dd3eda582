"""DPMLPClassifier and DPMLPRegressor: equivalence with plain training, privacy bookkeeping and
the scikit-learn surface specific to MLPs (the shared checks are in
tests/package/test_estimators.py)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from dp_accounting.pld import PLDAccountant
from sklearn.datasets import make_classification, make_regression
from sklearn.neural_network import MLPClassifier

from skdp._engine._device import FitRandomness
from skdp._engine._sampling import PoissonSampler
from skdp._utils.validation import PrivacyWarning
from skdp.linear_model import DPLogisticRegression
from skdp.neural_network import DPMLPClassifier, DPMLPRegressor

INF = (float("inf"), 0)
CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def multiclass_data():
    X, y = make_classification(
        n_samples=3000, n_features=10, n_informative=6, n_classes=3, random_state=0
    )
    return X / 2, y


@pytest.fixture(scope="module")
def regression_data():
    X, y = make_regression(n_samples=3000, n_features=5, noise=2.0, random_state=0)
    return X, np.tanh(y / np.abs(y).max() * 3)  # a bounded, non-linear target


def plain_torch_training(X, y, *, hidden, lr, batch_size, epochs, alpha, seed):
    """The non-private run written with torch.nn and autograd, sharing only the random streams
    (initial weights and Poisson batches) with skdp."""
    n, d = X.shape
    n_classes = int(y.max()) + 1
    randomness = FitRandomness(seed, CPU)
    sizes = (d, *hidden, n_classes)
    # Glorot-uniform in scikit-learn's layout: W then b for each layer, from the same stream.
    layers = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
        bound = np.sqrt(6 / (fan_in + fan_out))
        W = randomness.init.uniform(-bound, bound, size=fan_in * fan_out).reshape(fan_in, fan_out)
        b = randomness.init.uniform(-bound, bound, size=fan_out)
        linear = torch.nn.Linear(fan_in, fan_out)
        with torch.no_grad():
            linear.weight.copy_(torch.as_tensor(W.T, dtype=torch.float32))
            linear.bias.copy_(torch.as_tensor(b, dtype=torch.float32))
        layers += [linear, torch.nn.ReLU()]
    net = torch.nn.Sequential(*layers[:-1])
    sampler = PoissonSampler(n, batch_size / n, randomness.sampling)
    X_t = torch.as_tensor(X, dtype=torch.float32)
    y_t = torch.as_tensor(y, dtype=torch.int64)
    for _ in range(epochs * round(n / batch_size)):
        idx = torch.from_numpy(sampler.sample())
        net.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(X_t[idx]), y_t[idx], reduction="sum")
        (loss / (batch_size / n * n)).backward()  # skdp divides by the expected batch size
        with torch.no_grad():
            for module in net:
                if isinstance(module, torch.nn.Linear):
                    module.weight -= lr * (module.weight.grad + alpha / batch_size * module.weight)
                    module.bias -= lr * module.bias.grad
    return [m.weight.detach().numpy().T for m in net if isinstance(m, torch.nn.Linear)]


def test_non_private_fit_equals_plain_torch_training(multiclass_data):
    X, y = multiclass_data
    settings = dict(hidden=(16, 8), lr=0.3, batch_size=100, epochs=2, alpha=1e-2, seed=3)
    reference = plain_torch_training(X, y, **settings)
    clf = DPMLPClassifier(
        privacy=INF,
        hidden_layer_sizes=settings["hidden"],
        learning_rate_init=settings["lr"],
        batch_size=settings["batch_size"],
        max_iter=settings["epochs"],
        alpha=settings["alpha"],
        average=False,
        random_state=settings["seed"],
    ).fit(X, y)
    assert len(clf.coefs_) == len(reference) == 3
    for ours, theirs in zip(clf.coefs_, reference, strict=True):
        np.testing.assert_allclose(ours, theirs, atol=2e-4)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_non_private_fit_is_as_accurate_as_scikit_learn_sgd(multiclass_data):
    X, y = multiclass_data
    Xtr, Xte, ytr, yte = X[:2000], X[2000:], y[:2000], y[2000:]
    common = dict(hidden_layer_sizes=(32,), learning_rate_init=0.1, batch_size=50, max_iter=30)
    ours = DPMLPClassifier(privacy=INF, average=False, random_state=0, **common).fit(Xtr, ytr)
    sk = MLPClassifier(
        solver="sgd", momentum=0.0, alpha=1e-4, tol=0, n_iter_no_change=1000, random_state=0,
        **common,
    ).fit(Xtr, ytr)
    assert ours.score(Xte, yte) >= sk.score(Xte, yte) - 0.02


def test_auto_step_is_the_private_one_or_the_non_private_one():
    """The private step (2.0) on unclipped gradients stayed at chance level on digits: without
    privacy 'auto' takes the smaller step, with privacy the measured one damped by the noise."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    Xtr, Xte, ytr, yte = X[:1200], X[1200:], y[:1200], y[1200:]
    plain = DPMLPClassifier(privacy=INF, random_state=0).fit(Xtr, ytr)
    assert plain.learning_rate_ == 0.5
    assert plain.score(Xte, yte) > 0.85
    # max_iter='auto': 100 epochs without privacy (only iterations limit such a fit), the
    # measured 20 with it; an int is taken as given.
    assert plain.n_iter_ == 100
    assert DPMLPClassifier(privacy=(1.0, 1e-5), random_state=0).fit(Xtr, ytr).n_iter_ == 20
    assert DPMLPRegressor(privacy=INF, max_iter=3).fit(Xtr, ytr / 10.0).n_iter_ == 3
    at_private_step = DPMLPClassifier(privacy=INF, learning_rate_init=2.0, random_state=0)
    assert at_private_step.fit(Xtr, ytr).score(Xte, yte) < 0.5  # why 'auto' differs
    private = DPMLPClassifier(privacy=(1.0, 1e-5), max_iter=1).fit(Xtr, ytr)
    # The measured private step, damped by the public noise per coordinate.
    assert private.learning_rate_ == pytest.approx(
        2.0 / (1.0 + 120.0 * private.noise_multiplier_ / private.batch_size_), rel=1e-12)
    assert DPMLPClassifier(privacy=(1.0, 1e-5), learning_rate_init=2.0,
                           max_iter=1).fit(Xtr, ytr).learning_rate_ == 2.0
    assert DPMLPRegressor(privacy=INF, max_iter=1).fit(Xtr, ytr / 10.0).learning_rate_ == 0.125
    # The regressor damps its private step on a public target scale only: found here, and
    # not where the scale search is infeasible (tiny n), where the output bias must travel.
    scaled = DPMLPRegressor(max_iter=1).fit(Xtr, ytr / 10.0)
    assert scaled.learning_rate_ == pytest.approx(
        0.5 / (1.0 + 80.0 * scaled.noise_multiplier_ / scaled.batch_size_), rel=1e-12)
    with pytest.warns(PrivacyWarning, match="too small to find a public scale"):
        as_given = DPMLPRegressor(privacy=(0.5, 1e-5), max_iter=1).fit(Xtr[:40], ytr[:40])
    assert as_given.learning_rate_ == 0.5


def test_regressor_auto_scale_handles_raw_units_inside_the_guarantee():
    """Raw features and targets (prices): the public scale found privately makes the fit work,
    is composed into privacy_spent_, and folds back so that predictions are in the raw units."""
    import dp_accounting

    rng = np.random.default_rng(0)
    X = rng.normal(size=(8000, 4)) * 40.0
    y = 500.0 + 120.0 * np.tanh(X[:, 0] / 40.0) + 60.0 * X[:, 1] / 40.0 + rng.normal(size=8000)
    common = dict(privacy=(1.0, 1e-5), hidden_layer_sizes=(16,), random_state=0)
    as_given = DPMLPRegressor(max_row_norm=None, **common).fit(X, y)
    scaled = DPMLPRegressor(**common).fit(X, y)  # max_row_norm='auto', the default
    assert as_given.score(X, y) < 0.0
    assert scaled.score(X, y) > 0.8
    assert scaled.privacy_spent_[0] <= 1.0
    assert scaled.row_norm_bound_ > 10.0  # in the raw units of X
    gaussians = []

    def collect(event):
        if isinstance(event, dp_accounting.GaussianDpEvent):
            gaussians.append(event.noise_multiplier)
        for child in getattr(event, "events", []):
            collect(child)

    collect(scaled.dp_event_)
    assert gaussians, "the scale search must be in the fit's DpEvent"
    assert "max_row_norm='auto'" in scaled.privacy_report()
    with pytest.warns(PrivacyWarning, match="too small to find a public scale"):
        DPMLPRegressor(privacy=(0.5, 1e-5), max_row_norm="auto", hidden_layer_sizes=(4,),
                       max_iter=1).fit(X[:150], y[:150] / 500.0)


@pytest.mark.parametrize("accountant", ["pld", "rdp"])
def test_private_fit_accounting(multiclass_data, accountant):
    X, y = multiclass_data
    clf = DPMLPClassifier(
        privacy=(1.0, 1e-5), hidden_layer_sizes=(16,), max_iter=3, accountant=accountant,
        random_state=0,
    ).fit(X, y)
    epsilon, delta = clf.privacy_spent_
    assert 0.99 <= epsilon <= 1.0 and delta == 1e-5
    accountant_ = PLDAccountant(value_discretization_interval=1e-4).compose(clf.dp_event_)
    assert accountant_.get_epsilon(1e-5) <= epsilon * 1.001
    # The plan does not depend on the model: same noise as a linear model with the same plan.
    linear = DPLogisticRegression(
        privacy=(1.0, 1e-5), max_iter=3, accountant=accountant, random_state=0
    ).fit(X, y)
    assert clf.n_steps_ == linear.n_steps_
    assert clf.noise_multiplier_ == pytest.approx(linear.noise_multiplier_)
    assert "ghost clipping" in clf.privacy_report()


def test_private_classifier_is_useful(multiclass_data):
    X, y = multiclass_data
    Xtr, Xte, ytr, yte = X[:2500], X[2500:], y[:2500], y[2500:]
    clf = DPMLPClassifier(privacy=(2.0, 1e-5), hidden_layer_sizes=(32,), random_state=0)
    assert clf.fit(Xtr, ytr).score(Xte, yte) > 0.6  # chance is 1/3


def test_private_regressor_is_useful(regression_data):
    X, y = regression_data
    reg = DPMLPRegressor(privacy=(2.0, 1e-5), hidden_layer_sizes=(32,), random_state=0)
    assert reg.fit(X[:2500], y[:2500]).score(X[2500:], y[2500:]) > 0.6


def test_fitted_attributes_follow_scikit_learn(multiclass_data, regression_data):
    X, y = multiclass_data
    clf = DPMLPClassifier(hidden_layer_sizes=(8, 4), max_iter=1, random_state=0).fit(X, y)
    assert [W.shape for W in clf.coefs_] == [(10, 8), (8, 4), (4, 3)]
    assert [b.shape for b in clf.intercepts_] == [(8,), (4,), (3,)]
    assert clf.n_layers_ == 4 and clf.n_outputs_ == 3 and clf.out_activation_ == "softmax"
    assert all(type(a) is np.ndarray for a in clf.coefs_ + clf.intercepts_)
    proba = clf.predict_proba(X[:5])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X[:5])), proba, rtol=1e-10)
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(restored.predict_proba(X), clf.predict_proba(X))

    binary = DPMLPClassifier(hidden_layer_sizes=5, max_iter=1, random_state=0).fit(X, y > 0)
    assert binary.n_outputs_ == 1 and binary.out_activation_ == "logistic"
    assert binary.predict_proba(X[:3]).shape == (3, 2)
    np.testing.assert_allclose(
        np.exp(binary.predict_log_proba(X[:3])), binary.predict_proba(X[:3]), rtol=1e-10
    )

    Xr, yr = regression_data
    reg = DPMLPRegressor(hidden_layer_sizes=(), max_iter=1, random_state=0).fit(Xr, yr)
    assert reg.n_layers_ == 2 and reg.predict(Xr[:4]).shape == (4,)  # no hidden layer: linear
    multi = DPMLPRegressor(max_iter=1, random_state=0).fit(Xr, np.column_stack([yr, -yr]))
    assert multi.predict(Xr[:4]).shape == (4, 2) and multi.out_activation_ == "identity"


def test_activation_is_fixed_at_fit_time(multiclass_data):
    X, y = multiclass_data
    clf = DPMLPClassifier(activation="tanh", max_iter=1, random_state=0).fit(X, y)
    before = clf.predict_proba(X[:20])
    clf.set_params(activation="relu")
    np.testing.assert_array_equal(clf.predict_proba(X[:20]), before)


@pytest.mark.parametrize("activation", ["relu", "tanh", "logistic", "identity"])
def test_every_activation_trains(multiclass_data, activation):
    X, y = multiclass_data
    clf = DPMLPClassifier(
        privacy=INF, activation=activation, learning_rate_init=0.5, max_iter=5, random_state=0
    )
    assert clf.fit(X, y).score(X, y) > 0.6


@pytest.mark.parametrize(
    ("hidden", "match"),
    [((0,), "positive integer"), ((4, -1), "positive integer"), (("a",), "positive integer")],
)
def test_bad_hidden_layer_sizes_are_refused(multiclass_data, hidden, match):
    X, y = multiclass_data
    with pytest.raises(ValueError, match=match):
        DPMLPClassifier(hidden_layer_sizes=hidden, max_iter=1).fit(X, y)


def test_multilabel_targets_are_refused_clearly(multiclass_data):
    X, y = multiclass_data
    Y = np.column_stack([y == 0, y == 1]).astype(int)
    with pytest.raises(ValueError, match="1d array"):
        DPMLPClassifier(max_iter=1).fit(X, Y)


def test_random_state_reproduces_and_none_does_not(multiclass_data):
    X, y = multiclass_data
    first = DPMLPClassifier(max_iter=1, random_state=5).fit(X, y).coefs_[0]
    again = DPMLPClassifier(max_iter=1, random_state=5).fit(X, y).coefs_[0]
    np.testing.assert_array_equal(first, again)
    fresh = DPMLPClassifier(max_iter=1, random_state=None).fit(X, y).coefs_[0]
    assert not np.array_equal(first, fresh)


def test_adp_sgd_runs_its_decaying_schedule_by_default():
    # learning_rate='auto': ADP-SGD's decaying steps with noise shaped to them (with constant
    # steps it was noisy_sgd bit for bit); every other optimizer keeps constant steps.
    X, y = make_classification(n_samples=600, n_features=6, random_state=0)
    common = dict(privacy=(1.0, 1e-5), hidden_layer_sizes=(8,), max_iter=3, random_state=0)
    noisy = DPMLPClassifier(**common).fit(X, y)
    constant = DPMLPClassifier(learning_rate="constant", **common).fit(X, y)
    np.testing.assert_array_equal(noisy.coefs_[0], constant.coefs_[0])
    adp = DPMLPClassifier(optimizer="adp_sgd", **common).fit(X, y)
    adp_constant = DPMLPClassifier(optimizer="adp_sgd", learning_rate="constant", **common)
    adp_constant.fit(X, y)
    np.testing.assert_array_equal(adp_constant.coefs_[0], noisy.coefs_[0])  # the old default
    assert not np.array_equal(adp.coefs_[0], noisy.coefs_[0])
    assert DPMLPClassifier().learning_rate == "auto"
