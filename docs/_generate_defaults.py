"""Write the user guide's defaults page from skdp's registry of 'auto' rules.

Run by ``docs/conf.py`` before every build (and by hand: ``python docs/_generate_defaults.py``),
so the page always states the rules and constants the code uses; the page is not committed.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAGE = HERE / "user_guide" / "defaults.md"

INTRO = """\
# Defaults

Every `'auto'` setting of skdp is a rule of public quantities only: the number of rows `n`, the
number of features or parameters, `epsilon` and `delta`, the calibrated noise multiplier `z`,
the expected batch size `b`, and public bounds. None reads the values of your data, so none
costs privacy (the scale search of `max_row_norm='auto'` is a DP mechanism of its own, accounted
in the fit's guarantee). Each rule's constants were chosen by a benchmark script, leaving data
sets out, and checked on data that took part in no choice; the scripts and their stored results
are in the repository's `benchmarks/` folder.

This page is generated from the rules' registry (`skdp/_defaults/`) each time the documentation
is built, so it states exactly what the code does.
"""


def _value(value) -> str:
    if hasattr(value, "__dataclass_fields__"):
        return ", ".join(f"{name}={getattr(value, name)!r}" for name in value.__dataclass_fields__)
    return repr(value)


def render() -> str:
    sys.path.insert(0, str(HERE.parent))
    from skdp._defaults import RULES

    parts = [INTRO]
    sections: dict[str, list] = {}
    for rule in RULES.values():
        sections.setdefault(rule.name.split(".")[0], []).append(rule)
    titles = {
        "sgd": "Every DP-SGD estimator", "linear": "Linear models", "mlp": "Neural networks",
        "scale": "The scale search (`max_row_norm='auto'`)", "optimizer": "Optimizer parameters",
        "preprocessing": "DP preprocessing", "pipeline": "Private pipelines",
    }
    order = ["sgd", "linear", "mlp", "scale", "optimizer", "preprocessing", "pipeline"]
    for key in sorted(sections, key=lambda k: order.index(k) if k in order else len(order)):
        rules = sections[key]
        parts.append(f"## {titles.get(key, key)}\n")
        for rule in rules:
            parts.append(f"### `{rule.setting}`\n")
            parts.append(f"*{', '.join(rule.applies_to)}*\n")
            parts.append(rule.summary + "\n")
            if rule.constants:
                parts.append("| constant | value |\n|---|---|")
                parts += [f"| `{name}` | `{_value(value)}` |"
                          for name, value in rule.constants.items()]
                parts.append("")
            if rule.provenance:
                parts.append(f"Chosen by: {rule.provenance}.\n")
            if rule.code:
                parts.append(f"Code: `{rule.code}`.\n")
    return "\n".join(parts).rstrip() + "\n"


def write() -> Path:
    PAGE.write_text(render())
    return PAGE


if __name__ == "__main__":
    print(f"wrote {write()}")
