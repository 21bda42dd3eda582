"""HTML views for notebooks: the privacy statement of a fit, and the pieces every view is made of.

Jupyter shows an object through ``_repr_html_`` / ``_repr_mimebundle_``. scikit-learn's
estimators already have both (the estimator diagram); :class:`PrivacyReprMixin` keeps that
diagram and, once the estimator is fitted, appends its privacy statement as a compact table.
Unfitted estimators show scikit-learn's HTML unchanged. A pipeline's view
(:mod:`skdp.pipeline._html`) and a budget's bar (:mod:`skdp.budget._html`) are built from the
same pieces.

Everything shown is public or released: the fitted privacy record (``privacy_spent_``,
``noise_multiplier_``, the report) and the ledger's records. Every piece of text is escaped
with :func:`html.escape`.
"""

from __future__ import annotations

import math
import re
from html import escape

__all__ = [
    "PrivacyReprMixin",
    "details_html",
    "fmt",
    "guarantee_text",
    "privacy_html",
    "report_text",
    "rows_html",
    "wrap_html",
]

_STYLE = (
    "<style>"
    ".skdp-privacy{font-family:var(--jp-ui-font-family,sans-serif);font-size:0.9em;"
    "margin:0.4em 0;color:var(--jp-content-font-color1,#222)}"
    ".skdp-privacy table{border-collapse:collapse;margin:0.2em 0}"
    ".skdp-privacy th,.skdp-privacy td{text-align:left;padding:2px 10px 2px 0;"
    "border-bottom:1px solid rgba(128,128,128,0.25);vertical-align:top}"
    ".skdp-privacy th{font-weight:600}"
    ".skdp-privacy caption{text-align:left;font-weight:600;padding-bottom:2px}"
    ".skdp-privacy pre{font-size:0.85em;white-space:pre-wrap;margin:0.3em 0}"
    ".skdp-privacy .skdp-bar{width:100%;max-width:32em;height:14px;"
    "background:rgba(128,128,128,0.2);border-radius:3px;overflow:hidden}"
    ".skdp-privacy .skdp-bar>div{height:100%;background:#4c72b0}"
    ".skdp-privacy .skdp-bar>div.skdp-full{background:#c44e52}"
    "</style>"
)


def fmt(value, spec: str = ".4g") -> str:
    if value is None:
        return "-"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isinf(number):
        return "inf"
    return format(number, spec)


def rows_html(pairs) -> str:
    return "".join(
        f"<tr><th>{escape(str(key))}</th><td>{escape(str(value))}</td></tr>"
        for key, value in pairs
        if value is not None
    )


def report_text(estimator) -> str | None:
    try:
        return estimator.privacy_report()
    except Exception:  # a view must never raise: a broken report shows as missing
        return None


def _report_field(report: str | None, pattern: str) -> str | None:
    if not report:
        return None
    match = re.search(pattern, report)
    return match.group(1).strip() if match else None


def guarantee_text(spent) -> str:
    epsilon, delta = spent
    if not math.isfinite(float(epsilon)):
        return "none: privacy=(inf, 0), no noise"
    return f"({fmt(epsilon)}, {fmt(delta, '.3g')})-DP"


def details_html(report: str | None) -> str:
    if not report:
        return ""
    return (
        "<details><summary>privacy report</summary>"
        f"<pre>{escape(report)}</pre></details>"
    )


def wrap_html(caption: str, rows: str, extra: str = "") -> str:
    return (
        f'{_STYLE}<div class="skdp-privacy"><table><caption>{escape(caption)}</caption>'
        f"{rows}</table>{extra}</div>"
    )


def privacy_html(estimator) -> str:
    """The privacy statement of a fitted skdp estimator or transformer, as an HTML table.

    Rows: estimator, mechanism, the (epsilon, delta) spent, noise multiplier, steps (with batch
    size and epochs), neighbouring relation, accountant; the full ``privacy_report()`` follows
    in a collapsed block. Fields an estimator does not have are left out.
    """
    report = report_text(estimator)
    mechanism = _report_field(report, r"^[^\n]*?, trained with ([^\n]+)")
    if mechanism is None and hasattr(estimator, "_mechanism_name"):
        try:
            mechanism = estimator._mechanism_name()
        except Exception:
            mechanism = None
    relation = _report_field(report, r"neighbouring datasets: ([^;\n]+)")
    steps = getattr(estimator, "n_steps_", None)
    if steps is not None:
        batch = getattr(estimator, "batch_size_", None)
        epochs = getattr(estimator, "n_iter_", None)
        details = []
        if batch is not None:
            details.append(f"batch {batch}")
        if epochs is not None:
            details.append(f"{epochs} epochs")
        steps = f"{steps}" + (f" ({', '.join(details)})" if details else "")
    noise = getattr(estimator, "noise_multiplier_", None)
    rows = rows_html([
        ("estimator", type(estimator).__name__),
        ("mechanism", mechanism),
        ("privacy spent", guarantee_text(estimator.privacy_spent_)),
        ("noise multiplier", None if noise is None else fmt(noise)),
        ("steps", steps),
        ("neighbouring datasets", relation),
        ("accountant", getattr(estimator, "accountant", None)),
        ("device", getattr(estimator, "device_", None)),
    ])
    return wrap_html("Privacy", rows, details_html(report))


def _is_fitted(estimator) -> bool:
    try:
        estimator.privacy_spent_  # noqa: B018
    except AttributeError:
        return False
    return True


def _with_privacy(estimator, html: str) -> str:
    if not _is_fitted(estimator):
        return html
    try:
        table = estimator._privacy_html()
    except Exception:  # never lose scikit-learn's view because of ours
        return html
    return html + table


class PrivacyReprMixin:
    """scikit-learn's HTML view of an estimator, plus the privacy table once it is fitted.

    Put it first among the bases; it extends ``_repr_html_inner`` and ``_repr_mimebundle_`` of
    :class:`sklearn.base.BaseEstimator`, which Jupyter calls (``_repr_html_`` stays scikit-learn's
    property, so ``sklearn.set_config(display='text')`` still turns the HTML off).
    """

    def _privacy_html(self) -> str:
        """The privacy table of the fitted object (a pipeline shows its steps instead)."""
        return privacy_html(self)

    def _repr_html_inner(self):
        return _with_privacy(self, super()._repr_html_inner())

    def _repr_mimebundle_(self, **kwargs):
        output = super()._repr_mimebundle_(**kwargs)
        if "text/html" in output:
            output["text/html"] = _with_privacy(self, output["text/html"])
        return output
