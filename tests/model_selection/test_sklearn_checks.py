"""scikit-learn's common checks on the private searches (slow: every check runs a search).

Like scikit-learn's own tests of GridSearchCV, the searches are checked as instances built with
a parameter grid. The regressor gets a large epsilon: the checks test the API, and their
accuracy thresholds on tiny data sets are not about privacy.
"""

import warnings

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp import PrivacyWarning
from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.model_selection import DPGridSearchCV, DPRandomizedSearchCV


@pytest.mark.slow
@parametrize_with_checks([
    DPGridSearchCV(DPLogisticRegression(max_iter=2), {"eta0": [0.5, 1.0]}, n_iter=2,
                   random_state=0),
    DPRandomizedSearchCV(DPRidge(max_iter=5, max_row_norm=None), {"eta0": [0.1, 0.5]}, n_iter=2,
                         privacy=(20.0, 1e-5), random_state=0),
])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        # The generic checks use tiny data sets; the delta-vs-n warning is expected there.
        warnings.simplefilter("ignore", PrivacyWarning)
        check(estimator)
