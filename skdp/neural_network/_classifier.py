"""DPMLPClassifier: a multilayer perceptron classifier trained with differential privacy."""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin, _fit_context

from .._defaults.mlp import MLP_CLASSIFIER
from .._fit import docstrings as _doc
from .._fit.classes import LogitClassifierMixin, class_facts, encode_classes, output_loss
from ._base import BaseDPMLP

__all__ = ["DPMLPClassifier"]


class DPMLPClassifier(LogitClassifierMixin, ClassifierMixin, BaseDPMLP):
    __doc__ = _doc.assemble(
        """Multilayer perceptron classifier trained with differential privacy.

        The network is scikit-learn's ``MLPClassifier`` (dense layers, the same initialisation,
        log-loss with one logistic output for two classes and a softmax otherwise), trained by
        DP-SGD: each example's gradient is clipped to ``max_grad_norm``, Gaussian noise
        calibrated to ``privacy`` is added to the sum over a Poisson-sampled batch, and the
        noisy mean takes a step. Per-example gradient norms come from one forward and one
        backward pass without materialising per-example gradients ("ghost clipping"), so a
        private epoch costs little more than a non-private one.

        Features should be on a public, roughly unit scale (see
        :func:`skdp.datasets.adult_preprocessor`): scaling statistics learned from the private
        data would leak outside the accounting.
        """,
        parameters=[
            _doc.PRIVACY,
            _doc.HIDDEN_LAYER_SIZES,
            _doc.ACTIVATION,
            _doc.optimizer(),
            _doc.optimizer_params(),
            _doc.MAX_GRAD_NORM,
            _doc.MLP_ALPHA,
            _doc.batch_size(parameter_floor=False),
            _doc.learning_rate("learning_rate_init"),
            _doc.entry("learning_rate_init : float or 'auto', default='auto'", """
                Step size. ``'auto'``: for a private fit, a measured step much larger than
                scikit-learn's Adam default, because this is plain SGD on the clipped, noisy mean
                gradient of a large batch, damped by the calibrated noise per coordinate of a
                mean gradient (public), which small data and small epsilon need; without privacy
                (``privacy=(inf, 0)``), where nothing is clipped, a smaller step: the private one
                stayed at chance level on digits and Fashion-MNIST. The steps and the damping:
                :doc:`the defaults page </user_guide/defaults>`. ``learning_rate_`` says which
                step was used.
            """),
            _doc.POWER_T,
            _doc.NOISE_SCHEDULE,
            _doc.NOISE_DECAY,
            _doc.MLP_MAX_ITER,
            _doc.AVERAGE,
            _doc.accountant(last_iterate=False),
            """
            classes : array-like of shape (n_classes,), default=None
                The public list of class labels. By default it is read from ``y`` as
                scikit-learn does, which treats the set of labels present in the data as public.
            """,
            _doc.BUDGET,
            _doc.DEVICE,
            _doc.random_state(initial_weights=True),
            _doc.VERBOSE,
        ],
        attributes=[
            """
            classes_ : ndarray of shape (n_classes,)
                Class labels.
            """,
            """
            coefs_ : list of ndarray
                ``coefs_[i]`` is the weight matrix of layer ``i``, of shape (fan_in, fan_out).
            """,
            """
            intercepts_ : list of ndarray
                ``intercepts_[i]`` is the bias vector of layer ``i + 1``.
            """,
            """
            n_layers_ : int
                Number of layers, input and output included.
            """,
            """
            n_outputs_ : int
                Number of outputs (1 for two classes).
            """,
            """
            out_activation_ : str
                ``'logistic'`` for two classes, ``'softmax'`` otherwise.
            """,
            _doc.PRIVACY_SPENT_,
            _doc.dp_event_(last_iterate=False),
            _doc.NOISE_MULTIPLIER_,
            _doc.BATCH_SIZE_,
            _doc.learning_rate_("learning_rate_init"),
            _doc.N_ITER_,
            _doc.N_STEPS_,
            _doc.DEVICE_,
            _doc.N_FEATURES_IN_,
            _doc.FEATURE_NAMES_IN_,
        ],
        sections="""
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
        """,
    )

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
