"""The HTML view of a fitted private pipeline (Jupyter): the total guarantee, one row per DP
step, then the report."""

from __future__ import annotations

from html import escape

from .._utils.html import details_html, fmt, guarantee_text, report_text, rows_html, wrap_html
from ._layout import iter_dp_steps

__all__ = ["pipeline_privacy_html"]


def pipeline_privacy_html(pipeline) -> str:
    """The privacy statement of a fitted :class:`~skdp.pipeline.PrivatePipeline` as HTML: the
    total guarantee, then one row per DP step (its share and its noise), then the report."""
    report = report_text(pipeline)
    head = rows_html([
        ("pipeline", type(pipeline).__name__),
        ("privacy spent (everything released)", guarantee_text(pipeline.privacy_spent_)),
        ("neighbouring datasets", "add or remove one row"),
        ("preprocessing share", fmt(getattr(pipeline, "preprocessing_share", None), "g")),
    ])
    try:
        steps = list(iter_dp_steps(pipeline, "", fitted=True))
    except Exception:
        steps = []
    body = "".join(
        "<tr>"
        f"<td>{escape(path)}</td><td>{escape(type(step).__name__)}</td>"
        f"<td>{escape(guarantee_text(step.privacy_spent_))}</td>"
        f"<td>{escape(fmt(getattr(step, 'noise_multiplier_', None)))}</td>"
        "</tr>"
        for path, step in steps  # fitted DP steps only (iter_dp_steps skips unfitted branches)
    )
    table = (
        "<table><caption>Steps (each step's own share)</caption>"
        "<tr><th>step</th><th>class</th><th>its share</th><th>noise multiplier</th></tr>"
        f"{body}</table>"
        if body
        else ""
    )
    return wrap_html("Privacy of the pipeline", head, table + details_html(report))
