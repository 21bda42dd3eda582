"""The registry of 'auto' rules: every rule stated once, with constants the code uses and
where they were chosen; the defaults page states them; the task and curvature come from the
loss."""

from __future__ import annotations

import importlib.util
import inspect
import re
from pathlib import Path

import pytest

from skdp._defaults import RULES, linear, sgd
from skdp._defaults.registry import Rule, register
from skdp._engine._losses import OutputLoss
from skdp.linear_model import DPLogisticRegression
from skdp.mechanisms._registry import OPTIMIZER_NAMES, optimizer_class

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_rule_says_what_it_is_and_where_it_comes_from(name):
    rule = RULES[name]
    assert rule.setting and rule.applies_to and len(rule.summary) > 40
    # A rule with constants names every one of them in its statement, and says which script
    # and results chose them (files that exist in the repository).
    for constant in rule.constants:
        if not constant.startswith("DP"):  # per-estimator entries (the MLPs' steps)
            assert constant in rule.summary, f"{name}: {constant} is not in the rule's statement"
    if rule.constants:
        assert rule.provenance
    for path in re.findall(r"(benchmarks/[\w/]+\.py|docs/specs/\w+\.md)", rule.provenance):
        assert (ROOT / path).exists(), f"{name} cites {path}, which is not in the repository"


def test_a_rule_is_registered_once():
    rule = next(iter(RULES.values()))
    register(rule)  # the same rule again: nothing changes
    with pytest.raises(ValueError, match="twice"):
        register(Rule(rule.name, "other", ("X",), "another statement of the same name"))


def test_the_registered_constants_are_the_ones_the_code_uses():
    assert RULES["sgd.batch_size"].constants["PARAM_BATCH_FACTOR"] is sgd.PARAM_BATCH_FACTOR
    assert RULES["linear.eta0.scale_free"].constants["STEP_SCALE"] is linear.STEP_SCALE
    assert DPLogisticRegression._USER_SCALE_DEFAULTS is linear.LOGISTIC_USER_SCALE
    # The rule reads the registered constants: R^2 = 1 + 1 (intercept), logistic curvature 1/4,
    # d = REFERENCE_FEATURES, nu = z sqrt(p) / b = 1 * 10 / 100.
    step = linear.auto_step_size(1.0, True, 1.0, 100, 100, OutputLoss.LOGISTIC, n_features=100)
    assert step == pytest.approx(
        linear.STEP_SCALE["classification"] / (0.25 * 2)
        / (1 + linear.NOISE_DAMPING["classification"] * 0.1), rel=1e-12)


def test_the_task_and_curvature_come_from_the_loss():
    for loss in OutputLoss:
        assert loss.task in ("classification", "regression")
        assert loss.curvature > 0
    assert OutputLoss.SQUARED.task == "regression"
    assert OutputLoss.SOFTMAX.curvature == 0.5


def test_optimizer_traits_are_declared_by_the_optimizers():
    # learning_rate='auto' and eta0='auto' read these attributes, not the optimizer's name.
    traits = {
        name: (cls.auto_learning_rate, cls.auto_step_factor, cls.full_batch_only)
        for name in OPTIMIZER_NAMES if (cls := optimizer_class(name)) is not None
    }
    assert traits["adp_sgd"][0] == "invscaling" and traits["noisy_sgd"][0] == "constant"
    assert traits["diff2"][1:] == (0.5, True)


def test_the_defaults_page_states_every_rule():
    spec = importlib.util.spec_from_file_location(
        "generate_defaults", ROOT / "docs" / "_generate_defaults.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = module.render()
    for rule in RULES.values():
        assert f"### `{rule.setting}`" in page
        for value in rule.constants.values():
            assert repr(value) in page or inspect.isclass(type(value))


def test_docstrings_link_to_the_page_instead_of_restating_the_step_formula():
    # The step formulas are stated once, in the registry; docstrings link to the defaults page.
    for path in (ROOT / "skdp").rglob("*.py"):
        if "_defaults" in path.parts:
            continue
        text = path.read_text()
        for formula in ("1 + 80 z / b", "1 + 120 z / b", "8 sqrt(n_params)"):
            assert formula not in text, (path, formula)
