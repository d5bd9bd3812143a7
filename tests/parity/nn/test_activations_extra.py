"""The further activations (PReLU, SELU, Hardswish, Hardsigmoid, LogSigmoid, Softmin, CELU,
Softsign, Tanhshrink, Threshold, GLU, Hardshrink, Softshrink, RReLU) vs PyTorch: modules
and F functions, values and gradients of inputs and parameters, repr, init, errors."""
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn as enn
import ember.nn.functional as EF
from tests.parity.compare import compare, error_of
from tests.parity.nn.test_layers import FLOATS, compare_module, randn

# (constructor args) -> module class name; inputs avoid the kinks of each function
MODULES = [
    ("PReLU", ()), ("PReLU", (6, 0.1)), ("SELU", ()), ("Hardswish", ()), ("Hardsigmoid", ()),
    ("LogSigmoid", ()), ("Softmin", (1,)), ("CELU", (0.7,)), ("Softsign", ()),
    ("Tanhshrink", ()), ("Threshold", (0.1, -2.0)), ("GLU", (1,)), ("Hardshrink", (0.3,)),
    ("Softshrink", (0.4,)), ("RReLU", (0.1, 0.3)),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,args", MODULES, ids=lambda v: str(v))
def test_module_forward_backward(name, args, dtype):
    t_mod, e_mod = getattr(torch.nn, name)(*args), getattr(enn, name)(*args)
    t_mod.eval(), e_mod.eval()
    x = randn((4, 6, 5), dtype, seed=3, scale=3.0)
    compare_module(t_mod, e_mod, x)


@pytest.mark.parametrize("name,args", MODULES, ids=lambda v: str(v))
def test_module_repr(name, args):
    assert repr(getattr(enn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


@pytest.mark.parametrize("name", ["SELU", "CELU", "Threshold", "RReLU", "Hardswish",
                                  "Hardsigmoid"])
def test_inplace_reprs_and_results(name):
    args = (0.2, 5.0) if name == "Threshold" else ()
    t_mod = getattr(torch.nn, name)(*args, inplace=True).eval()
    e_mod = getattr(enn, name)(*args, inplace=True).eval()
    assert repr(e_mod) == repr(t_mod)
    x = randn((3, 4), np.float64, seed=4, scale=3.0)
    tx, ex = torch.tensor(x), ember.tensor(x)
    assert e_mod(ex) is ex
    t_mod(tx)
    np.testing.assert_allclose(ex.numpy(), tx.numpy(), rtol=1e-12)


def test_inplace_functions_keep_gradients():
    x = randn((3, 4), np.float64, seed=5, scale=3.0)

    def fn(lib, x):
        F = TF if lib is torch else EF
        y = x * 1.0
        F.selu_(y)
        z = x * 2.0
        F.celu_(z, 0.5)
        w = x + 0.0
        F.threshold_(w, 0.3, 7.0)
        v = x - 0.0
        F.rrelu_(v, 0.2, 0.4)
        return y + z + w + v
    compare(fn, x)


FUNCTIONS = {
    "selu": lambda F, x: F.selu(x),
    "celu": lambda F, x: F.celu(x, alpha=2.0),
    "hardswish": lambda F, x: F.hardswish(x),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "logsigmoid_far": lambda F, x: F.logsigmoid(x * 40.0),
    "softmin": lambda F, x: F.softmin(x, dim=-1),
    "softmin_dtype": lambda F, x: F.softmin(x, 0, dtype=(torch if F is TF else ember).float64),
    "softsign": lambda F, x: F.softsign(x),
    "tanhshrink": lambda F, x: F.tanhshrink(x),
    "threshold": lambda F, x: F.threshold(x, 0.5, 10.0),
    "glu": lambda F, x: F.glu(x, 0),
    "glu_last": lambda F, x: F.glu(x),
    "hardshrink": lambda F, x: F.hardshrink(x, 1.0),
    "softshrink": lambda F, x: F.softshrink(x, 0.7),
    "rrelu_eval": lambda F, x: F.rrelu(x, 0.2, 0.5),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", sorted(FUNCTIONS))
def test_functions(case, dtype):
    x = randn((4, 6), dtype, seed=6, scale=3.0)
    compare(lambda lib, x: FUNCTIONS[case](TF if lib is torch else EF, x), x)
    compare(lambda lib, x: FUNCTIONS[case](TF if lib is torch else EF, x), x, noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", ["threshold", "hardshrink", "softshrink", "celu", "selu",
                                  "hardswish", "hardsigmoid", "logsigmoid", "softsign",
                                  "tanhshrink"])
def test_functions_of_nan_and_infinities(case, dtype):
    # NaN stays NaN through every comparison-based branch; forward values only
    x = np.array([np.nan, -np.inf, np.inf, 0.0, -0.0, 0.5, 2.0], dtype)
    extra = {"celu": lambda F, x: F.celu(x), "selu": lambda F, x: F.selu(x),
             "hardswish": lambda F, x: F.hardswish(x),
             "hardsigmoid": lambda F, x: F.hardsigmoid(x)}
    fn = extra.get(case, FUNCTIONS.get(case))
    compare(lambda lib, x: fn(TF if lib is torch else EF, x), x, grad=False)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,wshape", [((4, 3, 5), (3,)), ((4, 3), (1,)), ((5,), (1,)),
                                          ((2, 3, 2, 2), (3,)), ((), (1,))], ids=str)
def test_prelu_function(shape, wshape, dtype):
    x = randn(shape, dtype, seed=7, scale=2.0)
    w = randn(wshape, dtype, seed=8)
    compare(lambda lib, x, w: (TF if lib is torch else EF).prelu(x, w), x, w)


def test_prelu_init_and_parameters():
    t_mod, e_mod = torch.nn.PReLU(4, init=0.3), enn.PReLU(4, init=0.3)
    assert [(n, tuple(p.shape)) for n, p in e_mod.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t_mod.named_parameters()]
    np.testing.assert_array_equal(e_mod.weight.detach().numpy(), t_mod.weight.detach().numpy())
    assert e_mod.weight.dtype == ember.float32


def test_rrelu_training_draws_slopes_within_bounds():
    ember.manual_seed(0)
    x = -ember.rand(1000) - 0.1
    m = enn.RReLU(0.1, 0.3)
    ember.manual_seed(1)
    slopes = (m(x) / x).numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03
    ember.manual_seed(1)
    np.testing.assert_array_equal((m(x) / x).numpy(), slopes)  # ember's generator drives it
    xr = ember.tensor(-np.linspace(0.5, 2.0, 50), requires_grad=True)
    y = EF.rrelu(xr, 0.1, 0.3, training=True)
    y.sum().backward()
    np.testing.assert_allclose(xr.grad.numpy(), (y / xr).detach().numpy(), rtol=1e-12)
    pos = ember.rand(10)
    np.testing.assert_array_equal(m(pos).numpy(), pos.numpy())


ERRORS = {
    "glu_odd": lambda lib, F: F.glu(lib.zeros(2, 3), 1),
    "glu_scalar": lambda lib, F: F.glu(lib.tensor(1.0)),
    "glu_dim": lambda lib, F: F.glu(lib.zeros(2, 4), 3),
    "softshrink_negative": lambda lib, F: F.softshrink(lib.zeros(3), -0.1),
    "softshrink_negative64": lambda lib, F: F.softshrink(lib.zeros(3, dtype=lib.float64), -1),
    "prelu_channels": lambda lib, F: F.prelu(lib.zeros(2, 3), lib.zeros(2)),
    "prelu_1d": lambda lib, F: F.prelu(lib.zeros(3), lib.zeros(3)),
    "prelu_2d_weight": lambda lib, F: F.prelu(lib.zeros(2, 3), lib.zeros(1, 3)),
    "rrelu_bounds": lambda lib, F: F.rrelu(lib.zeros(3), 0.5, 0.1),
    "celu_zero": lambda lib, F: F.celu(lib.zeros(3), 0.0),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match(case):
    t_err = error_of(lambda: ERRORS[case](torch, TF))
    e_err = error_of(lambda: ERRORS[case](ember, EF))
    assert t_err is not None and e_err == t_err


def test_softmin_implicit_dim_warns_as_torch():
    msgs = []
    for lib, F in ((torch, TF), (ember, EF)):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            F.softmin(lib.zeros(2, 3))
        msgs.append([str(w.message) for w in rec])
    assert msgs[0] == msgs[1] and msgs[0]
