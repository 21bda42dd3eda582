"""The DP estimators' class docstrings, assembled from shared fragments (skdp/_fit/docstrings.py):
each documents exactly its __init__ parameters, in order (numpydoc, or scikit-learn's vendored
copy), every 'auto' parameter links to the defaults page, and the optimizer entry names every
optimizer skdp ships once."""

from __future__ import annotations

import inspect
import re
import warnings

import pytest

from skdp._fit import docstrings
from skdp.linear_model import DPRidge
from skdp.mechanisms._registry import OPTIMIZER_NAMES, optimizer_class
from tests._inventory import ESTIMATORS


def _numpydoc(cls):
    try:
        from numpydoc.docscrape import NumpyDocString
    except ImportError:  # numpydoc is a docs dependency; scikit-learn ships a copy
        from sklearn.externals._numpydoc.docscrape import NumpyDocString
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an unknown section or a malformed entry fails here
        return NumpyDocString(inspect.getdoc(cls))


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_the_assembled_docstrings_document_exactly_the_parameters(estimator):
    # The class docstrings are assembled from shared fragments (skdp/_fit/docstrings.py): each
    # __init__ parameter is documented once, in signature order, and nothing else is.
    doc = _numpydoc(estimator)
    documented = [parameter.name for parameter in doc["Parameters"]]
    signature = [name for name in inspect.signature(estimator.__init__).parameters
                 if name != "self"]
    assert documented == signature
    attributes = [attribute.name for attribute in doc["Attributes"]]
    assert len(attributes) == len(set(attributes))
    for name in ("privacy_spent_", "dp_event_", "noise_multiplier_", "n_iter_", "n_features_in_"):
        assert name in attributes
    for section in ("Parameters", "Attributes"):
        for item in doc[section]:
            assert item.type and item.desc, (section, item.name)
    assert doc["Examples"] and doc["See Also"]


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_every_auto_parameter_links_to_the_defaults_page(estimator):
    # An 'auto' rule is said in words and linked, never restated; device='auto' is no rule.
    doc = _numpydoc(estimator)
    for parameter in doc["Parameters"]:
        ruled = "'auto'" in parameter.type or parameter.name in ("average", "optimizer_params")
        if ruled and parameter.name != "device":
            assert "</user_guide/defaults>" in " ".join(parameter.desc), parameter.name


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_the_optimizer_entry_names_every_optimizer_skdp_ships_once(estimator):
    # One fragment describes the DP-SGD optimizers; DPRidge adds its closed-form 'ssp'.
    shipped = {
        name for name in OPTIMIZER_NAMES
        if (cls := optimizer_class(name)) is not None and cls.__module__.startswith("skdp.")
    }
    assert shipped == set(docstrings.SGD_OPTIMIZERS)
    expected = shipped | ({"ssp"} if estimator is DPRidge else set())
    entry = next(p for p in _numpydoc(estimator)["Parameters"] if p.name == "optimizer")
    assert set(re.findall(r"'(\w+)'", entry.type.split("}")[0])) == expected
    description = " ".join(entry.desc)
    for name in expected:
        assert description.count(f"``'{name}'``:") == 1, name
