"""DPMLPClassifier: a multilayer perceptron classifier trained with differential privacy."""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin, _fit_context

from .._defaults.mlp import MLP_CLASSIFIER
from .._fit.classes import LogitClassifierMixin, class_facts, encode_classes, output_loss
from ._base import BaseDPMLP

__all__ = ["DPMLPClassifier"]


class DPMLPClassifier(LogitClassifierMixin, ClassifierMixin, BaseDPMLP):
    """Multilayer perceptron classifier trained with differential privacy.

    The network is scikit-learn's ``MLPClassifier`` (dense layers, the same initialisation,
    log-loss with one logistic output for two classes and a softmax otherwise), trained by
    DP-SGD: each example's gradient is clipped to ``max_grad_norm``, Gaussian noise calibrated
    to ``privacy`` is added to the sum over a Poisson-sampled batch, and the noisy mean takes a
    step. Per-example gradient norms come from one forward and one backward pass without
    materialising per-example gradients ("ghost clipping"), so a private epoch costs little
    more than a non-private one.

    Features should be on a public, roughly unit scale (see
    :func:`skdp.datasets.adult_preprocessor`): scaling statistics learned from the private data
    would leak outside the accounting.

    Parameters
    ----------
    privacy : tuple of (float, float), default=(1.0, 1e-5)
        The target ``(epsilon, delta)``. The noise is calibrated so that the whole training run
        is (epsilon, delta)-DP under add/remove-one-row neighbouring. ``(float('inf'), 0)``
        trains without clipping or noise (a non-private reference).
    hidden_layer_sizes : int or tuple of int, default=(100,)
        Width of each hidden layer, as in scikit-learn.
    activation : {'relu', 'tanh', 'logistic', 'identity'}, default='relu'
        Hidden activation.
    optimizer : {'noisy_sgd', 'adp_sgd', 'adaclip', 'diff2'}, default='noisy_sgd'
        The DP optimizer (it plays the role of scikit-learn's ``solver``).
        ``'noisy_sgd'``: DP-SGD. ``'adp_sgd'``: ADP-SGD (Wu et al.), whose
        per-step noise multiplier is proportional to ``1 / sqrt(step size)``, calibrated with
        the real accountant over the resulting non-uniform noise; with a constant step size it
        is exactly ``'noisy_sgd'``. ``'adaclip'``: coordinate-wise adaptive clipping
        (Pichapati et al.; not Opacus' quantile-based ``AdaClipDPOptimizer``), which clips
        ``(g - a) / b`` with a centre and scale learned from the released noisy gradients.
        ``'diff2'``: DIFF2-GD (Murata & Suzuki), full-batch gradient descent that sends
        clipped gradient differences between restarts; ``max_iter`` counts its rounds.
    optimizer_params : dict, default=None
        Hyperparameters of the chosen optimizer. ``'adaclip'``: ``gamma`` (0.25), ``beta1``
        (0.99), ``beta2`` (0.9), ``variance_floor`` (1e-6), ``variance_cap`` (1.0).
        ``'diff2'``: ``restart_period`` (10), ``budget_split`` (0.8), ``diff_clip`` (1.0),
        ``n_clients`` (1); see ``docs/user_guide/optimizers.md``. The other optimizers take
        none.
    max_grad_norm : float, default=1.0
        Per-example gradient clipping bound (the L2 sensitivity of each noisy sum).
    alpha : float, default=1e-4
        L2 penalty on the weights. As in scikit-learn's stochastic solvers, each step adds
        ``alpha * W / batch_size`` to the mean gradient.
    batch_size : int or 'auto', default='auto'
        Expected batch size of Poisson sampling. ``'auto'`` uses ``n / 32`` clipped to
        [64, 4096]: DP favours larger batches than scikit-learn's 200.
    learning_rate : {'auto', 'constant', 'invscaling', 'adagrad_norm'}, default='auto'
        Step-size schedule. ``'auto'``: ``'invscaling'`` with ``optimizer='adp_sgd'`` (ADP-SGD as
        its paper defines it: decaying steps, noise shaped to them), ``'constant'`` otherwise.
        ``'constant'``: ``learning_rate_init`` at every step.
        ``'invscaling'``: ``learning_rate_init / (1 + epoch) ** power_t``, with
        ``epoch = step / steps_per_epoch`` (scikit-learn's inverse scaling, counted in
        epochs). ``'adagrad_norm'``: ``learning_rate_init / b_t`` with ``b_t^2`` accumulating
        the squared norms of the *released noisy* gradients (minus their expected noise
        energy), so it is post-processing and costs no privacy.
    learning_rate_init : float or 'auto', default='auto'
        Step size. ``'auto'``: for a private fit ``2.0 / (1 + 120 z / b)``, much larger than
        scikit-learn's Adam default because this is plain SGD on the clipped, noisy mean
        gradient of a large batch (2.0 measured best on Adult and Fashion-MNIST), damped by the
        calibrated noise per coordinate of a mean gradient (noise multiplier ``z``, batch size
        ``b``; public), which small data and small epsilon need (wine +23 points, digits +24,
        Fashion-MNIST +6.7 at epsilon 0.1-1: ``benchmarks/tune_user_scale_damping.py --model
        mlp``, docs/benchmarks.md); 0.5 without privacy (``privacy=(inf, 0)``), where nothing
        is clipped and 2.0 stayed at chance level on digits and Fashion-MNIST.
    power_t : float, default=0.5
        Exponent of ``'invscaling'``.
    noise_schedule : {'constant', 'exp_decay', 'step_decay', 'time_decay', 'poly_decay'}, \
default='constant'
        Public shape of the noise over the run, for any optimizer: the noise of the last step
        is ``noise_decay`` times that of the first (``'exp_decay'``: geometric;
        ``'step_decay'``: constant within an epoch, geometric across epochs; ``'time_decay'``:
        ``1 / (1 + k u)``; ``'poly_decay'``: cubic, with ``u`` the progress from 0 to 1). Only
        the shape is chosen: the accountant scales it so that the run spends exactly
        ``privacy``, composing the actual per-step noise levels (the shape is quantised to at
        most 16 levels, which are what is run).
    noise_decay : float in (0, 1], default=0.5
        Noise at the last step relative to the first, for a decaying ``noise_schedule``.
    max_iter : int or 'auto', default='auto'
        Number of epochs (each made of ``round(n / batch_size)`` steps). ``'auto'``: 20 with
        privacy (measured), 100 without (``privacy=(inf, 0)``, where nothing but iterations
        limits the fit). There is no early stopping: deciding when to stop from the private
        loss would leak outside the accounting.
    average : bool or float in (0, 1], default=True
        Return the average of the last iterates instead of the last one: ``True`` averages
        the last tenth of the steps, a float sets that fraction, ``False`` returns the last
        iterate. Averaging is post-processing: it costs no privacy and cancels noise.
    accountant : {'pld', 'rdp'}, default='pld'
        The accountant used to calibrate the noise and report the guarantee.
    classes : array-like of shape (n_classes,), default=None
        The public list of class labels. By default it is read from ``y`` as scikit-learn
        does, which treats the set of labels present in the data as public.
    budget : skdp.PrivacyBudget, default=None
        A privacy ledger to charge: the fit's spend is recorded there before the data is
        touched, and a fit that would exceed the budget raises
        :class:`skdp.BudgetExceededError` without training or recording anything. ``None``
        charges the budget of an enclosing ``with budget:`` block, if any. Clones (e.g. in
        ``GridSearchCV``) and worker processes charge the same ledger.
    device : {'auto', 'cpu', 'cuda'} or torch.device, default='auto'
        Where to train. ``'auto'`` uses CUDA when available.
    random_state : int, RandomState instance or None, default=None
        Seeds the initial weights, batch sampling and noise. ``None`` draws the seed from OS
        entropy.
    verbose : int, default=0
        Print progress once per epoch (computed only from released noisy values).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    coefs_ : list of ndarray
        ``coefs_[i]`` is the weight matrix of layer ``i``, of shape (fan_in, fan_out).
    intercepts_ : list of ndarray
        ``intercepts_[i]`` is the bias vector of layer ``i + 1``.
    n_layers_ : int
        Number of layers, input and output included.
    n_outputs_ : int
        Number of outputs (1 for two classes).
    out_activation_ : str
        ``'logistic'`` for two classes, ``'softmax'`` otherwise.
    privacy_spent_ : tuple of (float, float)
        The ``(epsilon, delta)`` proven for this fit by the accountant; never above ``privacy``.
    dp_event_ : dp_accounting.DpEvent
        A description of the whole run, which any ``dp_accounting`` accountant can re-account.
    noise_multiplier_ : float
        Standard deviation of the noise on each clipped sum divided by ``max_grad_norm``
        (0 for a non-private fit).
    batch_size_ : int
        The expected batch size used.
    learning_rate_ : float
        The (initial) step size used: ``learning_rate_init``, or the one ``'auto'`` chose.
    n_iter_ : int
        Number of epochs run.
    n_steps_ : int
        Number of noisy gradient steps.
    device_ : str
        The device the model was trained on.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    sklearn.neural_network.MLPClassifier : The non-private estimator it mirrors.
    DPMLPRegressor : The regression counterpart.
    skdp.linear_model.DPLogisticRegression : A linear DP classifier.

    Notes
    -----
    scikit-learn's ``loss_``, ``loss_curve_``, ``best_loss_`` and ``validation_scores_`` are
    deliberately absent: they are computed from the private data without noise. So are
    ``partial_fit``, ``warm_start`` and early stopping, each of which would spend privacy
    outside one accounted run.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from skdp.neural_network import DPMLPClassifier
    >>> X, y = make_classification(n_samples=5000, random_state=0)
    >>> clf = DPMLPClassifier(privacy=(1.0, 1e-6), hidden_layer_sizes=(32,), random_state=0)
    >>> clf = clf.fit(X, y)
    >>> clf.privacy_spent_[0] <= 1.0
    True
    >>> bool(clf.score(X, y) > 0.8)
    True
    """

    _parameter_constraints: dict = {
        **BaseDPMLP._parameter_constraints,
        "classes": ["array-like", None],
    }

    _STEPS = MLP_CLASSIFIER  # learning_rate_init='auto' (skdp._defaults.mlp)

    def __init__(
        self,
        privacy=(1.0, 1e-5),
        *,
        hidden_layer_sizes=(100,),
        activation="relu",
        optimizer="noisy_sgd",
        optimizer_params=None,
        max_grad_norm=1.0,
        alpha=1e-4,
        batch_size="auto",
        learning_rate="auto",
        learning_rate_init="auto",
        power_t=0.5,
        noise_schedule="constant",
        noise_decay=0.5,
        max_iter="auto",
        average=True,
        accountant="pld",
        classes=None,
        budget=None,
        device="auto",
        random_state=None,
        verbose=0,
    ):
        self.privacy = privacy
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.optimizer = optimizer
        self.optimizer_params = optimizer_params
        self.max_grad_norm = max_grad_norm
        self.alpha = alpha
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.learning_rate_init = learning_rate_init
        self.power_t = power_t
        self.noise_schedule = noise_schedule
        self.noise_decay = noise_decay
        self.max_iter = max_iter
        self.average = average
        self.accountant = accountant
        self.classes = classes
        self.budget = budget
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    def _public_facts(self) -> list[str]:
        return class_facts(self.classes_, given=self.classes is not None)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the network with differential privacy.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, on a public, roughly unit scale. Sparse matrices (CSR or CSC;
            other formats are converted to CSR) are used without a dense copy.
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : DPMLPClassifier
            The fitted estimator.
        """
        X, y = self._validate_classification_data(X, y)
        self.classes_, targets = encode_classes(y, self.classes, type(self).__name__)
        return self._fit_mlp(X, targets, *output_loss(self.classes_))

    def _logits(self, X) -> np.ndarray:
        logits = self._forward(X)
        return logits.ravel() if logits.shape[1] == 1 else logits
