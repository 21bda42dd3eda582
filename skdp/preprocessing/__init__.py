"""Preprocessing under differential privacy: scaling, encoding and imputation whose learned
statistics are released through accounted DP mechanisms.

Each transformer works on its own (``privacy=(epsilon, delta)``, ``budget=``) or as a step of
:func:`skdp.pipeline.make_private_pipeline`, which splits one privacy budget among all its
steps and the model.
"""

from ._encoder import DPOneHotEncoder
from ._imputer import DPSimpleImputer
from ._scaler import DPStandardScaler

__all__ = ["DPOneHotEncoder", "DPSimpleImputer", "DPStandardScaler"]
