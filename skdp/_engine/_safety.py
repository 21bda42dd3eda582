"""Safety factors shared by every clipping kernel."""

__all__ = ["CLIP_SAFETY"]

# Clip to a hair below the bound so that float32 rounding of the norm can never push a clipped
# contribution above the sensitivity the accountant assumes.
CLIP_SAFETY = 1.0 - 1e-5
