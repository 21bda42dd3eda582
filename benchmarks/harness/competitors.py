"""One adapter per library, each of which fits and scores, so that a study runs the libraries
side by side in one process on the same arrays.

- :class:`Skdp`: an skdp estimator with its defaults plus what the study sets;
- :class:`Sklearn`: a scikit-learn estimator, the non-private reference;
- :class:`Opacus`: DP-SGD on ``nn.Linear`` or a ReLU MLP, configured from a fitted skdp
  estimator (same epochs, steps per epoch, expected batch size, clipping bound, step size and
  L2 penalty), Poisson sampling and its PRV accountant; the last iterate;
- :class:`Diffprivlib`: its LogisticRegression / LinearRegression (pure epsilon-DP), behind a
  compatibility shim for scikit-learn >= 1.8 (bookkeeping only; ``fit`` is diffprivlib's).

Each ``fit`` returns a :class:`Fitted`: the model, the fit's wall time, the epsilon its own
accountant proves (``None`` without privacy), and ``score(X, y)``.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Fitted:
    library: str
    model: object
    seconds: float
    epsilon: float | None = None
    extra: dict = field(default_factory=dict)
    predict: Callable | None = None  # for models without a scikit-learn ``score``
    metric: Callable | None = None  # (y_true, prediction) -> score, with ``predict``

    def score(self, X, y) -> float:
        if self.predict is None:
            return float(self.model.score(X, y))
        return float(self.metric(np.asarray(y), self.predict(X)))


def accuracy(y, pred) -> float:
    return float(np.mean(pred == y))


def r2(y, pred) -> float:
    from sklearn.metrics import r2_score

    return float(r2_score(y, pred)) if np.all(np.isfinite(pred)) else float("nan")


# --------------------------------------------------------------------------------------------
# skdp and scikit-learn
# --------------------------------------------------------------------------------------------
class Skdp:
    """``Skdp(DPLogisticRegression, hidden_layer_sizes=...)``: the estimator with its defaults
    plus ``fixed``; ``fit(X, y, privacy=..., random_state=..., **params)``."""

    library = "skdp"

    def __init__(self, estimator: type, **fixed) -> None:
        self.estimator, self.fixed = estimator, fixed

    def make(self, **params):
        return self.estimator(**{**self.fixed, **params})

    def fit(self, X, y, **params) -> Fitted:
        model = self.make(**params)
        start = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - start
        spent = getattr(model, "privacy_spent_", None)
        epsilon = float(spent[0]) if spent is not None and math.isfinite(spent[0]) else None
        return Fitted(self.library, model, seconds, epsilon)


class Sklearn:
    """``Sklearn(lambda: Ridge(alpha=1.0))``: a non-private reference, fitted as given."""

    library = "scikit-learn"

    def __init__(self, factory: Callable[[], object]) -> None:
        self.factory = factory

    def fit(self, X, y) -> Fitted:
        model = self.factory()
        start = time.perf_counter()
        model.fit(X, y)
        return Fitted(self.library, model, time.perf_counter() - start)


# --------------------------------------------------------------------------------------------
# Opacus
# --------------------------------------------------------------------------------------------
def loader_batch_size(n_samples: int, steps_per_epoch: int) -> int:
    """Loader batch size whose ``len(loader)`` equals ``steps_per_epoch``: Opacus' Poisson
    loader samples at ``1 / len(loader) = 1 / ceil(n / batch_size)``; skdp runs ``round(n /
    B)`` steps per epoch at ``q = B / n``, so ``ceil(n / steps)`` gives Opacus the same steps and
    (up to the rounding of B) the same sampling rate and expected batch size."""
    return math.ceil(n_samples / steps_per_epoch)


def glorot_mlp(sizes, generator):
    """ReLU MLP initialised like scikit-learn (and skdp): Glorot-uniform weights and biases."""
    import torch

    layers = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
        linear = torch.nn.Linear(fan_in, fan_out)
        bound = math.sqrt(6 / (fan_in + fan_out))
        with torch.no_grad():
            linear.weight.uniform_(-bound, bound, generator=generator)
            linear.bias.uniform_(-bound, bound, generator=generator)
        layers += [linear, torch.nn.ReLU()]
    return torch.nn.Sequential(*layers[:-1])


def _half_mse():
    import torch

    class HalfMSELoss(torch.nn.MSELoss):
        """Half the squared error, skdp's regression loss (a Module: Opacus' ghost mode)."""

        def forward(self, input, target):  # noqa: A002 - torch's signature
            return 0.5 * super().forward(input, target)

    return HalfMSELoss(reduction="mean")


class Opacus:
    """Opacus DP-SGD configured from a fitted skdp estimator ``like``."""

    library = "Opacus"

    def __init__(self) -> None:
        self.reason = ""
        try:
            import opacus  # noqa: F401
        except Exception as exc:  # noqa: BLE001 - any import failure means "skip"
            self.reason = f"opacus is not importable ({type(exc).__name__}: {exc})"

    @property
    def available(self) -> bool:
        return not self.reason

    def fit_linear(self, X, y, *, like, loss: str, l2: float, epsilon: float, delta: float,
                   seed: int) -> Fitted:
        """``nn.Linear(d, 1)`` from zero, ``loss`` 'logistic' (BCEWithLogitsLoss) or
        'half_squared' (``0.5 * MSELoss``, whose per-example gradient is skdp's ``residual *
        [x, 1]``); the L2 penalty ``(l2 / 2) ||w||^2`` on the weight only, as SGD's
        ``weight_decay`` (added after the noise, where skdp adds it). Time includes
        ``make_private_with_epsilon`` (the calibration)."""
        import torch
        from opacus import PrivacyEngine
        from torch.utils.data import DataLoader, TensorDataset

        start = time.perf_counter()
        torch.manual_seed(seed)  # Opacus' Poisson sampler and noise use the global torch RNG
        X_t = torch.as_tensor(np.asarray(X), dtype=torch.float32)
        y_t = torch.as_tensor(np.asarray(y), dtype=torch.float32)
        model = torch.nn.Linear(X.shape[1], 1)
        with torch.no_grad():
            model.weight.zero_()
            model.bias.zero_()
        optimizer = torch.optim.SGD([{"params": [model.weight], "weight_decay": l2},
                                     {"params": [model.bias], "weight_decay": 0.0}],
                                    lr=like.learning_rate_)  # the step the skdp fit used
        if loss == "logistic":
            criterion = torch.nn.BCEWithLogitsLoss(reduction="mean")
        else:
            criterion = _half_mse()
        steps = like.n_steps_ // like.n_iter_
        loader = DataLoader(TensorDataset(X_t, y_t),
                            batch_size=loader_batch_size(X.shape[0], steps))
        engine = PrivacyEngine(accountant="prv")
        t0 = time.perf_counter()
        model, optimizer, loader = engine.make_private_with_epsilon(
            module=model, optimizer=optimizer, data_loader=loader, target_epsilon=epsilon,
            target_delta=delta, epochs=like.n_iter_, max_grad_norm=like.max_grad_norm,
            poisson_sampling=True)
        make_private = time.perf_counter() - t0
        n_steps = 0
        model.train()
        for _ in range(like.n_iter_):
            for xb, yb in loader:
                optimizer.zero_grad(set_to_none=True)
                criterion(model(xb).squeeze(1), yb).backward()
                optimizer.step()
                n_steps += 1
        seconds = time.perf_counter() - start
        layer = model._module if hasattr(model, "_module") else model

        def predict(X_new):
            with torch.no_grad():
                out = layer(torch.as_tensor(np.asarray(X_new), dtype=torch.float32))
            out = out.squeeze(1).numpy().astype(np.float64)
            return (out > 0).astype(int) if loss == "logistic" else out

        return Fitted(self.library, model, seconds, float(engine.get_epsilon(delta)),
                      {"make_private_seconds": make_private,
                       "noise_multiplier": float(optimizer.noise_multiplier),
                       "sample_rate": float(loader.sample_rate), "n_steps": n_steps},
                      predict=predict, metric=accuracy if loss == "logistic" else r2)

    def fit_mlp(self, X, y, *, like, epsilon: float, delta: float, seed: int,
                device: str = "cpu", grad_sample_mode: str = "hooks") -> Fitted:
        """The ReLU MLP of the fitted skdp MLP ``like`` (same sizes, Glorot-uniform init),
        trained with its batch, steps, clipping bound, step (``learning_rate_``) and weight
        decay. ``seconds`` is the training loop alone (``make_private`` excluded);
        ``extra['epoch_s']`` per epoch. ``y``: class indices (classifier) or targets."""
        import torch
        from opacus import PrivacyEngine
        from torch.utils.data import DataLoader, TensorDataset

        n = X.shape[0]
        classes = getattr(like, "classes_", None)
        n_classes = 0 if classes is None else len(classes)
        epochs, steps_per_epoch = like.n_iter_, like.n_steps_ // like.n_iter_
        torch.manual_seed(seed)
        gen = torch.Generator().manual_seed(seed)
        n_out = 1 if n_classes <= 2 else n_classes
        model = glorot_mlp((X.shape[1], *like.hidden_layer_sizes, n_out), gen).to(device)
        X_t = torch.as_tensor(np.asarray(X), dtype=torch.float32)
        if n_out > 1:
            y_t = torch.as_tensor(np.asarray(y), dtype=torch.int64)
            criterion = torch.nn.CrossEntropyLoss(reduction="mean")
        else:
            y_t = torch.as_tensor(np.asarray(y), dtype=torch.float32).reshape(-1, 1)
            criterion = (_half_mse() if n_classes == 0
                         else torch.nn.BCEWithLogitsLoss(reduction="mean"))
        weights = [m.weight for m in model if isinstance(m, torch.nn.Linear)]
        biases = [m.bias for m in model if isinstance(m, torch.nn.Linear)]
        optimizer = torch.optim.SGD(
            [{"params": weights, "weight_decay": like.alpha / like.batch_size_},
             {"params": biases, "weight_decay": 0.0}],
            lr=like.learning_rate_)  # the step the fit used (learning_rate_init may be 'auto')
        loader = DataLoader(TensorDataset(X_t, y_t),
                            batch_size=loader_batch_size(n, steps_per_epoch))
        engine = PrivacyEngine(accountant="prv")
        kwargs = dict(module=model, optimizer=optimizer, data_loader=loader,
                      target_epsilon=epsilon, target_delta=delta, epochs=epochs,
                      max_grad_norm=like.max_grad_norm, poisson_sampling=True,
                      grad_sample_mode=grad_sample_mode)
        if grad_sample_mode == "ghost":
            model, optimizer, criterion, loader = engine.make_private_with_epsilon(
                criterion=criterion, **kwargs)
        else:
            model, optimizer, loader = engine.make_private_with_epsilon(**kwargs)
        model.train()
        start = time.perf_counter()
        for _ in range(epochs):
            for xb, yb in loader:
                xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
                optimizer.zero_grad(set_to_none=True)
                criterion(model(xb), yb).backward()
                optimizer.step()
        if device == "cuda":
            torch.cuda.synchronize()
        loop = time.perf_counter() - start
        module = model._module if hasattr(model, "_module") else model

        def predict(X_new):
            with torch.no_grad():
                out = module(torch.as_tensor(np.asarray(X_new), dtype=torch.float32,
                                             device=device)).cpu()
            if n_classes == 0:
                return out.squeeze(1).numpy()
            index = (out.squeeze(1) > 0).long().numpy() if n_out == 1 else out.argmax(1).numpy()
            return classes[index]

        return Fitted(self.library, model, loop, float(engine.get_epsilon(delta)),
                      {"epoch_s": loop / epochs}, predict=predict,
                      metric=r2 if n_classes == 0 else accuracy)

    def epoch_seconds_linear(self, X, y, *, n_outputs: int, noise_multiplier: float,
                             batch_size: int, repeats: int) -> float:
        """Seconds of one DP-SGD epoch of ``nn.Linear`` at skdp's batch size, clipping bound 1
        and ``noise_multiplier`` (minimum over ``repeats``, after a warm-up epoch)."""
        import torch
        from opacus import PrivacyEngine
        from torch.utils.data import DataLoader, TensorDataset

        from .timing import best_time

        n = X.shape[0]
        steps = max(1, round(n / batch_size))
        X_t = torch.as_tensor(np.asarray(X), dtype=torch.float32)
        if n_outputs == 1:
            y_t = torch.as_tensor(np.asarray(y), dtype=torch.float32)
            bce = torch.nn.BCEWithLogitsLoss()

            def loss_fn(out, target):
                return bce(out.squeeze(1), target)
        else:
            y_t = torch.as_tensor(np.asarray(y), dtype=torch.int64)
            loss_fn = torch.nn.CrossEntropyLoss()
        torch.manual_seed(0)
        model = torch.nn.Linear(X.shape[1], n_outputs)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        loader = DataLoader(TensorDataset(X_t, y_t), batch_size=loader_batch_size(n, steps))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model, optimizer, loader = PrivacyEngine(accountant="prv").make_private(
                module=model, optimizer=optimizer, data_loader=loader,
                noise_multiplier=noise_multiplier, max_grad_norm=1.0, poisson_sampling=True)

        def one_epoch():
            with warnings.catch_warnings():  # Opacus' hook warns at every step
                warnings.simplefilter("ignore")
                for xb, yb in loader:
                    optimizer.zero_grad(set_to_none=True)
                    loss_fn(model(xb), yb).backward()
                    optimizer.step()

        one_epoch()  # warm-up
        return best_time(one_epoch, repeats)


# --------------------------------------------------------------------------------------------
# diffprivlib
# --------------------------------------------------------------------------------------------
@dataclass
class DiffprivlibModels:
    """diffprivlib's linear models (the compatible LogisticRegression), and notes on the shim."""

    LogisticRegression: type
    LinearRegression: type
    notes: list[str]
    models: object = None  # diffprivlib.models


def import_diffprivlib() -> DiffprivlibModels | None:
    """diffprivlib's LogisticRegression and LinearRegression, or ``None`` (and why, printed).

    diffprivlib 0.6.6 predates scikit-learn 1.8: (1) its package ``__init__`` imports its tree
    models, which import ``DOUBLE`` and ``DTYPE`` from ``sklearn.tree._tree`` (removed); (2) its
    ``LogisticRegression.__init__`` passes ``multi_class='ovr'`` to scikit-learn's (removed).
    Both are bookkeeping, not the DP algorithm, so when (and only when) they fail this function
    (1) restores the two old constants (``np.float64`` and ``np.float32``; used only by the tree
    models, which are not benchmarked) and (2) subclasses diffprivlib's LogisticRegression with
    an ``__init__`` that sets the same attributes without ``multi_class``. ``fit`` (clipping to
    ``data_norm``, objective perturbation, L-BFGS) is diffprivlib's own, unchanged.
    """
    notes: list[str] = []
    try:
        import diffprivlib.models as dm
    except ImportError as exc:
        if "sklearn.tree._tree" not in str(exc):
            print(f"NOTE: diffprivlib is not importable ({exc}); its column is skipped.\n")
            return None
        import sklearn.tree._tree as sk_tree

        for name, value in (("DOUBLE", np.float64), ("DTYPE", np.float32)):
            if not hasattr(sk_tree, name):
                setattr(sk_tree, name, value)
        for mod in [m for m in sys.modules if m == "diffprivlib" or m.startswith("diffprivlib.")]:
            del sys.modules[mod]
        try:
            import diffprivlib.models as dm
        except Exception as exc2:  # noqa: BLE001
            print(f"NOTE: diffprivlib is not importable ({exc2}); its column is skipped.\n")
            return None
        notes.append(
            "diffprivlib 0.6.6 fails to import with this scikit-learn (sklearn.tree._tree no "
            "longer has DOUBLE/DTYPE); the benchmark restored those two constants (used only by "
            "diffprivlib's tree models, not benchmarked).")
    except Exception as exc:  # noqa: BLE001
        print(f"NOTE: diffprivlib is not importable ({exc}); its column is skipped.\n")
        return None

    logistic = dm.LogisticRegression
    try:
        logistic(epsilon=1.0, data_norm=1.0)
    except TypeError as exc:
        if "multi_class" not in str(exc):
            raise
        from diffprivlib.accountant import BudgetAccountant
        from sklearn import linear_model

        class CompatLogisticRegression(dm.LogisticRegression):
            """diffprivlib's LogisticRegression with an __init__ scikit-learn >= 1.8 accepts."""

            def __init__(self, *, epsilon=1.0, data_norm=None, tol=1e-4, C=1.0,
                         fit_intercept=True, max_iter=100, verbose=0, warm_start=False,
                         n_jobs=None, random_state=None, accountant=None):
                linear_model.LogisticRegression.__init__(
                    self, C=C, dual=False, tol=tol, fit_intercept=fit_intercept,
                    intercept_scaling=1.0, class_weight=None, random_state=random_state,
                    solver="lbfgs", max_iter=max_iter, verbose=verbose, warm_start=warm_start,
                    n_jobs=n_jobs)
                self.epsilon = epsilon
                self.data_norm = data_norm
                self.classes_ = None
                self.accountant = BudgetAccountant.load_default(accountant)

        logistic = CompatLogisticRegression
        notes.append(
            "diffprivlib 0.6.6's LogisticRegression.__init__ passes multi_class='ovr', which "
            "this scikit-learn rejects; the benchmark uses a subclass whose __init__ sets the "
            "same attributes without it (fit is diffprivlib's, unchanged).")
    return DiffprivlibModels(logistic, dm.LinearRegression, notes, dm)


class Diffprivlib:
    """diffprivlib's linear models at ``epsilon`` (pure epsilon-DP: delta = 0)."""

    library = "diffprivlib"

    def __init__(self) -> None:
        self.lib = import_diffprivlib()
        self.reason = "" if self.lib is not None else "diffprivlib is not importable"

    @property
    def available(self) -> bool:
        return self.lib is not None

    @property
    def notes(self) -> list[str]:
        return self.lib.notes if self.lib is not None else []

    def logistic(self, epsilon: float, data_norm: float, seed: int, **kwargs):
        return self.lib.LogisticRegression(epsilon=epsilon, data_norm=data_norm,
                                           random_state=seed, **kwargs)

    def linear(self, epsilon: float, bounds_X, bounds_y, seed: int, **kwargs):
        return self.lib.LinearRegression(epsilon=epsilon, bounds_X=bounds_X,
                                         bounds_y=bounds_y, random_state=seed, **kwargs)

    def fit(self, model, X, y) -> Fitted:
        start = time.perf_counter()
        model.fit(X, y)
        return Fitted(self.library, model, time.perf_counter() - start, model.epsilon)
