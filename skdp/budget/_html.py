"""The HTML view of a privacy budget (Jupyter): a bar of spent against total, then the spends."""

from __future__ import annotations

from html import escape

from .._utils.html import fmt, rows_html, wrap_html

__all__ = ["budget_html"]

# Spends listed in a budget's view; longer ledgers show the oldest and the newest ones.
MAX_LISTED_SPENDS = 20


def budget_html(budget) -> str:
    """A :class:`~skdp.budget.PrivacyBudget` as HTML: a bar of the composed epsilon spent
    against the budget's epsilon, then the recorded spends (each one's own epsilon; they
    compose to less than their sum)."""
    try:
        spent_epsilon, delta = budget.spent()
        history = budget.history()
    except Exception as error:  # an unreadable ledger still gets a view, with the reason
        return wrap_html(
            "PrivacyBudget",
            rows_html([("budget", repr(budget)), ("cannot read the ledger", error)]),
        )
    total = float(budget.epsilon)
    fraction = min(max(spent_epsilon / total, 0.0), 1.0) if total > 0 else 1.0
    full = " skdp-full" if fraction >= 0.999 else ""
    bar = (
        f'<div class="skdp-bar" title="{escape(fmt(spent_epsilon))} of {escape(fmt(total))}">'
        f'<div class="{full.strip()}" style="width:{100 * fraction:.1f}%"></div></div>'
    )
    summary = (
        f"<p>spent epsilon {escape(fmt(spent_epsilon))} of {escape(fmt(total))} "
        f"({100 * fraction:.0f}%), remaining {escape(fmt(max(total - spent_epsilon, 0.0)))}, "
        f"at delta {escape(fmt(delta, '.3g'))}; {len(history)} spend(s), composed tightly "
        "(not a sum of epsilons)</p>"
    )
    head = rows_html([
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
            f"<td>{escape(fmt(record.epsilon))}</td>"
            "</tr>"
        )
    spends = (
        "<table><caption>Spends, oldest first</caption><tr><th>#</th><th>when (UTC)</th>"
        "<th>by</th><th>mechanism</th><th>epsilon alone</th></tr>" + "".join(lines) + "</table>"
        if history
        else "<p>no spends recorded yet</p>"
    )
    caption = f"PrivacyBudget(epsilon={fmt(total, 'g')}, delta={fmt(budget.delta, 'g')})"
    return wrap_html(caption, head, bar + summary + spends)
