"""The numpydoc text the DP estimators share, written once.

DPLogisticRegression, DPRidge, DPMLPClassifier and DPMLPRegressor document the parameters and
attributes they have in common with the fragments here and assemble their class docstrings with
:func:`assemble`, so that a new optimizer, schedule or attribute is documented in one place.
Each fragment is one numpydoc entry, ``name : type`` over its description; a fragment that
differs between estimators by a word or a sentence is a function of that word or sentence, and
:func:`extend` adds an estimator's own sentence to a shared entry. Parameters and attributes of
one estimator (``C``, ``alpha``, ``classes``, ``hidden_layer_sizes``, ...) stay in its class.

An ``'auto'`` setting says in words what its rule does and why, and links to the defaults page
(generated from :mod:`skdp._defaults`, the one place where the formulas and constants are
stated) instead of restating them.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from collections.abc import Iterable

__all__ = [
    "AVERAGE",
    "BATCH_SIZE_",
    "BUDGET",
    "DEVICE",
    "DEVICE_",
    "FEATURE_NAMES_IN_",
    "GIVEN_ROW_BOUND",
    "MAX_GRAD_NORM",
    "MLP_MAX_ITER",
    "NOISE_DECAY",
    "NOISE_MULTIPLIER_",
    "NOISE_SCHEDULE",
    "N_FEATURES_IN_",
    "N_ITER_",
    "N_STEPS_",
    "POWER_T",
    "PRIVACY",
    "PRIVACY_SPENT_",
    "ROW_NORM_BOUND_",
    "SGD_OPTIMIZERS",
    "VERBOSE",
    "accountant",
    "assemble",
    "batch_size",
    "dp_event_",
    "entry",
    "eta0",
    "extend",
    "learning_rate",
    "learning_rate_",
    "linear_max_iter",
    "optimizer",
    "optimizer_params",
    "random_state",
]

_INDENT = "    "
#: Width of a description's lines (indented by 8 in the class docstring).
_WIDTH = 88
#: A line that reST would read as the start of a list, a block quote's attribution, a line
#: block, a directive or a doctest: never the start of a reflowed description line.
_MARKUP_START = re.compile(r"^([-*+]|\d+[.)]|\(\d+\)|#\.|--|\||\.\.|>>>)(\s|$)")


def _paragraph(texts: Iterable[str]) -> str:
    """The ``texts``, each dedented, run together and wrapped as one paragraph."""
    words = " ".join(text for text in texts if text and text.strip()).split()
    lines = textwrap.wrap(
        " ".join(words), _WIDTH, break_long_words=False, break_on_hyphens=False
    )
    for line in lines:
        if _MARKUP_START.match(line):
            raise ValueError(f"a docstring line would start with reST markup: {line!r}")
    return "\n".join(lines)


def entry(head: str, *texts: str) -> str:
    """One numpydoc entry: ``head`` (``name : type``) over its description, the ``texts`` run
    together as one paragraph."""
    return head + "\n" + textwrap.indent(_paragraph(texts), _INDENT)


def extend(fragment: str, *texts: str) -> str:
    """A shared entry with an estimator's own sentences added at the end of its description."""
    head, _, description = fragment.partition("\n")
    return entry(head, description, *texts)


def _dedent(text: str) -> str:
    return textwrap.dedent(text).strip()


def assemble(intro: str, *, parameters: Iterable[str], attributes: Iterable[str],
             sections: str) -> str:
    """A class docstring: the summary line and introduction, the Parameters and Attributes
    sections made of their entries (shared fragments, or an estimator's own entries written
    out in its class), then the remaining sections (See Also, Notes, Examples). Each piece is
    dedented; the result is indented as a docstring written in a class body is."""
    lines = [
        inspect.cleandoc(intro), "", "Parameters", "----------", *map(_dedent, parameters),
        "", "Attributes", "----------", *map(_dedent, attributes), "", _dedent(sections),
    ]
    first, _, rest = "\n".join(lines).partition("\n")
    return first + "\n" + textwrap.indent(rest, _INDENT) + "\n" + _INDENT


# --- Parameters every estimator shares -----------------------------------------------------------

PRIVACY = entry("privacy : tuple of (float, float), default=(1.0, 1e-5)", """
    The target ``(epsilon, delta)``. The noise is calibrated so that the whole fit (a private
    search for a public scale included, where there is one) is (epsilon, delta)-DP under
    add/remove-one-row neighbouring. ``(float('inf'), 0)`` trains without clipping or noise (a
    non-private reference).
""")

#: The DP-SGD optimizers every estimator offers, each described once (closed-form mechanisms are
#: added by the estimator that offers them: DPRidge's ``'ssp'``).
SGD_OPTIMIZERS = {
    "noisy_sgd": "DP-SGD.",
    "adp_sgd": """
        ADP-SGD (Wu et al.), whose per-step noise multiplier is proportional to
        ``1 / sqrt(step size)``, calibrated with the real accountant over the resulting
        non-uniform noise; with a constant step size it is exactly ``'noisy_sgd'``.
    """,
    "adaclip": """
        coordinate-wise adaptive clipping (Pichapati et al.; not Opacus' quantile-based
        ``AdaClipDPOptimizer``), which clips ``(g - a) / b`` with a centre and scale learned
        from the released noisy gradients.
    """,
    "diff2": """
        DIFF2-GD (Murata & Suzuki), full-batch gradient descent that sends clipped gradient
        differences between restarts; ``max_iter`` counts its rounds.
    """,
}


def optimizer(closed_form: dict[str, str] | None = None) -> str:
    """``optimizer``: the DP-SGD optimizers of :data:`SGD_OPTIMIZERS`, then the estimator's
    own ``closed_form`` mechanisms (name: description)."""
    described = {**SGD_OPTIMIZERS, **(closed_form or {})}
    choices = ", ".join(repr(name) for name in described)
    return entry(
        f"optimizer : {{{choices}}}, default='noisy_sgd'",
        "The DP optimizer (it plays the role of scikit-learn's ``solver``).",
        *(f"``{name!r}``: {text}" for name, text in described.items()),
        """
        A name registered with ``skdp.mechanisms.register_optimizer`` is accepted too. Which
        one to use: :doc:`the optimizers guide </user_guide/optimizers>`.
        """,
    )


def optimizer_params(closed_form: str = "") -> str:
    """``optimizer_params``, with the estimator's ``closed_form`` mechanisms' own keys."""
    return entry(
        "optimizer_params : dict, default=None",
        """
        Hyperparameters of the chosen optimizer; ``None`` (or a key left out): its defaults.
        ``'adaclip'``: ``gamma``, ``beta1``, ``beta2``, ``variance_floor``, ``variance_cap``.
        ``'diff2'``: ``restart_period``, ``budget_split``, ``diff_clip``, ``n_clients``.
        """,
        closed_form,
        """
        The other optimizers take none. What each key does: :doc:`the optimizers guide
        </user_guide/optimizers>`; the defaults and how they were chosen: :doc:`the defaults
        page </user_guide/defaults>`.
        """,
    )


MAX_GRAD_NORM = entry("max_grad_norm : float, default=1.0", """
    Per-example gradient clipping bound (the L2 sensitivity of each noisy sum).
""")


def learning_rate(step: str) -> str:
    """``learning_rate``; ``step`` names the estimator's step-size parameter."""
    return entry(
        "learning_rate : {'auto', 'constant', 'invscaling', 'adagrad_norm'}, default='auto'",
        """
        Step-size schedule. ``'auto'``: the optimizer's own schedule, decaying steps
        (``'invscaling'``) for ``optimizer='adp_sgd'``, whose noise is shaped to its step sizes
        (ADP-SGD as its paper defines it), ``'constant'`` for the others (:doc:`the defaults
        page </user_guide/defaults>`).
        """,
        f"""
        ``'constant'``: ``{step}`` at every step. ``'invscaling'``:
        ``{step} / (1 + epoch) ** power_t``, with ``epoch = step / steps_per_epoch``
        (scikit-learn's inverse scaling, counted in epochs). ``'adagrad_norm'``: ``{step} / b_t``
        with ``b_t^2`` accumulating the squared norms of the *released noisy* gradients (minus
        their expected noise energy), so it is post-processing and costs no privacy.
        """,
    )


POWER_T = entry("power_t : float, default=0.5", "Exponent of ``'invscaling'``.")

NOISE_SCHEDULE = entry(
    "noise_schedule : {'constant', 'exp_decay', 'step_decay', 'time_decay', 'poly_decay'}, "
    "default='constant'", """
    Public shape of the noise over the run, for any optimizer: the noise of the last step is
    ``noise_decay`` times that of the first (``'exp_decay'``: geometric; ``'step_decay'``:
    constant within an epoch, geometric across epochs; ``'time_decay'``: ``1 / (1 + k u)``;
    ``'poly_decay'``: cubic, with ``u`` the progress from 0 to 1). Only the shape is chosen:
    the accountant scales it so that the run spends exactly ``privacy``, composing the actual
    per-step noise levels (the shape is quantised to at most 16 levels, which are what is run).
""")

NOISE_DECAY = entry("noise_decay : float in (0, 1], default=0.5", """
    Noise at the last step relative to the first, for a decaying ``noise_schedule``.
""")


def batch_size(parameter_floor: bool) -> str:
    """``batch_size``; ``parameter_floor``: the estimator's ``'auto'`` batch grows with the
    number of parameters (the linear models)."""
    floor = """
        The smallest batch grows with the square root of the number of parameters: many
        parameters on small data need larger batches against the noise.
    """
    return entry(
        "batch_size : int or 'auto', default='auto'",
        """
        Expected batch size of Poisson sampling; values of at least ``n`` mean full-batch
        gradient descent. ``'auto'``: a fixed fraction of the rows within fixed limits, and never
        more than ``n``: DP favours larger batches than scikit-learn's 200, since the noise on a
        mean gradient falls as ``1 / batch_size``.
        """,
        floor if parameter_floor else "",
        """
        Full-batch optimizers (``'diff2'``) use every row. The fraction and limits: :doc:`the
        defaults page </user_guide/defaults>`.
        """,
    )


def _max_iter(*auto: str) -> str:
    return entry(
        "max_iter : int or 'auto', default='auto'",
        """
        Number of epochs (each made of ``round(n / batch_size)`` steps; full-batch ``'diff2'``
        makes one step, a round, per epoch). More epochs need more noise for the same privacy.
        There is no early stopping: deciding when to stop from the private loss would leak
        outside the accounting.
        """,
        *auto,
        "The numbers: :doc:`the defaults page </user_guide/defaults>`.",
    )


def linear_max_iter(user_scale: str = "") -> str:
    """The linear models' ``max_iter``; ``user_scale``: the estimator's own rule for mini-batch
    runs on the user's row scale, before the rule for the other runs ("otherwise ...")."""
    return _max_iter("``'auto'``:", user_scale, """
        enough epochs for a minimum number of steps, and at least a minimum number of epochs:
        small data sets need many epochs to converge, and each of their epochs is cheap.
        Without privacy, mini-batch runs make more steps: nothing but iterations limits the fit.
    """)


MLP_MAX_ITER = _max_iter("""
    ``'auto'``: a measured number of epochs with privacy, more without (``privacy=(inf, 0)``),
    where nothing but iterations limits the fit.
""")

FIT_INTERCEPT = entry("fit_intercept : bool, default=True",
                      "Whether to fit an (unpenalised) intercept.")

PROJECTION_RADIUS = entry("projection_radius : float, default=None", """
    Radius of the L2 ball, centred at 0, onto which all parameters (coefficients and intercept
    together) are projected after every step; ``None``: no projection. Required by
    ``accountant='last_iterate'``, whose bound grows with the diameter ``2 *
    projection_radius``: a smaller ball gives a shorter burn-in and less noise but may exclude
    the best model. Choose it without looking at the private data. With the other accountants
    it is optional (projection is post-processing).
""")

HIDDEN_LAYER_SIZES = entry("hidden_layer_sizes : int or tuple of int, default=(100,)",
                           "Width of each hidden layer, as in scikit-learn.")

ACTIVATION = entry("activation : {'relu', 'tanh', 'logistic', 'identity'}, default='relu'",
                   "Hidden activation.")

MLP_ALPHA = entry("alpha : float, default=1e-4", """
    L2 penalty on the weights. As in scikit-learn's stochastic solvers, each step adds ``alpha *
    W / batch_size`` to the mean gradient.
""")

AVERAGE = entry("average : bool or float in (0, 1], default=True", """
    Return the average of the last iterates instead of the last one: ``True`` averages a
    measured fraction of the last steps, long enough to cancel much of the noise, short enough
    not to lag behind the iterate (:doc:`the defaults page </user_guide/defaults>`); a float
    sets that fraction; ``False`` returns the last iterate. Averaging is post-processing: it
    costs no privacy and cancels noise.
""")

_LAST_ITERATE = """
    ``'last_iterate'`` accounts only the released last iterate, with the bound of Altschuler &
    Talwar (2022) for projected noisy SGD on convex losses (reported as the minimum of it and
    the standard bound, under replace-one-row neighbouring): past a burn-in, more epochs cost no
    more privacy. It also changes the training: batches of exactly ``batch_size`` distinct rows
    drawn at random at every step, projection onto the ball of radius ``projection_radius``
    after every step, and no averaging. It requires ``optimizer='noisy_sgd'``,
    ``projection_radius``, ``max_row_norm``, ``average=False``, ``verbose=0``,
    ``learning_rate='constant'``, constant noise and ``eta0 <= 2 / M`` (see Notes), and is
    refused otherwise, before anything is charged or trained.
"""


def accountant(last_iterate: bool) -> str:
    """``accountant``; ``last_iterate``: the estimator offers the last-iterate bound (the
    linear models, whose losses are convex)."""
    choices = "'pld', 'rdp', 'last_iterate'" if last_iterate else "'pld', 'rdp'"
    return entry(
        f"accountant : {{{choices}}}, default='pld'",
        """
        The accountant used to calibrate the noise and report the guarantee. ``'pld'`` and
        ``'rdp'`` account the whole training trajectory (add/remove-one-row neighbouring,
        Poisson sampling).
        """,
        _LAST_ITERATE if last_iterate else "",
    )


BUDGET = entry("budget : skdp.PrivacyBudget, default=None", """
    A privacy ledger to charge: the fit's spend is recorded there before the data is touched,
    and a fit that would exceed the budget raises :class:`skdp.BudgetExceededError` without
    training or recording anything. ``None`` charges the budget of an enclosing
    ``with budget:`` block, if any. Clones (e.g. in ``GridSearchCV``) and worker processes
    charge the same ledger.
""")

DEVICE = entry("device : {'auto', 'cpu', 'cuda'} or torch.device, default='auto'", """
    Where to train. ``'auto'`` uses CUDA when available.
""")


def random_state(initial_weights: bool) -> str:
    """``random_state``; ``initial_weights``: the estimator draws its initial weights (MLPs)."""
    seeded = "the initial weights, batch sampling and noise" if initial_weights else (
        "batch sampling and noise")
    return entry(
        "random_state : int, RandomState instance or None, default=None",
        f"Seeds {seeded}. ``None`` draws the seed from OS entropy.",
    )


VERBOSE = entry("verbose : int, default=0", """
    Print progress once per epoch (computed only from released noisy values).
""")


# --- Parameters of the linear models -------------------------------------------------------------

def eta0(user_scale: str = "") -> str:
    """The linear models' ``eta0``; ``user_scale``: the estimator's own step for mini-batch runs
    on the user's row scale, before the rule for the other runs ("otherwise ...")."""
    return entry(
        "eta0 : float or 'auto', default='auto'",
        "Step size. ``'auto'``:",
        user_scale,
        """
        a public function of the loss's curvature on the rows' public scale and of the
        calibrated noise: the step that the loss's smoothness allows, smaller when the noise on
        each mean gradient is large (rows without a bound are taken to have norm about 2).
        With ``accountant='last_iterate'``, ``1 / M``: half the largest step that bound allows,
        so that every per-example step is a contraction (see Notes). The formulas and their
        constants: :doc:`the defaults page </user_guide/defaults>`. ``learning_rate_`` says
        which step was used.
        """,
    )


#: The linear models' ``max_row_norm`` as a float (after the estimator's own ``'auto'``).
GIVEN_ROW_BOUND = """
    A float: a public bound on the L2 norm of the rows of ``X``: during ``fit``, rows with a
    larger norm are scaled down to it (a per-row transformation, free under DP; predictions use
    rows as given). Required by ``accountant='last_iterate'``, whose step-size limit depends on
    the smoothness of the loss, which must hold for every possible row and so cannot come from
    the data (see Notes). Take it from the public ranges of the features. Optional with the
    other accountants.
"""


# --- Attributes every estimator shares -----------------------------------------------------------

PRIVACY_SPENT_ = entry("privacy_spent_ : tuple of (float, float)", """
    The ``(epsilon, delta)`` proven for this fit by the accountant; never above ``privacy``.
""")


def dp_event_(last_iterate: bool) -> str:
    """``dp_event_``; ``last_iterate``: the estimator offers the last-iterate accountant."""
    if not last_iterate:
        return entry("dp_event_ : dp_accounting.DpEvent", """
            What the fit spent, as charged to a ``budget``: a DpEvent of the whole run, which
            any ``dp_accounting`` accountant can re-account.
        """)
    return entry("dp_event_ : dp_accounting.DpEvent or skdp.budget.RdpCurve", """
        What the fit spent, as charged to a ``budget``: with ``accountant='pld'`` or ``'rdp'``
        a DpEvent of the whole run, which any ``dp_accounting`` accountant can re-account; with
        ``accountant='last_iterate'`` the RDP curve of the released last iterate (orders and
        RDP values, replace-one relation), which converts to at most ``privacy_spent_``.
    """)


NOISE_MULTIPLIER_ = entry("noise_multiplier_ : float", """
    Standard deviation of the noise on each clipped sum divided by ``max_grad_norm`` (0 for a
    non-private fit).
""")

BATCH_SIZE_ = entry("batch_size_ : int", "The expected batch size used.")


def learning_rate_(step: str) -> str:
    """``learning_rate_``; ``step`` names the estimator's step-size parameter."""
    return entry(
        "learning_rate_ : float",
        f"The (initial) step size used: ``{step}``, or the one ``{step}='auto'`` chose.",
    )


ROW_NORM_BOUND_ = entry("row_norm_bound_ : float", """
    With ``max_row_norm='auto'``: the public bound on the row norms that the fit found (a DP
    release) and trained with.
""")

N_ITER_ = entry("n_iter_ : int", "Number of epochs run.")

N_STEPS_ = entry("n_steps_ : int", "Number of noisy gradient steps.")

DEVICE_ = entry("device_ : str", "The device the model was trained on.")

N_FEATURES_IN_ = entry("n_features_in_ : int", "Number of features seen during fit.")

FEATURE_NAMES_IN_ = entry("feature_names_in_ : ndarray of shape (n_features_in_,)", """
    Names of features seen during fit, when ``X`` has string column names.
""")
