"""Private pipelines: preprocessing and model under one privacy budget.

:func:`make_private_pipeline` builds a :class:`PrivatePipeline`, a scikit-learn ``Pipeline``
whose DP steps share one ``privacy=(epsilon, delta)``, split by a public rule, composed
exactly and charged to a budget once; any step that would learn from the data without DP is
refused before the data is read.
"""

from ._layout import NotPrivateError
from ._pipeline import PrivatePipeline, make_private_pipeline

__all__ = ["NotPrivateError", "PrivatePipeline", "make_private_pipeline"]
