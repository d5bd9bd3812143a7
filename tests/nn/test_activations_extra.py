"""The further activations: closed-form values from NumPy and gradients by finite
differences (inputs kept away from each function's kinks)."""
import math

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from tests.helpers import check_grad

X = np.array([[-3.7, -1.2, -0.4, 0.3], [0.9, 1.6, 3.4, -2.2]])

EXPECTED = {
    "selu": (lambda x: F.selu(x),
             lambda a: 1.0507009873554805 * np.where(a > 0, a, 1.6732632423543772 *
                                                     (np.exp(a) - 1))),
    "celu": (lambda x: F.celu(x, 0.5), lambda a: np.where(a > 0, a, 0.5 * (np.exp(a / 0.5) - 1))),
    "hardsigmoid": (lambda x: F.hardsigmoid(x), lambda a: np.clip(a + 3, 0, 6) / 6),
    "hardswish": (lambda x: F.hardswish(x), lambda a: a * np.clip(a + 3, 0, 6) / 6),
    "logsigmoid": (lambda x: F.logsigmoid(x), lambda a: -np.log1p(np.exp(-a))),
    "softmin": (lambda x: F.softmin(x, 1),
                lambda a: np.exp(-a) / np.exp(-a).sum(1, keepdims=True)),
    "softsign": (lambda x: F.softsign(x), lambda a: a / (1 + np.abs(a))),
    "tanhshrink": (lambda x: F.tanhshrink(x), lambda a: a - np.tanh(a)),
    "threshold": (lambda x: F.threshold(x, 0.5, -9.0), lambda a: np.where(a > 0.5, a, -9.0)),
    "glu": (lambda x: F.glu(x, 1), lambda a: a[:, :2] / (1 + np.exp(-a[:, 2:]))),
    "hardshrink": (lambda x: F.hardshrink(x, 1.0), lambda a: np.where(np.abs(a) > 1, a, 0)),
    "softshrink": (lambda x: F.softshrink(x, 1.0),
                   lambda a: np.sign(a) * np.maximum(np.abs(a) - 1, 0)),
    "rrelu_eval": (lambda x: F.rrelu(x, 0.1, 0.3), lambda a: np.where(a >= 0, a, 0.2 * a)),
    "prelu": (lambda x: F.prelu(x, ember.tensor([0.1, 0.2, 0.3, 0.4], dtype=ember.float64)),
              lambda a: np.where(a > 0, a, a * np.array([0.1, 0.2, 0.3, 0.4]))),
}


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_values_and_gradients(case):
    fn, reference = EXPECTED[case]
    x = X
    got = fn(ember.tensor(x)).numpy()
    np.testing.assert_allclose(got, reference(x), rtol=1e-12, atol=1e-12)
    check_grad(fn, x)


def test_prelu_module_learns_its_slope():
    m = nn.PReLU(2, init=0.5).double()
    assert m.weight.tolist() == [0.5, 0.5] and repr(m) == "PReLU(num_parameters=2)"
    x = ember.tensor([[-1.0, -2.0], [3.0, -4.0]], dtype=ember.float64)
    m(x).sum().backward()
    np.testing.assert_allclose(m.weight.grad.numpy(), [-1.0, -6.0])


def test_logsigmoid_stays_finite():
    out = F.logsigmoid(ember.tensor([-1000.0, 1000.0]))
    np.testing.assert_allclose(out.numpy(), [-1000.0, 0.0])


def test_inplace_forms_write_the_input():
    x = ember.tensor([-1.0, 2.0])
    assert nn.SELU(inplace=True)(x) is x
    np.testing.assert_allclose(x.numpy(), [1.0507009873554805 * 1.6732632423543772 *
                                           (math.exp(-1) - 1), 2 * 1.0507009873554805],
                               rtol=1e-6)
