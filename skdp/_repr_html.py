"""HTML views for notebooks: the privacy statement of a fit, of a pipeline, and a budget's bar.

Jupyter shows an object through ``_repr_html_`` / ``_repr_mimebundle_``. scikit-learn's
estimators already have both (the estimator diagram); :class:`PrivacyReprMixin` keeps that
diagram and, once the estimator is fitted, appends its privacy statement as a compact table.
Unfitted estimators show scikit-learn's HTML unchanged. :func:`budget_html` draws a
:class:`~skdp.budget.PrivacyBudget` as a bar of spent against total with its spends listed.

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
    "budget_html",
    "pipeline_privacy_html",
    "privacy_html",
]

# Spends listed in a budget's view; longer ledgers show the oldest and the newest ones.
MAX_LISTED_SPENDS = 20

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


def _fmt(value, spec: str = ".4g") -> str:
    if value is None:
        return "-"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isinf(number):
        return "inf"
    return format(number, spec)


def _rows(pairs) -> str:
    return "".join(
        f"<tr><th>{escape(str(key))}</th><td>{escape(str(value))}</td></tr>"
        for key, value in pairs
        if value is not None
    )


def _report_text(estimator) -> str | None:
    try:
        return estimator.privacy_report()
    except Exception:  # a view must never raise: a broken report shows as missing
        return None


def _report_field(report: str | None, pattern: str) -> str | None:
    if not report:
        return None
    match = re.search(pattern, report)
    return match.group(1).strip() if match else None


def _guarantee(spent) -> str:
    epsilon, delta = spent
    if not math.isfinite(float(epsilon)):
        return "none: privacy=(inf, 0), no noise"
    return f"({_fmt(epsilon)}, {_fmt(delta, '.3g')})-DP"


def _details(report: str | None) -> str:
    if not report:
        return ""
    return (
        "<details><summary>privacy report</summary>"
        f"<pre>{escape(report)}</pre></details>"
    )


def _wrap(caption: str, rows: str, extra: str = "") -> str:
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
    report = _report_text(estimator)
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
    rows = _rows([
        ("estimator", type(estimator).__name__),
        ("mechanism", mechanism),
        ("privacy spent", _guarantee(estimator.privacy_spent_)),
        ("noise multiplier", None if noise is None else _fmt(noise)),
        ("steps", steps),
        ("neighbouring datasets", relation),
        ("accountant", getattr(estimator, "accountant", None)),
        ("device", getattr(estimator, "device_", None)),
    ])
    return _wrap("Privacy", rows, _details(report))


def pipeline_privacy_html(pipeline) -> str:
    """The privacy statement of a fitted :class:`~skdp.pipeline.PrivatePipeline` as HTML: the
    total guarantee, then one row per DP step (its share and its noise), then the report."""
    from .pipeline._layout import iter_dp_steps

    report = _report_text(pipeline)
    head = _rows([
        ("pipeline", type(pipeline).__name__),
        ("privacy spent (everything released)", _guarantee(pipeline.privacy_spent_)),
        ("neighbouring datasets", "add or remove one row"),
        ("preprocessing share", _fmt(getattr(pipeline, "preprocessing_share", None), "g")),
    ])
    try:
        steps = list(iter_dp_steps(pipeline, "", fitted=True))
    except Exception:
        steps = []
    body = "".join(
        "<tr>"
        f"<td>{escape(path)}</td><td>{escape(type(step).__name__)}</td>"
        f"<td>{escape(_guarantee(step.privacy_spent_))}</td>"
        f"<td>{escape(_fmt(getattr(step, 'noise_multiplier_', None)))}</td>"
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
    return _wrap("Privacy of the pipeline", head, table + _details(report))


def budget_html(budget) -> str:
    """A :class:`~skdp.budget.PrivacyBudget` as HTML: a bar of the composed epsilon spent
    against the budget's epsilon, then the recorded spends (each one's own epsilon; they
    compose to less than their sum)."""
    try:
        spent_epsilon, delta = budget.spent()
        history = budget.history()
    except Exception as error:  # an unreadable ledger still gets a view, with the reason
        return _wrap(
            "PrivacyBudget", _rows([("budget", repr(budget)), ("cannot read the ledger", error)])
        )
    total = float(budget.epsilon)
    fraction = min(max(spent_epsilon / total, 0.0), 1.0) if total > 0 else 1.0
    full = " skdp-full" if fraction >= 0.999 else ""
    bar = (
        f'<div class="skdp-bar" title="{escape(_fmt(spent_epsilon))} of {escape(_fmt(total))}">'
        f'<div class="{full.strip()}" style="width:{100 * fraction:.1f}%"></div></div>'
    )
    summary = (
        f"<p>spent epsilon {escape(_fmt(spent_epsilon))} of {escape(_fmt(total))} "
        f"({100 * fraction:.0f}%), remaining {escape(_fmt(max(total - spent_epsilon, 0.0)))}, "
        f"at delta {escape(_fmt(delta, '.3g'))}; {len(history)} spend(s), composed tightly "
        "(not a sum of epsilons)</p>"
    )
    head = _rows([
        ("ledger", getattr(budget, "path", None)),
        ("neighbouring datasets", getattr(budget.neighboring_relation, "value", None)),
    ])
    listed = history
    skipped = 0
    if len(history) > MAX_LISTED_SPENDS:
        half = MAX_LISTED_SPENDS // 2
        listed = history[:half] + history[-half:]
        skipped = len(history) - len(listed)
    lines = []
    for i, record in enumerate(listed):
        if skipped and i == MAX_LISTED_SPENDS // 2:
            lines.append(f'<tr><td colspan="5">... {skipped} more spend(s) ...</td></tr>')
        lines.append(
            "<tr>"
            f"<td>{escape(str(record.id))}</td><td>{escape(str(record.timestamp))}</td>"
            f"<td>{escape(str(record.estimator))}</td><td>{escape(str(record.mechanism))}</td>"
            f"<td>{escape(_fmt(record.epsilon))}</td>"
            "</tr>"
        )
    spends = (
        "<table><caption>Spends, oldest first</caption><tr><th>#</th><th>when (UTC)</th>"
        "<th>by</th><th>mechanism</th><th>epsilon alone</th></tr>" + "".join(lines) + "</table>"
        if history
        else "<p>no spends recorded yet</p>"
    )
    caption = f"PrivacyBudget(epsilon={_fmt(total, 'g')}, delta={_fmt(budget.delta, 'g')})"
    return _wrap(caption, head, bar + summary + spends)


def _is_fitted(estimator) -> bool:
    try:
        estimator.privacy_spent_  # noqa: B018
    except AttributeError:
        return False
    return True


def _with_privacy(estimator, html: str) -> str:
    if not _is_fitted(estimator):
        return html
    from .pipeline import PrivatePipeline

    try:
        table = (
            pipeline_privacy_html(estimator)
            if isinstance(estimator, PrivatePipeline)
            else privacy_html(estimator)
        )
    except Exception:  # never lose scikit-learn's view because of ours
        return html
    return html + table


class PrivacyReprMixin:
    """scikit-learn's HTML view of an estimator, plus the privacy table once it is fitted.

    Put it first among the bases; it extends ``_repr_html_inner`` and ``_repr_mimebundle_`` of
    :class:`sklearn.base.BaseEstimator`, which Jupyter calls (``_repr_html_`` stays scikit-learn's
    property, so ``sklearn.set_config(display='text')`` still turns the HTML off).
    """

    def _repr_html_inner(self):
        return _with_privacy(self, super()._repr_html_inner())

    def _repr_mimebundle_(self, **kwargs):
        output = super()._repr_mimebundle_(**kwargs)
        if "text/html" in output:
            output["text/html"] = _with_privacy(self, output["text/html"])
        return output
