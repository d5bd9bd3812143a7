"""Every example in ember's docstrings runs and prints what it shows."""
import doctest
import importlib
import pkgutil
import warnings

import pytest

import ember

MODULES = sorted(m.name for m in pkgutil.walk_packages(ember.__path__, "ember.")
                 if ".examples" not in m.name)


# modules whose examples need an optional package
NEEDS = {"ember.onnx": "onnx",
         **{m: "tensorboard" for m in MODULES if m.startswith("ember.utils.tensorboard")}}


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    if name in NEEDS:
        pytest.importorskip(NEEDS[name])
    module = importlib.import_module(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # examples may enable modes that warn (anomaly)
        result = doctest.testmod(module, report=True, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"
