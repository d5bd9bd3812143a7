"""``alpha`` of add/sub and ``value`` of addcmul/addcdiv (and their in-place forms): a 0-d
tensor or a NumPy scalar is read as a Python number, as PyTorch does; other types, a bool
or float alpha for the wrong kind of result, raise PyTorch's error (the in-place form named)."""
import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import error_of

X = np.array([1.0, -2.0, 3.0], dtype=np.float32)
Y = np.array([0.5, 4.0, -1.5], dtype=np.float32)


def _calls(L):
    x, y = L.tensor(X), L.tensor(Y)
    half = L.tensor(0.5)
    return {
        "add": lambda: L.add(x, y, alpha=half),
        "add_int_tensor_alpha": lambda: L.add(x, y, alpha=L.tensor(3)),
        "add_numpy_alpha": lambda: L.add(x, y, alpha=np.float64(2.0)),
        "add_method": lambda: x.add(y, alpha=half),
        "add_": lambda: x.clone().add_(y, alpha=half),
        "add_scalar_other": lambda: x.clone().add_(2, alpha=half),
        "sub": lambda: L.sub(x, y, alpha=half),
        "sub_": lambda: x.clone().sub_(y, alpha=half),
        "addcmul": lambda: L.addcmul(x, x, y, value=half),
        "addcmul_": lambda: x.clone().addcmul_(x, y, value=half),
        "addcmul_numpy": lambda: x.clone().addcmul_(x, y, value=np.float32(2.0)),
        "addcdiv": lambda: L.addcdiv(x, x, y, value=half),
        "addcdiv_": lambda: x.clone().addcdiv_(x, y, value=half),
        # errors
        "add_one_element_alpha": lambda: L.add(x, y, alpha=L.tensor([2.0])),
        "add__one_element_alpha": lambda: x.clone().add_(y, alpha=L.tensor([2.0])),
        "add_str_alpha": lambda: L.add(x, y, alpha="a"),
        "addcmul__str_value": lambda: x.clone().addcmul_(x, y, value="a"),
        "addcdiv_tensor_value": lambda: L.addcdiv(x, x, y, value=L.ones(3)),
        "add_bool_alpha": lambda: L.add(x, y, alpha=True),
        "add_float_alpha_ints": lambda: L.add(L.tensor([1, 2]), L.tensor([1, 2]), alpha=1.5),
        "add_float_tensor_alpha_ints": lambda: L.add(L.tensor([1, 2]), 3, alpha=L.tensor(1.5)),
        "sub_float_alpha_ints": lambda: L.tensor([1, 2]).sub_(1, alpha=0.5),
        "add_complex_alpha": lambda: L.add(x, y, alpha=1j),
        "add_bools": lambda: L.add(L.tensor([True]), L.tensor([False]), alpha=True),
        "add_ints_int_alpha": lambda: L.add(L.tensor([1, 2]), L.tensor([3, 4]), alpha=-2),
    }


@pytest.mark.parametrize("name", sorted(_calls(torch)))
def test_matches_torch(name):
    expected_call, got_call = _calls(torch)[name], _calls(ember)[name]
    expected = error_of(expected_call)
    if expected is not None:
        assert error_of(got_call) == expected
        return
    t, e = expected_call(), got_call()
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


def test_tensor_alpha_that_requires_grad_is_refused():
    def call(lib):
        x = lib.tensor(X, requires_grad=True)
        return lib.add(x, x, alpha=lib.tensor(2.0, requires_grad=True))
    expected = error_of(lambda: call(torch))
    assert expected is not None and error_of(lambda: call(ember)) == expected
