"""skdp's 'auto' rules and measured defaults, each stated once with its provenance.

Every module here defines the rules of one part of skdp (pure functions of public quantities,
and their constants) and registers them in :data:`registry.RULES`; the documentation's
defaults page is generated from that registry. Importing this package registers them all.
"""

from . import linear, mlp, optimizers, preprocessing, scale, sgd, threads
from .registry import RULES, Rule

__all__ = [
    "RULES", "Rule", "linear", "mlp", "optimizers", "preprocessing", "scale", "sgd", "threads",
]
